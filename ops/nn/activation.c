/* The table of activations and unary math functions (activation.h). Formulas and
 * defaults: onnx/docs/Operators.md; opsets: onnx/docs/Changelog.md. */
#include "ops/nn/activation.h"

#include <math.h>
#include <string.h>

static double relu_d(double x) { return x > 0.0 ? x : x < 0.0 ? 0.0 : x; }
static double softplus_d(double x) { return isnan(x) ? x : relu_d(x) + log1p(exp(-fabs(x))); }
static double clamp01_d(double x) { return isnan(x) ? x : x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x; }

static double sigmoid_e(double x, const double *a) { (void)a; return 1.0 / (1.0 + exp(-x)); }
static double swish_e(double x, const double *a) { return x / (1.0 + exp(-a[0] * x)); }
static double hard_sigmoid_e(double x, const double *a) { return clamp01_d(a[0] * x + a[1]); }
static double hard_swish_e(double x, const double *a) { (void)a; return x * clamp01_d(x / 6.0 + 0.5); }
static double leaky_relu_e(double x, const double *a) { return x < 0.0 ? a[0] * x : x; }
static double elu_e(double x, const double *a) { return x < 0.0 ? a[0] * (exp(x) - 1.0) : x; }
static double selu_e(double x, const double *a) { return x <= 0.0 ? a[1] * (a[0] * exp(x) - a[0]) : a[1] * x; }
static double celu_e(double x, const double *a) { return isnan(x) ? x : relu_d(x) + fmin(0.0, a[0] * expm1(x / a[0])); }
static double thresholded_relu_e(double x, const double *a) { return x > a[0] ? x : 0.0; }
static double tanh_e(double x, const double *a) { (void)a; return tanh(x); }
static double erf_e(double x, const double *a) { (void)a; return erf(x); }
static double gelu_e(double x, const double *a) { (void)a; return 0.5 * x * (1.0 + erf(x * M_SQRT1_2)); }
static double softplus_e(double x, const double *a) { (void)a; return softplus_d(x); }
static double softsign_e(double x, const double *a) { (void)a; return x / (1.0 + fabs(x)); }
static double mish_e(double x, const double *a) { (void)a; return x * tanh(softplus_d(x)); }
static double neg_e(double x, const double *a) { (void)a; return -x; }
static double abs_e(double x, const double *a) { (void)a; return fabs(x); }
static double exp_e(double x, const double *a) { (void)a; return exp(x); }
static double log_e(double x, const double *a) { (void)a; return log(x); }
static double sqrt_e(double x, const double *a) { (void)a; return sqrt(x); }
static double reciprocal_e(double x, const double *a) { (void)a; return 1.0 / x; }
static double floor_e(double x, const double *a) { (void)a; return floor(x); }
static double ceil_e(double x, const double *a) { (void)a; return ceil(x); }
static double round_e(double x, const double *a) { (void)a; return nearbyint(x); } /* half to even */

/* Softplus as max(x, 0) + log(1 + exp(-|x|)): ONNX's log(exp(x) + 1) without the
 * overflow of exp at large x. */
#define SOFTPLUS_DSL(X) "(max(" X ", 0.0) + log(1.0 + exp(-abs(" X "))))"

