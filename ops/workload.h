/* Workloads: one operator instantiation (operator, input shapes and dtypes, scalar
 * parameters), named by a canonical string key. Equal workloads share tuning records,
 * so a layer tuned for one model is reused by any other model with the same layer.
 *
 * Key form (one line, no spaces):
 *
 *     conv2d_nchw(data:f32[1,3,32,32],weight:f32[16,3,3,3];dilation_h=1,dilation_w=1,
 *                 pad_bottom=1,pad_left=1,pad_right=1,pad_top=1,stride_h=1,stride_w=1)
 *
 * (shown wrapped): the operator's canonical registry name (aliases resolved), then each
 * input as NAME:DTYPE[EXTENTS] in kernel input order, then after ';' EVERY scalar
 * parameter (defaults applied, so a key written with and without an explicit default is
 * the same key) sorted by name, ints in decimal, floats with 17 significant digits.
 *
 * Activations the operator's text does not state (ops/epilogue.h) follow, each only when
 * present, so a workload without them keeps the key above: the output epilogue
 * ("+Swish(alpha=1)", the activation of the output stage), then the stage epilogue
 * ("|padded+HardSwish", the activation of one inner stage: the expand's of
 * expand_depthwise_nchwc), e.g.
 *
 *     expand_depthwise_nchwc(...;act=0,...,stride_w=1)+Swish(alpha=1)|padded+Swish(alpha=1)
 */
#ifndef TESSEL_OPS_WORKLOAD_H
#define TESSEL_OPS_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "dsl/parser.h"
#include "ops/epilogue.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The canonical key of operator `op` (a registry name or alias, ops/registry.h)
 * with ninputs input shapes (shapes[i][0..ndims[i])) and nparams parameter values by
 * name (any order; the others take their defaults). *key is malloc'd (caller frees).
 * Errors: TSL_ERR_INVALID (NULL arguments, wrong input count or rank, an extent < 1,
 * an unknown or repeated parameter, an int parameter given a float, a parameter
 * without default left out), TSL_ERR_NOT_FOUND (unknown operator), TSL_ERR_NOMEM. */
tsl_status tsl_workload_key(const char *op, int ninputs, const int64_t *const *shapes, const int *ndims, int nparams,
                            const tsl_dsl_param_value *params, char **key);

#define TSL_WORKLOAD_MAX_INPUTS 8
#define TSL_WORKLOAD_MAX_PARAMS 32

/* A workload as a plain value (no heap): what the tuner's tasks hold. */
typedef struct tsl_workload {
  char op[64];
  int ninputs;
  int ndims[TSL_WORKLOAD_MAX_INPUTS];
  int64_t shapes[TSL_WORKLOAD_MAX_INPUTS][8];
  int nparams;
  char param_names[TSL_WORKLOAD_MAX_PARAMS][48];
  tsl_dsl_param_value params[TSL_WORKLOAD_MAX_PARAMS]; /* .name points into param_names */
  tsl_epilogue epilogue; /* an activation applied to the output stage (ops/epilogue.h);
                            fn NULL (what tsl_workload_init leaves) for none */
  tsl_stage_epilogue stage_epilogue; /* an activation applied to one inner stage, by name
                                        (ops/epilogue.h); none after tsl_workload_init */
} tsl_workload;

/* Fills *w (arguments as tsl_workload_key; copied). Errors: TSL_ERR_INVALID (NULL
 * arguments, more than TSL_WORKLOAD_MAX_INPUTS inputs, rank > 8, more than
 * TSL_WORKLOAD_MAX_PARAMS parameters, names too long). Does not validate against the
 * registry: tsl_workload_key_of does. */
tsl_status tsl_workload_init(tsl_workload *w, const char *op, int ninputs, const int64_t *const *shapes,
                             const int *ndims, int nparams, const tsl_dsl_param_value *params);

/* Sets (adds or replaces) an int parameter. Errors: TSL_ERR_INVALID (too many, name too long). */
tsl_status tsl_workload_set_int(tsl_workload *w, const char *name, int64_t v);

/* Re-points params[i].name at param_names[i] (after copying a tsl_workload by value). */
void tsl_workload_fix(tsl_workload *w);

/* tsl_workload_key for w, followed by w's epilogue (tsl_epilogue_put_key) and its stage
 * epilogue (tsl_stage_epilogue_put_key): nothing for either without one, so keys of
 * workloads without them are unchanged. Errors: those of tsl_workload_key. */
tsl_status tsl_workload_key_of(const tsl_workload *w, char **key);

/* tsl_op_instantiate for w (program in the current IR arena), then w's stage epilogue
 * applied to its stage (tsl_epilogue_apply_stage) and w's epilogue to its output stage
 * (tsl_epilogue_apply). Errors: those three's. */
tsl_status tsl_workload_instantiate(const tsl_workload *w, tsl_te_program **out);

/* The operator name of a key (the text before '('), copied into buf (n bytes,
 * truncated). Returns buf; "" for a malformed key. */
const char *tsl_workload_key_op(const char *key, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
