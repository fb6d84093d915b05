/* Reference activations (ref_activation.h). */
#include "ref/ref_activation.h"

#include <math.h>
#include <string.h>

static double attr(const tsl_node *n, const char *name, double dflt) { return tsl_node_attr_float(n, name, dflt); }

bool ref_activation(const char *op, const tsl_node *n, double x, double *y) {
  double r;
  if (!strcmp(op, "Sigmoid")) {
    r = x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
  } else if (!strcmp(op, "Swish")) { /* x * sigmoid(alpha x), ONNX opset 24 */
    double ax = attr(n, "alpha", 1.0) * x;
    r = x * (ax >= 0 ? 1.0 / (1.0 + exp(-ax)) : exp(ax) / (1.0 + exp(ax)));
  } else if (!strcmp(op, "HardSigmoid")) {
    r = fmax(0.0, fmin(1.0, attr(n, "alpha", 0.2) * x + attr(n, "beta", 0.5)));
    if (isnan(x)) r = x;
  } else if (!strcmp(op, "HardSwish")) {
    double h = x / 6.0 + 0.5;
    r = isnan(x) ? x : h <= 0 ? 0.0 : h >= 1 ? x : x * h;
  } else if (!strcmp(op, "LeakyRelu")) {
    r = x >= 0 || isnan(x) ? x : attr(n, "alpha", 0.01) * x;
  } else if (!strcmp(op, "Elu")) {
    r = x >= 0 || isnan(x) ? x : attr(n, "alpha", 1.0) * expm1(x);
  } else if (!strcmp(op, "Selu")) {
    double alpha = attr(n, "alpha", 1.67326319217681884765625), gamma = attr(n, "gamma", 1.05070102214813232421875);
    r = x > 0 || isnan(x) ? gamma * x : gamma * alpha * expm1(x);
  } else if (!strcmp(op, "Celu")) {
    double alpha = attr(n, "alpha", 1.0);
    r = isnan(x) ? x : x > 0 ? x : alpha * expm1(x / alpha);
  } else if (!strcmp(op, "ThresholdedRelu")) {
    r = x > attr(n, "alpha", 1.0) ? x : 0.0;
  } else if (!strcmp(op, "Tanh")) {
    r = tanh(x);
  } else if (!strcmp(op, "Erf")) {
    r = erf(x);
  } else if (!strcmp(op, "Gelu")) {
    r = x / 2 * erfc(-x / sqrt(2.0)); /* 0.5 x (1 + erf(x / sqrt 2)), without cancellation */
  } else if (!strcmp(op, "Softplus") || !strcmp(op, "Mish")) {
    double sp = x > 30 ? x : log1p(exp(x));
    r = !strcmp(op, "Mish") ? x * tanh(sp) : sp;
  } else if (!strcmp(op, "Softsign")) {
    r = x / (1.0 + fabs(x));
  } else if (!strcmp(op, "Neg")) {
    r = -x;
  } else if (!strcmp(op, "Abs")) {
    r = fabs(x);
  } else if (!strcmp(op, "Exp")) {
    r = exp(x);
  } else if (!strcmp(op, "Log")) {
    r = log(x);
  } else if (!strcmp(op, "Sqrt")) {
    r = sqrt(x);
  } else if (!strcmp(op, "Reciprocal")) {
    r = 1.0 / x;
  } else if (!strcmp(op, "Floor")) {
    r = floor(x);
  } else if (!strcmp(op, "Ceil")) {
    r = ceil(x);
  } else if (!strcmp(op, "Round")) {
    r = rint(x); /* the default rounding mode: half to even */
  } else {
    return false;
  }
  *y = r;
  return true;
}
