/* Packing the weights of fully connected layers with few rows (pack_dense.h). */
#include "models/passes/pack_dense.h"

#include <stdio.h>

/* The panel width for N columns at the graph's block: the block when it divides N, else
 * the widest power of two below it, down to 4, that does (1000 classes at 16 lanes: 8);
 * 0 when none does. */
static int panel_width(int64_t N, int block) {
  if (N % block == 0) return block;
  int p = 1;
  while (p * 2 < block) p *= 2;
  for (; p >= 4; p /= 2)
    if (N % p == 0) return p;
  return 0;
}

/* Rows, reduction, columns and panel width of node n's product when it is one to pack,
 * else false. */
static bool packable(const tsl_graph *g, const tsl_node *n, int block, int64_t *M, int64_t *K, int64_t *N,
                     int *panel) {
  if ((n->op != TSL_OP_GEMM && n->op != TSL_OP_MATMUL) || n->n_inputs < 2 || n->n_outputs != 1 || n->inputs[0] < 0 ||
      n->inputs[1] < 0 || tsl_node_attr_int(n, TSL_ATTR_PACKED_DENSE, 0))
    return false;
  const tsl_value *a = &g->values[n->inputs[0]], *w = &g->values[n->inputs[1]], *y = &g->values[n->outputs[0]];
  const tsl_tensor *b = w->constant;
  if (!b || b->ndim != 2 || !tsl_dtype_equal(b->dtype, TSL_DTYPE_F32) || a->ndim < 2 || y->ndim < 2) return false;
  bool tb = n->op == TSL_OP_GEMM && tsl_node_attr_int(n, "transB", 0);
  if (n->op == TSL_OP_GEMM && a->ndim != 2) return false;
  *K = tb ? b->shape[1] : b->shape[0];
  *N = tb ? b->shape[0] : b->shape[1];
  int64_t rows = 1;
  for (int d = 0; d + 1 < y->ndim; d++) rows *= y->shape[d];
  *M = rows;
  *panel = *N >= 1 ? panel_width(*N, block) : 0;
  return y->shape[y->ndim - 1] == *N && rows >= 1 && rows <= TSL_PACK_DENSE_MAX_ROWS && *panel > 0 && *K >= 1;
}

static tsl_status pack_one(tsl_graph *g, int node, int block, int64_t K, int64_t N) {
  const tsl_node *n = &g->nodes[node];
  const tsl_tensor *b = g->values[n->inputs[1]].constant;
  bool tb = n->op == TSL_OP_GEMM && tsl_node_attr_int(n, "transB", 0);
  int64_t shape[3] = {N / block, K, block};
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, 3, shape, &t);
  if (st != TSL_OK) return st;
  const float *bf = tsl_tensor_is_contiguous(b) ? (const float *)b->data : NULL;
  float *p = t->data;
  for (int64_t ob = 0; ob < N / block; ob++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t o = 0; o < block; o++) {
        int64_t col = ob * block + o, src = tb ? col * K + k : k * N + col;
        *p++ = bf ? bf[src] : (float)tsl_tensor_get_f64(b, src);
      }
  char name[300];
  snprintf(name, sizeof name, "%s.packed%d", g->values[n->inputs[1]].name, block);
  int id;
  if ((st = tsl_graph_add_constant(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, t, &id)) != TSL_OK) return st;
  g->nodes[node].inputs[1] = id;
  if (tb && (st = tsl_graph_set_attr_int(g, node, "transB", 0)) != TSL_OK) return st;
  return tsl_graph_set_attr_int(g, node, TSL_ATTR_PACKED_DENSE, block);
}

tsl_status tsl_pass_pack_dense(tsl_graph *g, int block, int *packed) {
  if (!g || block < 1) return tsl_error(TSL_ERR_INVALID, "pack_dense: bad arguments");
  int count = 0;
  tsl_status st = TSL_OK;
  for (int i = 0; i < g->n_nodes && st == TSL_OK; i++) {
    int64_t M, K, N;
    int panel;
    if (!packable(g, &g->nodes[i], block, &M, &K, &N, &panel)) continue;
    if ((st = pack_one(g, i, panel, K, N)) == TSL_OK) count++;
  }
  if (packed) *packed = count;
  return st;
}
