/* Schedule blocks of DSL ops: a template written next to the tensor expression
 * (docs/dsl.md section 11; AutoTVM's define_split / define_reorder / define_annotate /
 * define_knob and the steps that use them). The parser reads and checks a block with
 * its op (tsl_dsl_parse): names, knob kinds and every use of each knob; what needs the
 * shapes (divisors, extents, whether a step applies) is checked by the template
 * (ops/user/user_template.h), with errors located through tsl_dsl_error_at.
 *
 * The structures are read-only views into the module: valid while it lives.
 */
#ifndef TESSEL_DSL_SCHED_BLOCK_H
#define TESSEL_DSL_SCHED_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/parser.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsl_dsl_knob_kind {
  TSL_DSL_KNOB_SPLIT = 0,    /* knob t = split(stage, axis [, [v, ...]] [, max = N] [, divide = false]) */
  TSL_DSL_KNOB_REORDER = 1,  /* knob o = reorder([a, b, ...], [b, a, ...], ...): the index of an order */
  TSL_DSL_KNOB_ANNOTATE = 2, /* knob v = annotate(vectorize [, unroll, parallel]): 0 none, i the i-th */
  TSL_DSL_KNOB_LIST = 3      /* knob u = [v, ...]: any integers */
} tsl_dsl_knob_kind;

typedef struct tsl_dsl_knob {
  const char *name;
  int line, col;
  tsl_dsl_knob_kind kind;
  const char *stage, *axis; /* split: a stage of the op and one of its axes or reduction variables */
  bool divide;              /* split: every candidate must divide the axis' extent (default true) */
  int64_t max;              /* split: largest candidate; 0 = the extent */
  int nvalues;              /* split from a list, list: the candidates as written (split by the
                               divisors: 0) */
  const int64_t *values;
  int norders, order_len;   /* reorder: norders orders of order_len axis names each */
  const char *const *orders;
  int nannots;              /* annotate: the primitives ("vectorize", "unroll", "parallel") */
  const char *const *annots;
} tsl_dsl_knob;

typedef enum tsl_dsl_arg_kind { TSL_DSL_ARG_NAME = 0, TSL_DSL_ARG_INT = 1, TSL_DSL_ARG_KNOB = 2 } tsl_dsl_arg_kind;

typedef struct tsl_dsl_sched_arg {
  tsl_dsl_arg_kind kind;
  const char *name; /* NAME: a stage, axis ("i.outer"), tensor or scope */
  int64_t value;    /* INT */
  int knob;         /* KNOB: index into the block's knobs */
  bool nparts;      /* split(s, x, nparts = N) */
  int line, col;
} tsl_dsl_sched_arg;

/* primitive(args...) [if knob]: a schedule step of schedule.h's text form, or the pseudo
 * step annotate(stage, axis, knob) that applies the annotation the knob chooses. */
typedef struct tsl_dsl_sched_step {
  const char *primitive;
  int line, col;
  int nargs;
  const tsl_dsl_sched_arg *args;
  int cond_knob; /* -1: always; else applied when that knob's value is not 0 */
  const char *cond_name; /* the knob after 'if' as written (NULL without one) */
  int cond_line, cond_col;
} tsl_dsl_sched_step;

typedef struct tsl_dsl_schedule {
  int nknobs;
  const tsl_dsl_knob *knobs;
  int nsteps;
  const tsl_dsl_sched_step *steps;
} tsl_dsl_schedule;

/* The schedule block of def; NULL when it has none. */
const tsl_dsl_schedule *tsl_dsl_op_schedule(const tsl_dsl_op *def);

/* Records an error at line:col of def's source in the DSL's form ("FILE:L:C: error: MSG",
 * the line, a caret) and returns st. */
tsl_status tsl_dsl_error_at(const tsl_dsl_op *def, tsl_status st, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#ifdef __cplusplus
}
#endif
#endif
