/* tessel tensor expressions (TE): placeholders, compute stages and reductions.
 *
 * A TE describes WHAT an operator computes, never how to loop: each compute stage
 * gives the value of its output at one point of its output shape, as an expression of
 * that point's axis variables and of reads of other tensors. Shapes are concrete
 * (tessel JIT-compiles one variant per shape); the text front-end (dsl/parser.h)
 * binds symbolic sizes when it instantiates an operator.
 *
 * Conventions
 * - A tensor read is a TSL_E_LOAD of the tensor's buffer (kind TSL_BUF_TENSOR, one
 *   index per dimension); buf->origin points back at the tsl_te_tensor.
 * - A compute body is either a scalar expression, or a TSL_E_REDUCE at the top
 *   (sum/max/min over reduction axes, as in TVM: reductions do not nest and do not
 *   appear inside other expressions; write a second stage instead).
 * - Reads must be in bounds for every point of the output and every reduction point
 *   where the reduction's condition holds; tsl_te_check() verifies this with
 *   interval analysis and reports the read that is not.
 * - All nodes live in the current IR arena (ir/arena.h).
 */
#ifndef TESSEL_DSL_TE_H
#define TESSEL_DSL_TE_H

#include "ir/ir.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsl_te_op_kind {
  TSL_TE_PLACEHOLDER = 0, /* an input: data supplied by the caller */
  TSL_TE_COMPUTE = 1      /* output[axis...] = body */
} tsl_te_op_kind;

typedef struct tsl_te_tensor tsl_te_tensor;

typedef struct tsl_te_op {
  tsl_te_op_kind kind;
  const char *name;
  const char *tag; /* "elemwise", "injective", "reduce", or an operator family such as
                      "conv2d"; lowering inlines "elemwise"/"injective" stages by default */
  tsl_te_tensor *output;
  /* compute only: */
  int naxis;
  tsl_iter_var *axis; /* one per output dimension, min 0, extent = shape[i] */
  int nreduce;
  tsl_iter_var *reduce_axis; /* the reduction axes of a top-level TSL_E_REDUCE body */
  tsl_expr *body;
  int ninputs;
  tsl_te_tensor **inputs; /* tensors read by body, each once, in first-read order */
} tsl_te_op;

struct tsl_te_tensor {
  tsl_buffer *buf; /* name, dtype, shape; buf->kind == TSL_BUF_TENSOR */
  tsl_te_op *op;
};

/* An input of `dtype` and `shape` (ndim extents >= 1, copied). */
tsl_te_tensor *tsl_te_placeholder(const char *name, tsl_type dtype, int ndim, const int64_t *shape);

/* `ndim` fresh spatial axes for a stage of the given shape (names: "i0".. or the
 * given names when `names` is non-NULL). Build the body from axes[i].var. */
tsl_iter_var *tsl_te_axes(int ndim, const int64_t *shape, const char *const *names);

/* A reduction axis over [min, min+extent). */
tsl_iter_var tsl_te_reduce_axis(const char *name, int64_t min, int64_t extent);

/* A compute stage whose output has one dimension per axis (extents from the axes).
 * body: scalar, or a reduction made by tsl_te_sum/max/min. tag may be NULL ("injective"
 * when the body has no reduction, "reduce" otherwise). On a malformed body (a REDUCE
 * not at the top, a read of a non-tensor buffer, vector lanes) returns NULL with
 * tsl_error(TSL_ERR_INVALID, ...). */
tsl_te_tensor *tsl_te_compute(const char *name, int naxis, const tsl_iter_var *axes, tsl_expr *body,
                              const char *tag);

/* tensor[index...] as an expression (a TSL_E_LOAD); n must equal the tensor's ndim. */
tsl_expr *tsl_te_read(tsl_te_tensor *t, int n, tsl_expr *const *index);

