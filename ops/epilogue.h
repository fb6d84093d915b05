/* Activation epilogues: a function of the activation table (ops/nn/activation.h)
 * applied to the output stage of an instantiated operator, so a convolution or GEMM
 * computes y = f(conv + bias [+ residual]) in its own output pass instead of a separate
 * elementwise kernel over the whole tensor (the fused epilogues of TVM's and ONNX
 * Runtime's conv kernels; issue 15, "Fusion").
 *
 * The rewrite works on the tensor expression, after the operator's DSL text has been
 * instantiated: the output stage out[axes] = e becomes out[axes] = f(e), with f's
 * expression taken from the table (tsl_activation_put_dsl) — written once for every
 * algorithm (direct, 1x1, im2col, depthwise, grouped, Winograd, the generators); the
 * templates schedule the rewritten stage as they did the old one (same name, axes, tag).
 *
 * Blocked outputs NCHW[x]c whose channel count C does not fill the last block keep zeros
 * in the padding lanes only when f(0) = 0: for other functions (Sigmoid, HardSigmoid, ...)
 * `channels` = C adds the lane guard select(kb*x + k < C, f(e), 0) on the output's axis 1
 * (the channel block) and last axis (the lane).
 *
 * The epilogue is part of a workload (ops/workload.h): its key gets the suffix
 * tsl_epilogue_put_key writes, "+Swish(alpha=1)", so a conv + Swish is not the conv
 * alone, while a workload without epilogue keeps the key it always had.
 *
 * A stage epilogue (tsl_stage_epilogue) is the same rewrite on an INNER stage named by
 * the operator's text: the activation of an intermediate value that a fused operator
 * computes and never writes out (the expand's activation f1 of expand_depthwise_nchwc,
 * ops/conv2d/expand_depthwise.h, applied to its stage "padded"). The stage keeps its
 * tensor (every reader reads f(value)). Its body becomes f(body), unless the maker of the
 * stage epilogue states that the stage zero-pads (zero_padding, set by the operator that
 * wrote the stage, never guessed from the body: a ReLU written as select(v > 0, v, 0)
 * has the same form): then a body select(cond, v, 0) keeps its zeros and becomes
 * select(cond, f(v), 0), the padding applied after f as a zero-padded convolution's input
 * is. A workload holds one (ops/workload.h); its key suffix is "|STAGE" then the
 * epilogue's, "|padded+Swish(alpha=1)", after the output epilogue's, and only when
 * present (zero_padding is not in the key: it is implied by the operator's stage).
 */
#ifndef TESSEL_OPS_EPILOGUE_H
#define TESSEL_OPS_EPILOGUE_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/te.h"
#include "dsl/text_buf.h"
#include "ops/nn/activation.h"
#include "ops/op_call.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_epilogue {
  const tsl_activation *fn;                 /* NULL: no epilogue */
  double attrs[TSL_ACTIVATION_MAX_ATTRS];   /* fn's attribute values ($0, $1) */
  int64_t channels;                         /* > 0: a blocked output's true channel count,
                                               lanes past it written 0 when f(0) != 0 */
} tsl_epilogue;

/* Whether e is set (fn not NULL). */
bool tsl_epilogue_present(const tsl_epilogue *e);

/* Whether e needs the lane guard: fn is set, f(0) != 0 and channels > 0. */
bool tsl_epilogue_guarded(const tsl_epilogue *e);

/* The epilogue of ONNX function `onnx_op` (a name of the activation table) with nattrs
 * attribute values (missing ones take the table's defaults; attrs may be NULL) and
 * channels (0: no guard). Errors: TSL_ERR_UNSUPPORTED (no such function), TSL_ERR_INVALID
 * (NULL out, negative channels, more attributes than the function has). */
tsl_status tsl_epilogue_make(const char *onnx_op, int nattrs, const double *attrs, int64_t channels,
                             tsl_epilogue *out);

/* Appends the key suffix of e to b: nothing without epilogue, else "+NAME", then
 * "(a=V,b=V)" (the function's attributes by name, %.17g) when it has any, then
 * "[channels=C]" when guarded. The function is named by its ONNX operator type, never
 * by a table position, so keys survive changes to the table's order. */
