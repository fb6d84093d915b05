/* Internal to ops/: what the generators of generated operators (op_call.h) share to read
 * a call and write its DSL text (docs/dsl.md): the stored shape of a blocked argument,
 * the common views, argument-count and axis checks with their messages, and the recurring
 * pieces of text (index lists, where clauses, broadcast reads, a Clip's bounds, the
 * guard that keeps a blocked tensor's padding lanes zero).
 *
 * A blocked argument (tsl_op_tensor.block = x > 0) is a rank-4 logical [N, C, H, W]
 * stored as [N, ceil(C/x), H, W, x] with the lanes past C zero (models/passes/layout.h).
 */
#ifndef TESSEL_OPS_OP_TEXT_H
#define TESSEL_OPS_OP_TEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/text_buf.h"
#include "ops/op_call.h"

/* The shape of t's bytes: its logical shape, or [N, ceil(C/x), H, W, x] when blocked
 * (block > 0 and rank 4). Returns the rank. */
int tsl_op_tensor_storage(const tsl_op_tensor *t, int64_t shape[TSL_MAX_NDIM]);
/* Elements of t's logical shape (1 for rank 0). */
int64_t tsl_op_tensor_numel(const tsl_op_tensor *t);
/* Elements of t's stored shape (with the padding lanes of a blocked tensor). */
int64_t tsl_op_tensor_stored_numel(const tsl_op_tensor *t);
/* Whether a and b have the same rank and extents. */
bool tsl_op_tensor_same_shape(const tsl_op_tensor *a, const tsl_op_tensor *b);
/* outer x axis x inner view of t's logical shape around `axis` (0..ndim-1). */
void tsl_op_view3(const tsl_op_tensor *t, int axis, int64_t out[3]);
/* [N, ceil(C/x), H*W, x]: a blocked image with its spatial axes merged. */
void tsl_op_view_blocked(const tsl_op_tensor *t, int64_t out[4]);

/* Views arguments first..first+count-1 as blocked images [N, ceil(C/x), H*W, x]. */
void tsl_op_text_views_blocked(tsl_op_text *t, const tsl_op_call *c, int first, int count);
/* The start of a one-stage plain kernel over the output's axes: every argument viewed
 * under its logical shape, the label, the header and "  out[i0, ..., iN] = ". */
void tsl_op_text_begin_plain(tsl_op_text *t, const tsl_op_call *c, const char *label);

/* TSL_ERR_INVALID "<name>: N inputs and M outputs, not ..." unless c has `nin` inputs
 * and `nout` outputs (a negative count: any number >= 1). */
tsl_status tsl_op_check_counts(const tsl_op_call *c, const char *name, int nin, int nout);
/* TSL_ERR_UNSUPPORTED "<name>: ... blocked" when argument a is blocked. */
tsl_status tsl_op_check_plain(const tsl_op_call *c, const char *name, int a);
/* tsl_op_check_counts, then tsl_op_check_plain of every argument. */
tsl_status tsl_op_check_plain_counts(const tsl_op_call *c, const char *name, int nin, int nout);
/* TSL_ERR_INVALID unless arguments first..first+count-1 are images (rank 4) blocked by
 * the same x; *x receives it. */
tsl_status tsl_op_check_blocked(const tsl_op_call *c, const char *name, int first, int count, int64_t *x);
/* Integer attribute `attr` as an axis of a rank-nd tensor: -nd..nd-1 (negative counts
 * from the end) into *axis in 0..nd-1; dflt when absent. TSL_ERR_INVALID otherwise. */
tsl_status tsl_op_call_axis(const tsl_op_call *c, const char *name, const char *attr, int64_t dflt, int nd,
                            int *axis);
/* List attribute `attr` of exactly n integers into out, each >= min; `dflt` (n values)
 * when absent, or TSL_ERR_INVALID "missing attribute" when dflt is NULL. */
tsl_status tsl_op_call_ints_exact(const tsl_op_call *c, const char *name, const char *attr, int n,
                                  const int64_t *dflt, int64_t min, int64_t *out);

/* "i0, i1, ..." of a rank-nd stage. */
void tsl_op_put_axes(tsl_text_buf *b, int nd);
/* "\n    where i0 < D0, ...\n": the extents of a rank-nd stage. */
void tsl_op_put_where(tsl_text_buf *b, int nd, const int64_t *dims);
/* "xA[...]": argument a read under its view, broadcast (numpy rules) against the output
 * axes i0..i(nd-1) of extents out (an extent 1 against a larger one reads index 0). */
void tsl_op_put_bcast_read(tsl_text_buf *b, const tsl_op_text *t, int a, int nd, const int64_t *out);
/* A Clip to [lo, hi] around an operand: the open part before it ("min(max(" as the
 * bounds are finite), the close part after it (", lo), hi)"); an infinite bound is left
 * out. */
void tsl_op_put_clip_open(tsl_text_buf *b, double lo, double hi);
void tsl_op_put_clip_close(tsl_text_buf *b, double lo, double hi);
/* "select(cb*X + c < C, " before and ", 0.0)" after an expression of a blocked element
 * [.., cb, .., c]: zero in the padding lanes. Nothing when C is a multiple of X. */
void tsl_op_put_lane_guard_open(tsl_text_buf *b, int64_t C, int64_t X);
void tsl_op_put_lane_guard_close(tsl_text_buf *b, int64_t C, int64_t X);

#endif
