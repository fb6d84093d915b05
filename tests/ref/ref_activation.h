/* Reference activations for the tests: ONNX's formulas (onnx/docs/Operators.md) written
 * out directly in double precision, separately from ops/nn/activation.c (whose table the
 * library compiles): the attribute defaults are restated here from the specification. */
#ifndef TESSEL_TESTS_REF_ACTIVATION_H
#define TESSEL_TESTS_REF_ACTIVATION_H

#include <stdbool.h>

#include "models/graph.h"

/* f(x) for ONNX operator `op` with the node's float attributes (ONNX defaults where
 * absent). False for an operator this reference does not know. */
bool ref_activation(const char *op, const tsl_node *n, double x, double *y);

#endif
