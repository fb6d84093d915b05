/* Activations and unary math: the elementwise operators y = f(x) of one input, one
 * output of the same shape, with up to two float attributes (ONNX's Sigmoid, HardSwish,
 * LeakyRelu, Elu, Tanh, Softplus, ..., Neg, Exp, Log, Sqrt, Reciprocal, ...).
 *
 * One table (activation.c) holds each function once: its ONNX name and opset, its
 * attributes with their defaults, and f written as a DSL expression (docs/dsl.md) over
 * the operand. Everything else is generic: the ONNX importer maps every name of the
 * table to one graph operator (TSL_OP_ACTIVATION, attribute "function" = the ONNX name),
 * shape inference copies the shape, and the generated operator "activation"
 * (elemwise_generated.c) writes one elementwise kernel from the expression, plain or in
 * the blocked NCHW[x]c layout (docs/ops.md shows how to add a function). Relu and Clip
 * keep their own graph operators (they fuse into conv epilogues).
 *
 * Semantics are ONNX's (onnx/docs/Operators.md), computed in f32; NaN inputs give NaN
 * outputs except where ONNX's formula says otherwise (ThresholdedRelu gives 0).
 */
#ifndef TESSEL_OPS_NN_ACTIVATION_H
#define TESSEL_OPS_NN_ACTIVATION_H

#include <stdbool.h>
#include <stddef.h>

#include "dsl/text_buf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_ACTIVATION_MAX_ATTRS 2

typedef struct tsl_activation {
  const char *onnx_op;      /* ONNX operator type, e.g. "HardSwish" (also the graph's "function") */
  const char *label;        /* kernel label, e.g. "hard_swish" */
  int since_opset;          /* first ONNX opset with this definition */
  int nattrs;               /* float attributes, in the order $0, $1 of `expr` */
  const char *attr[TSL_ACTIVATION_MAX_ATTRS];
  double attr_default[TSL_ACTIVATION_MAX_ATTRS];
  /* f as DSL text: $x is the operand (a load, evaluated once per element by the kernel
   * and possibly written several times), $0 and $1 the attribute values as literals */
  const char *expr;
  /* f in double precision, for constant folding and to ask whether f(0) = 0 (a blocked
   * tensor's padding lanes stay 0 only then) */
  double (*eval)(double x, const double *attrs);
} tsl_activation;

/* The function whose ONNX operator type is `onnx_op` (case-sensitive), NULL if none. */
const tsl_activation *tsl_activation_find(const char *onnx_op);

/* Every function of the table, in a fixed order; *n receives the count. */
const tsl_activation *tsl_activation_list(int *n);

/* Appends f's DSL expression for operand text `x` (in parentheses) and attribute values
 * `attrs` (nattrs of them, as tsl_text_put_float literals) to b; b->oom on failure. */
void tsl_activation_put_dsl(const tsl_activation *a, const char *x, const double *attrs, tsl_text_buf *b);

/* Whether f's expression calls exp, log, tanh or erf (a polynomial and a division per
 * element, ~20 cycles a vector here) rather than being piecewise polynomial (min, max,
 * select, + - *: Relu-like cost). */
bool tsl_activation_transcendental(const tsl_activation *a);

/* f(0) == 0 for these attributes: the blocked layout's zero padding lanes stay zero. */
bool tsl_activation_keeps_zero(const tsl_activation *a, const double *attrs);

#ifdef __cplusplus
}
#endif
#endif