void tsl_epilogue_put_key(const tsl_epilogue *e, tsl_text_buf *b);

/* Rewrites p's output stage (p->outputs[0], which must be a non-reduction f32 stage)
 * to f(e) (a new stage of the same name, axes and tag replaces it among p's outputs;
 * the stages it read are unchanged). No-op without epilogue. With the guard, the output
 * must have rank >= 3 with axis 1 x last axis covering at least `channels` lanes.
 * Errors: TSL_ERR_INVALID (NULL p, no output, a reduction or non-f32 output, the guard on
 * a stage it does not fit), those of parsing f's expression (TSL_ERR_INVALID). */
tsl_status tsl_epilogue_apply(tsl_te_program *p, const tsl_epilogue *e);

/* An epilogue on an inner stage of an operator, by the stage's name. */
typedef struct tsl_stage_epilogue {
  char stage[32];    /* the stage's name (a compute stage of the operator's text) */
  tsl_epilogue fn;   /* fn.fn NULL: none */
  bool zero_padding; /* the stage's body select(cond, v, 0.0) is v inside a zero padding:
                        f goes on v only, the padding stays 0 */
} tsl_stage_epilogue;

/* Whether s is set (a stage named and a function). */
bool tsl_stage_epilogue_present(const tsl_stage_epilogue *s);

/* The stage epilogue e (copied; e NULL or without function: none) on stage `stage`;
 * zero_padding: the stage zero-pads its value (see tsl_stage_epilogue), which only the
 * operator that wrote the stage can know. Errors: TSL_ERR_INVALID (NULL out, e set with a
 * NULL or empty stage name, or one of 32 bytes or more). */
tsl_status tsl_stage_epilogue_make(const char *stage, const tsl_epilogue *e, bool zero_padding,
                                   tsl_stage_epilogue *out);

/* Appends the key suffix of s to b: nothing without one, else "|STAGE" followed by
 * tsl_epilogue_put_key of its function. */
void tsl_stage_epilogue_put_key(const tsl_stage_epilogue *s, tsl_text_buf *b);

/* Rewrites stage s->stage of p in place to f(body) (with s->zero_padding, a body
 * select(cond, v, 0) becomes select(cond, f(v), 0): the padding stays zero; a body of
 * another form, a stage whose padding instantiation removed, becomes f(body)), with the
 * lane guard when s->fn is
 * guarded (as tsl_epilogue_apply). The stage must be a non-reduction f32 compute stage
 * reachable from p's outputs; its tensor, name, axes and tag are unchanged, so its
 * readers and the operator's templates see the same stage. No-op without epilogue.
 * Errors: TSL_ERR_INVALID (NULL p, no such stage, a reduction or non-f32 stage, the
 * guard on a stage it does not fit), those of parsing f's expression. */
tsl_status tsl_epilogue_apply_stage(tsl_te_program *p, const tsl_stage_epilogue *s);

/* ---- the generated operators (ops/op_call.h) ----------------------------------------
 * A generator that takes an epilogue (conv2d, gemm, dense_packed, matmul) reads it from
 * the call's attributes "epilogue" (string: the ONNX name of a table function) and
 * "epilogue_attr0", "epilogue_attr1" (floats: its attributes in the table's order,
 * defaults where absent). Their outputs are plain (no padding lanes), so no guard. */

/* Sets those attributes of c to fn with attrs (fn's nattrs values). */
void tsl_op_call_set_epilogue(tsl_op_call *c, const tsl_activation *fn, const double *attrs);

/* Reads them into *e (fn NULL when the call has no "epilogue"). Errors:
 * TSL_ERR_UNSUPPORTED naming `who` for a name the table does not have. */
tsl_status tsl_op_call_epilogue(const tsl_op_call *c, const char *who, tsl_epilogue *e);

/* Appends f(x) to b (x as it is without epilogue; DSL text). */
void tsl_epilogue_put_dsl(const tsl_epilogue *e, const char *x, tsl_text_buf *b);

#ifdef __cplusplus
}
#endif
#endif
