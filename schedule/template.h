/* Schedule templates with knobs: the one interface every schedule template is adapted
 * to, so the tuner can search any of them (AutoTVM's ConfigSpace/ConfigEntity model).
 *
 * A template schedules one operator (a registry name, ops/registry.h). For a given
 * program and target it defines a config space: an ordered list of knobs, each a name,
 * an entity kind (TVM's "sp" split sizes, "re" reorder choices, "an" annotations, "ot"
 * other) and the candidate int64 values (bools are 0/1, choices are indices). A config
 * is one value per knob, in the space's knob order; the space is the cartesian product
 * of the candidate lists, so a config also has a mixed-radix index (the first knob
 * varies slowest). apply(program, target, space, config) builds the schedule.
 *
 * The space hash (tsl_space_hash) covers the template's name and version, the operator
 * and every knob's name, kind and candidate values: a record made for one space is
 * never applied to another (a changed template bumps its version).
 *
 * Registry: templates are registered by name (tsl_template_register), a name being
 * "OP.VARIANT" with OP the template's operator, written out as one literal in the source
 * so a name read in a records file is found with grep; the library registers every
 * built-in template in one place (ops/algorithm.h, tsl_tuner_register_templates) and
 * tests may register their own.
 *
 * A space is a plain value (fixed-size arrays, about 16 KiB): copy it freely.
 */
#ifndef TESSEL_SCHEDULE_TEMPLATE_H
#define TESSEL_SCHEDULE_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsl/te.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_MAX_KNOBS 24
#define TSL_MAX_KNOB_VALUES 64
#define TSL_KNOB_NAME_LEN 32

typedef enum tsl_knob_kind {
  TSL_KNOB_SPLIT = 0,    /* "sp": a tile or block size */
  TSL_KNOB_REORDER = 1,  /* "re": a loop-order choice (index) */
  TSL_KNOB_ANNOTATE = 2, /* "an": vectorize / unroll / parallel / pack: 0 off, 1 on, or
                            which loop when a template has several (Winograd's parallel:
                            0 none, 1 blocks, 2 channels) */
  TSL_KNOB_OTHER = 3     /* "ot": anything else */
} tsl_knob_kind;

/* TVM's entity tag of a kind ("sp", "re", "an", "ot"); NULL for an unknown kind. */
const char *tsl_knob_kind_tag(tsl_knob_kind k);
/* The kind of a tag; false when unknown. */
bool tsl_knob_kind_parse(const char *tag, tsl_knob_kind *out);

typedef struct tsl_knob {
  char name[TSL_KNOB_NAME_LEN];
  tsl_knob_kind kind;
  int nvalues;                          /* 1..TSL_MAX_KNOB_VALUES */
  int64_t values[TSL_MAX_KNOB_VALUES]; /* distinct candidates, ascending */
} tsl_knob;

typedef struct tsl_config_space {
  int nknobs;
  tsl_knob knobs[TSL_MAX_KNOBS];
} tsl_config_space;

/* One value per knob of a space, in the space's order. */
typedef struct tsl_config {
  int nknobs;
  int64_t values[TSL_MAX_KNOBS];
} tsl_config;

/* Adds a knob with n candidate values (copied, sorted, duplicates dropped).
 * Errors: TSL_ERR_INVALID (NULL arguments, empty or over-long name, a name already in
 * the space, n outside 1..TSL_MAX_KNOB_VALUES, unknown kind, TSL_MAX_KNOBS reached). */
tsl_status tsl_space_add_knob(tsl_config_space *s, const char *name, tsl_knob_kind kind, int n, const int64_t *values);

/* Index of knob `name`, -1 when absent. */
int tsl_space_knob_index(const tsl_config_space *s, const char *name);

/* Number of configs (product of the candidate counts), saturating at INT64_MAX; 1 for
 * a space without knobs. */
int64_t tsl_space_size(const tsl_config_space *s);

/* FNV-1a (64-bit) of the template name and version, the operator name and every knob
 * (name, kind, values), in order. */
uint64_t tsl_space_hash(const char *template_name, int template_version, const char *op, const tsl_config_space *s);

/* The config at mixed-radix index idx (0 <= idx < size; the first knob slowest).
 * Errors: TSL_ERR_INVALID for an index out of range. */
tsl_status tsl_config_from_index(const tsl_config_space *s, int64_t idx, tsl_config *out);

/* The index of c, or -1 when c is not a point of s (wrong knob count or a value that
 * is not a candidate). */
int64_t tsl_config_index(const tsl_config_space *s, const tsl_config *c);

/* TSL_OK when c is a point of s; else TSL_ERR_INVALID naming the knob and value. */
tsl_status tsl_config_check(const tsl_config_space *s, const tsl_config *c);

/* The value of knob `name` in c, or dflt when the space has no such knob. */
int64_t tsl_config_get(const tsl_config_space *s, const tsl_config *c, const char *name, int64_t dflt);

/* Writes "name=value,name=value" into buf (n bytes, truncated); returns buf. */
const char *tsl_config_str(const tsl_config_space *s, const tsl_config *c, char *buf, size_t n);

typedef struct tsl_template {
  const char *name;        /* unique, e.g. "matmul.blis", "conv2d_nchw.direct_tile" */
  const char *op;          /* the registry operator it schedules, e.g. "matmul" */
  const char *description; /* one line */
  int version;             /* bump when apply() changes meaning: changes the space hash */
  /* The space for program p on target t (p is an instantiation of `op`).
   * Errors: TSL_ERR_UNSUPPORTED when the template declines the workload (e.g. a
   * Winograd template for stride 2: the message says why), TSL_ERR_INVALID. */
  tsl_status (*space)(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out);
  /* The known-good default config, a point of *s. */
  tsl_status (*default_config)(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                               tsl_config *out);
  /* The schedule of p for config c (a point of s); *out owned by the caller. */
  tsl_status (*apply)(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s, const tsl_config *c,
                      tsl_schedule **out);
} tsl_template;

/* Registers tpl (the pointer is kept: static storage). Re-registering the same pointer
 * is a no-op. Errors: TSL_ERR_INVALID (NULL fields, another template of that name, the
 * registry full at 128 templates). Thread-safe. */
tsl_status tsl_template_register(const tsl_template *tpl);

/* The template called name, or NULL. */
const tsl_template *tsl_template_find(const char *name);

/* Writes up to max templates for operator op (every template when op is NULL), in
 * registration order, into out; returns how many there are in all. */
int tsl_template_list(const char *op, const tsl_template **out, int max);

/* Space + config check + apply in one call, for callers holding a config from a record:
 * builds p's space for tpl on t, checks that its hash equals space_hash (0: not
 * checked) and that c is a point of it, and applies it.
 * Errors: TSL_ERR_INVALID ("template T: space hash H differs from the record's R" or
 * the config check's message), then the template's own errors. */
tsl_status tsl_template_apply_checked(const tsl_template *tpl, const tsl_te_program *p, const tsl_target *t,
                                      uint64_t space_hash, const tsl_config *c, tsl_schedule **out);

#ifdef __cplusplus
}
#endif
#endif