/* Reductions over `axes` (is_reduce iter vars); condition may be NULL. */
tsl_expr *tsl_te_sum(tsl_expr *source, int naxes, const tsl_iter_var *axes, tsl_expr *condition);
tsl_expr *tsl_te_max(tsl_expr *source, int naxes, const tsl_iter_var *axes, tsl_expr *condition);
tsl_expr *tsl_te_min(tsl_expr *source, int naxes, const tsl_iter_var *axes, tsl_expr *condition);

/* The tensor that owns buffer b (b->origin), or NULL. */
tsl_te_tensor *tsl_te_tensor_of(const tsl_buffer *b);

typedef enum tsl_dsl_param_kind {
  TSL_DSL_PARAM_INT = 0,  /* `name: int`   (64-bit) */
  TSL_DSL_PARAM_FLOAT = 1 /* `name: float` (double) */
} tsl_dsl_param_kind;

/* The value of a scalar parameter, passed by name to tsl_dsl_instantiate(). An int
 * parameter accepts only an int value; a float parameter accepts either kind. */
typedef struct tsl_dsl_param_value {
  const char *name;
  tsl_dsl_param_kind kind;
  int64_t i; /* kind == TSL_DSL_PARAM_INT */
  double f;  /* kind == TSL_DSL_PARAM_FLOAT */
} tsl_dsl_param_value;

static inline tsl_dsl_param_value tsl_dsl_int_param(const char *name, int64_t v) {
  tsl_dsl_param_value p = {name, TSL_DSL_PARAM_INT, v, 0.0};
  return p;
}
static inline tsl_dsl_param_value tsl_dsl_float_param(const char *name, double v) {
  tsl_dsl_param_value p = {name, TSL_DSL_PARAM_FLOAT, 0, v};
  return p;
}

/* Where a read of a DSL-made program was written (tsl_dsl_instantiate): the load node and
 * the source position of each of its index expressions, so that tsl_te_check reports an
 * out-of-bounds read at the index that causes it, in the DSL's "FILE:L:C: error:" form. */
typedef struct tsl_te_read_origin {
  const tsl_expr *load;            /* the TSL_E_LOAD node in a stage body */
  const struct dsl_pos *index_pos; /* one per dimension (dsl/ast.h) */
} tsl_te_read_origin;

/* A whole operator ready to schedule: its inputs (kernel arguments, in order) and its
 * outputs (kernel arguments after the inputs). Stages between them are found by
 * walking the outputs' reads. */
typedef struct tsl_te_program {
  const char *name;
  int ninputs;
  tsl_te_tensor **inputs;
  int noutputs;
  tsl_te_tensor **outputs;
  /* The scalar parameters the program was instantiated with, every one the op declares
   * (given or defaulted), in declaration order; names and values live in the arena.
   * 0 / NULL for a program not made by tsl_dsl_instantiate (tsl_te_program_new). */
  int nparams;
  const tsl_dsl_param_value *params;
  /* The DSL source and where each read was written (tsl_dsl_instantiate); NULL / 0 for
   * programs built with the C API. */
  const struct dsl_src *src;
  int nread_origins;
  const tsl_te_read_origin *read_origins;
} tsl_te_program;

tsl_te_program *tsl_te_program_new(const char *name, int ninputs, tsl_te_tensor *const *inputs,
                                   int noutputs, tsl_te_tensor *const *outputs);

/* All compute stages reachable from the outputs, producers before consumers
 * (a topological order). *n receives the count; the array lives in the arena. */
tsl_te_op **tsl_te_program_stages(const tsl_te_program *p, int *n);

/* Checks that every placeholder reached is one of p's inputs and that every read is in
 * bounds (interval analysis). TSL_ERR_INVALID with "stage: read of T[dim d] may reach
 * [lo, hi] outside [0, extent)" on failure; for a program made from DSL text the message
 * is located at the index expression ("FILE:L:C: error: ...", the line and a caret). */
tsl_status tsl_te_check(const tsl_te_program *p);

/* Prints the program as DSL-like text (what `tunecli show` prints). */
void tsl_te_print(FILE *f, const tsl_te_program *p);

#ifdef __cplusplus
}
#endif
#endif
