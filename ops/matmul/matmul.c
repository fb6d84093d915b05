/* Matrix products: matmul (row-major A x B) and dense (a fully connected layer, data x
 * weight^T as in TVM's nn.dense and ONNX Gemm with transB = 1, without bias). */
#include "ops/families.h"

static const char matmul_text[] =
    "// C[M, N] = A[M, K] x B[K, N], row-major\n"
    "op matmul(A: f32[M, K], B: f32[K, N])\n"
    "  @tag(\"matmul\")\n"
    "  C[i, j] = sum(k: A[i, k] * B[k, j])\n";

static const char dense_text[] =
    "// out[B, O] = data[B, K] x weight[O, K]^T (a fully connected layer, no bias)\n"
    "op dense(data: f32[B, K], weight: f32[O, K])\n"
    "  @tag(\"dense\")\n"
    "  out[b, o] = sum(k: data[b, k] * weight[o, k])\n";

static const int rank2[] = {2, 2};
static const int64_t matmul_a[] = {64, 32}, matmul_b[] = {32, 48};
static const int64_t *const matmul_shapes[] = {matmul_a, matmul_b};
static const int64_t dense_data[] = {1, 512}, dense_weight[] = {1000, 512};
static const int64_t *const dense_shapes[] = {dense_data, dense_weight};

static const tsl_op_source family[] = {
    {"matmul", "matrix product C[M, N] = A[M, K] x B[K, N] (f32, row-major)", matmul_text,
     {2, rank2, matmul_shapes, 0, NULL}},
    {"dense", "fully connected layer out[B, O] = data[B, K] x weight[O, K]^T (f32, no bias)", dense_text,
     {2, rank2, dense_shapes, 0, NULL}},
};

const tsl_op_source *tsl_ops_matmul_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
