/* Elementwise operators on NCHW tensors, tagged "elemwise" so that they fuse into their
 * producer or consumer. */
#include "ops/families.h"

static const char relu_text[] =
    "// max(x, 0) propagates NaN (ir/ir.h), as ONNX Relu does\n"
    "op relu(data: f32[N, C, H, W])\n"
    "  @tag(\"elemwise\")\n"
    "  out[n, c, h, w] = max(data[n, c, h, w], 0.0)\n";

static const char add_text[] =
    "op add(a: f32[N, C, H, W], b: f32[N, C, H, W])\n"
    "  @tag(\"elemwise\")\n"
    "  out[n, c, h, w] = a[n, c, h, w] + b[n, c, h, w]\n";

static const int rank4[] = {4};
static const int rank4x2[] = {4, 4};
static const int64_t act[] = {1, 16, 32, 32};
static const int64_t *const one_act[] = {act};
static const int64_t *const two_act[] = {act, act};

static const tsl_op_source family[] = {
    {"relu", "rectified linear unit out = max(data, 0) on NCHW (f32)", relu_text, {1, rank4, one_act, 0, NULL}},
    {"add", "elementwise sum out = a + b of two NCHW tensors of one shape (f32)", add_text,
     {2, rank4x2, two_act, 0, NULL}},
};

const tsl_op_source *tsl_ops_elemwise_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