static const tsl_activation table[] = {
    {"Sigmoid", "sigmoid", 6, 0, {0}, {0}, "1.0 / (1.0 + exp(-$x))", sigmoid_e},
    /* x * Sigmoid(alpha x) (SiLU at alpha 1): ONNX Swish (opset 24), and what the gating
     * pass (models/passes/fuse_gating.h) makes of x * Sigmoid(x) */
    {"Swish", "swish", 24, 1, {"alpha"}, {1.0}, "$x / (1.0 + exp(-$0 * $x))", swish_e},
    {"HardSigmoid", "hard_sigmoid", 6, 2, {"alpha", "beta"}, {0.2, 0.5}, "max(min($0 * $x + $1, 1.0), 0.0)",
     hard_sigmoid_e},
    {"HardSwish", "hard_swish", 14, 0, {0}, {0}, "$x * max(min($x * 0.166666672 + 0.5, 1.0), 0.0)", hard_swish_e},
    {"LeakyRelu", "leaky_relu", 6, 1, {"alpha"}, {0.01}, "select($x < 0.0, $0 * $x, $x)", leaky_relu_e},
    {"Elu", "elu", 6, 1, {"alpha"}, {1.0}, "select($x < 0.0, $0 * (exp($x) - 1.0), $x)", elu_e},
    {"Selu", "selu", 6, 2, {"alpha", "gamma"}, {1.67326319217681884765625, 1.05070102214813232421875},
     "select($x <= 0.0, $1 * ($0 * exp($x) - $0), $1 * $x)", selu_e},
    {"Celu", "celu", 12, 1, {"alpha"}, {1.0}, "max($x, 0.0) + min(0.0, $0 * (exp($x / $0) - 1.0))", celu_e},
    {"ThresholdedRelu", "thresholded_relu", 10, 1, {"alpha"}, {1.0}, "select($x > $0, $x, 0.0)", thresholded_relu_e},
    {"Tanh", "tanh", 6, 0, {0}, {0}, "tanh($x)", tanh_e},
    {"Erf", "erf", 9, 0, {0}, {0}, "erf($x)", erf_e},
    /* Gelu's default form (approximate = "none"); opset-13 exports spell it out, and the
     * graph pass models/passes/gelu.h puts it back together */
    {"Gelu", "gelu", 20, 0, {0}, {0}, "0.5 * $x * (1.0 + erf($x * 0.707106769))", gelu_e},
    {"Softplus", "softplus", 1, 0, {0}, {0}, SOFTPLUS_DSL("$x"), softplus_e},
    {"Softsign", "softsign", 1, 0, {0}, {0}, "$x / (1.0 + abs($x))", softsign_e},
    {"Mish", "mish", 18, 0, {0}, {0}, "$x * tanh(" SOFTPLUS_DSL("$x") ")", mish_e},
    {"Neg", "neg", 6, 0, {0}, {0}, "-$x", neg_e},
    {"Abs", "abs", 6, 0, {0}, {0}, "abs($x)", abs_e},
    {"Exp", "exp", 6, 0, {0}, {0}, "exp($x)", exp_e},
    {"Log", "log", 6, 0, {0}, {0}, "log($x)", log_e},
    {"Sqrt", "sqrt", 6, 0, {0}, {0}, "sqrt($x)", sqrt_e},
    {"Reciprocal", "reciprocal", 6, 0, {0}, {0}, "1.0 / $x", reciprocal_e},
    {"Floor", "floor", 6, 0, {0}, {0}, "floor($x)", floor_e},
    {"Ceil", "ceil", 6, 0, {0}, {0}, "ceil($x)", ceil_e},
    {"Round", "round", 11, 0, {0}, {0}, "round($x)", round_e},
};

const tsl_activation *tsl_activation_list(int *n) {
  if (n) *n = (int)(sizeof table / sizeof table[0]);
  return table;
}

const tsl_activation *tsl_activation_find(const char *onnx_op) {
  for (size_t i = 0; onnx_op && i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].onnx_op, onnx_op) == 0) return &table[i];
  return NULL;
}

void tsl_activation_put_dsl(const tsl_activation *a, const char *x, const double *attrs, tsl_text_buf *b) {
  for (const char *p = a->expr; *p;) {
    if (p[0] == '$' && p[1] == 'x') {
      tsl_text_put(b, "(%s)", x);
      p += 2;
    } else if (p[0] == '$' && p[1] >= '0' && p[1] < '0' + a->nattrs) {
      tsl_text_put_float(b, attrs[p[1] - '0']);
      p += 2;
    } else {
      size_t run = strcspn(p + 1, "$") + 1; /* up to the next placeholder */
      tsl_text_put(b, "%.*s", (int)run, p);
      p += run;
    }
  }
}

bool tsl_activation_keeps_zero(const tsl_activation *a, const double *attrs) { return a->eval(0.0, attrs) == 0.0; }

bool tsl_activation_transcendental(const tsl_activation *a) {
  static const char *const calls[] = {"exp(", "log(", "tanh(", "erf("};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
    if (strstr(a->expr, calls[i])) return true;
  return false;
}
