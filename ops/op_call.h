/* tessel — generated operators: operators whose DSL text (docs/dsl.md) is written per
 * instance, because their structure depends on the instance (a Concat's number of inputs,
 * a Transpose's permutation, the axes of a reduction, a pool's window, a fused conv's
 * epilogue, a layout's block). The fixed-text operators of ops/registry.h cover the rest.
 *
 * One instance is a tsl_op_call: the layer description that every stage passes along
 * unchanged — the kernel's tensor arguments (inputs then outputs, logical shapes and
 * layout) and its attributes by name. A generator (ops/<family>/…) turns a call into the
 * text of one op named "k", a label for symbol names, and the view under which the kernel
 * sees each argument's bytes (e.g. a global pool reads N x C x H x W as NC x HW).
 * Two calls with the same name, arguments and attributes give byte-identical texts, so
 * the text is the instance's workload key and identical layers share one kernel.
 *
 * The graph compiler (models/node_kernels.c) maps a graph node to (name, call) and asks
 * tsl_op_generate; it never writes DSL text itself.
 */
#ifndef TESSEL_OPS_OP_CALL_H
#define TESSEL_OPS_OP_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsl/text_buf.h"
#include "tessel/status.h"
#include "tessel/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arguments of one call: enough for a Concat of 64 inputs and its output. */
#define TSL_OP_CALL_MAX_ARGS 72
#define TSL_OP_CALL_MAX_ATTRS 16
/* Integers of one list attribute (pads of a rank-8 tensor: 16). */
#define TSL_OP_ATTR_MAX_INTS 16

typedef enum tsl_op_attr_kind {
  TSL_OP_ATTR_INT = 0,
  TSL_OP_ATTR_FLOAT = 1,
  TSL_OP_ATTR_INTS = 2,
  TSL_OP_ATTR_STRING = 3
} tsl_op_attr_kind;

typedef struct tsl_op_attr {
  const char *name; /* static string */
  tsl_op_attr_kind kind;
  int64_t i;
  double f;
  int nints;
  int64_t ints[TSL_OP_ATTR_MAX_INTS];
  const char *s; /* static string or one that outlives the call */
} tsl_op_attr;

/* One tensor argument: its logical shape, and its layout. block == 0: plain, C order.
 * block == x > 0: NCHW[x]c, a rank-4 logical [N, C, H, W] stored as
 * [N, ceil(C/x), H, W, x] with the lanes past C zero (models/passes/layout.h). */
typedef struct tsl_op_tensor {
  int ndim;
  int64_t shape[TSL_MAX_NDIM];
  int block;
} tsl_op_tensor;

typedef struct tsl_op_call {
  int nargs;   /* tensor arguments: inputs, then outputs */
  int ninputs; /* the first ninputs of them are inputs */
  tsl_op_tensor args[TSL_OP_CALL_MAX_ARGS];
  int nattrs;
  tsl_op_attr attrs[TSL_OP_CALL_MAX_ATTRS];
  bool overflow; /* an argument or attribute did not fit: tsl_op_generate refuses the call */
} tsl_op_call;

/* What a generator writes for a call. */
typedef struct tsl_op_text {
  tsl_text_buf text; /* "op k(x0: f32[..], ...)" and its stages (caller frees text.s) */
  char label[96];    /* what the kernel is, for symbol names: "maxpool_3x3_s2_p1" */
  int nargs;         /* == call->nargs */
  int ndims[TSL_OP_CALL_MAX_ARGS];
  int64_t views[TSL_OP_CALL_MAX_ARGS][TSL_MAX_NDIM]; /* the shape each argument is read as */
} tsl_op_text;

/* A generator: writes call's text into out (zeroed by tsl_op_generate). Errors:
 * TSL_ERR_UNSUPPORTED / TSL_ERR_INVALID with a message saying which attribute or shape
 * and why (tsl_op_generate prefixes nothing: the graph compiler adds the node's name). */
typedef tsl_status (*tsl_op_text_fn)(const tsl_op_call *call, tsl_op_text *out);

typedef struct tsl_op_generator {
  const char *name;        /* e.g. "concat" — a literal, found by grep */
  const char *description; /* one line: what it computes, its attributes */
  tsl_op_text_fn fn;
} tsl_op_generator;

/* ---- building a call ---- */

/* Appends a tensor argument (inputs first, then outputs; the caller sets ninputs); rank 0
 * is a scalar. Returns its index, or -1 (and sets c->overflow) when the call is full or
 * ndim is not within 0..TSL_MAX_NDIM. */
int tsl_op_call_add_tensor(tsl_op_call *c, int ndim, const int64_t *shape, int block);
/* Appends an attribute; false (and c->overflow set) when the call is full or `n` is not
 * within 0..TSL_OP_ATTR_MAX_INTS. */
bool tsl_op_call_set_int(tsl_op_call *c, const char *name, int64_t v);
bool tsl_op_call_set_float(tsl_op_call *c, const char *name, double v);
bool tsl_op_call_set_ints(tsl_op_call *c, const char *name, int n, const int64_t *v);
bool tsl_op_call_set_string(tsl_op_call *c, const char *name, const char *v);

/* ---- reading a call (generators) ---- */

/* The attribute called `name`, or NULL. */
const tsl_op_attr *tsl_op_call_attr(const tsl_op_call *c, const char *name);
/* Its value, or `dflt` when absent (an INT read as float converts, and back). */
int64_t tsl_op_call_int(const tsl_op_call *c, const char *name, int64_t dflt);
double tsl_op_call_float(const tsl_op_call *c, const char *name, double dflt);
/* The list attribute `name` (NULL and *n = 0 when absent). */
const int64_t *tsl_op_call_ints(const tsl_op_call *c, const char *name, int *n);
const char *tsl_op_call_string(const tsl_op_call *c, const char *name, const char *dflt);

/* ---- writing a text (generators) ---- */

/* Records argument a's view (rank nd, dims). */
void tsl_op_text_view(tsl_op_text *t, int a, int nd, const int64_t *dims);
/* Writes "op k(x0: f32[..], x1: ...)\n" with the views of the call's inputs set so far. */
void tsl_op_text_header(tsl_op_text *t, int ninputs);

/* ---- the registry of generators ---- */

/* The generator called `name`: TSL_ERR_NOT_FOUND (listing the known names) if none. */
tsl_status tsl_op_generator_lookup(const char *name, const tsl_op_generator **out);
/* All generators in a fixed order; *n their count. Valid for the process. */
const tsl_op_generator *const *tsl_op_generator_list(int *n);
/* Looks `name` up and runs it on call into *out (zeroed first). On error out->text.s is
 * freed and NULL. Errors: TSL_ERR_INVALID (NULL arguments, nargs not within
 * 1..TSL_OP_CALL_MAX_ARGS or ninputs not within 0..nargs, an overflowed call),
 * TSL_ERR_NOT_FOUND, the generator's errors, TSL_ERR_NOMEM. */
tsl_status tsl_op_generate(const char *name, const tsl_op_call *call, tsl_op_text *out);

#ifdef __cplusplus
}
#endif
#endif
