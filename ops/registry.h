/* The operator registry: tessel's built-in operators, each defined in DSL text
 * (docs/dsl.md) embedded in C, one file per family (ops/matmul/matmul.c, conv2d.c,
 * elemwise.c). The texts are parsed once, on first use, and kept for the process.
 *
 * Built-in operators (inputs; scalar parameters with defaults):
 *   matmul       C[M, N] = sum over k of A[M, K] * B[K, N]                  (A, B)
 *   dense        out[B, O] = sum over k of data[B, K] * weight[O, K]        (data, weight)
 *   conv2d_nchw  direct 2-D convolution, NCHW data, KCRS weights, groups 1  (data, weight;
 *                stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, pad_bottom = 0,
 *                pad_right = 0, dilation_h = 1, dilation_w = 1); alias "conv2d"
 *   relu         out = max(data, 0) on NCHW (NaN stays NaN)                (data)
 *   add          out = a + b on NCHW                                        (a, b)
 */
#ifndef TESSEL_OPS_REGISTRY_H
#define TESSEL_OPS_REGISTRY_H

#include "dsl/parser.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A shape set that instantiates the operator (what `tunecli show OP` uses without
 * --shape): one shape per input, and parameter values (the others take defaults). */
typedef struct tsl_op_example {
  int ninputs;
  const int *ndims;
  const int64_t *const *shapes;
  int nparams;
  const tsl_dsl_param_value *params;
} tsl_op_example;

typedef struct tsl_op_info {
  const char *name;        /* canonical name, e.g. "conv2d_nchw" */
  const char *text;        /* the DSL text defining it (one op) */
  const char *description; /* one line */
  int ninputs;
  const char *const *input_names; /* kernel input order */
  int nparams;
  const char *const *param_names; /* scalar parameters in declaration order */
  tsl_op_example example;
  const tsl_dsl_op *def;   /* the parsed definition (lives for the process) */
} tsl_op_info;

/* The operator called `name` (canonical name or alias such as "conv2d").
 * TSL_ERR_NOT_FOUND (message lists the known names) if there is none, TSL_ERR_INVALID on
 * NULL arguments. *out stays valid for the process. */
tsl_status tsl_op_lookup(const char *name, const tsl_op_info **out);

/* All built-in operators in a fixed order (aliases not repeated); *n receives the count.
 * The array stays valid for the process. */
const tsl_op_info *const *tsl_op_list(int *n);

/* Looks `name` up, instantiates it (tsl_dsl_instantiate: shapes per input, params by
 * name, defaults for the rest) in the current IR arena and runs tsl_te_check() on the
 * result. Errors: those of tsl_op_lookup, tsl_dsl_instantiate and tsl_te_check. */
tsl_status tsl_op_instantiate(const char *name, int ninputs, const int64_t *const *shapes, const int *ndims,
                              int nparams, const tsl_dsl_param_value *params, tsl_te_program **out);

/* Adds a user's operator (an op of a DSL file, e.g. `tunecli tune-op --file`) so that
 * workload keys, tsl_op_lookup and tsl_op_instantiate know it, for the rest of the
 * process: def (and the module holding it) must stay alive as long; `text` (the op's DSL
 * text, copied) is what tsl_op_info.text shows. It has no example shapes (example.ninputs
 * 0) and is not in tsl_op_list. Registering the same def, or an op of the same name and
 * text, again returns the first registration. Thread-safe.
 * Errors: TSL_ERR_INVALID (NULL arguments; the name of a built-in operator or alias: the
 * message asks to rename it; another op of that name with another text; more than 64
 * users' operators), TSL_ERR_NOMEM. */
tsl_status tsl_op_register_user(const tsl_dsl_op *def, const char *text, const tsl_op_info **out);

#ifdef __cplusplus
}
#endif
#endif
