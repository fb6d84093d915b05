/* Binary operators read the blocked f32 tensor of their producer (binary_read_blocked.h). */
#include "models/passes/binary_read_blocked.h"

#include <string.h>

#include "models/passes/layout.h"
#include "models/passes/uses.h"

/* The operators with a blocked twin: plain name, twin name, and the word the block must
 * divide (a pack's word; 0: any block). */
static const struct {
  const char *plain, *blocked;
  int word;
} twins[] = {
    {"bitpack_bipolar32", "bitpack_bipolar32_nchwc", 32},
    {"bitpack_bipolar64", "bitpack_bipolar64_nchwc", 64},
    {"bitpack_unipolar32", "bitpack_unipolar32_nchwc", 32},
    {"bitpack_unipolar64", "bitpack_unipolar64_nchwc", 64},
    {"quantize_unipolar_i32_nhwc", "quantize_unipolar_i32_nchwc_nhwc", 0},
};

/* The unpack to f32 levels and its twin writing blocked NCHW[x]c. */
static const char unpack_plain[] = "bitunpack_unipolar64", unpack_blocked[] = "bitunpack_unipolar64_nchwc";

/* The twin of node nd reading blocks of `block` channels, or NULL. */
static const char *twin_of(const tsl_node *nd, int block) {
  if (nd->op != TSL_OP_BINARY || nd->n_inputs != 1 || block < 1) return NULL;
  const tsl_attr *k = tsl_node_attr(nd, "kernel");
  if (!k || k->kind != TSL_ATTR_STRING) return NULL;
  for (size_t i = 0; i < sizeof twins / sizeof twins[0]; i++)
    if (strcmp(k->s, twins[i].plain) == 0) return twins[i].word % block == 0 ? twins[i].blocked : NULL;
  return NULL;
}

tsl_status tsl_pass_binary_read_blocked(tsl_graph *g, int *switched) {
  if (switched) *switched = 0;
  if (!g) return tsl_error(TSL_ERR_INVALID, "binary blocked-read pass: NULL graph");
  int count = 0;
  tsl_status st = TSL_OK;
  for (int n = 0; n < g->n_nodes && st == TSL_OK; n++) {
    const tsl_node *nd = &g->nodes[n];
    if (nd->op != TSL_OP_BINARY || nd->n_inputs != 1) continue;
    int in = nd->inputs[0], t = in >= 0 ? g->values[in].producer : -1;
    if (t < 0) continue;
    const tsl_node *tn = &g->nodes[t];
    if (tn->op != TSL_OP_IDENTITY || tsl_node_attr_int(tn, TSL_ATTR_LAYOUT_TRANSFORM, 0) != 1 || tn->n_inputs != 1 ||
        tn->inputs[0] < 0)
      continue;
    int blocked = tn->inputs[0];
    const tsl_value *b = &g->values[blocked];
    if (b->layout.kind != TSL_LAYOUT_NCHWC || b->ndim != 4 || g->values[in].layout.kind != TSL_LAYOUT_PLAIN) continue;
    const char *twin = twin_of(nd, b->layout.block);
    if (!twin) continue;
    int64_t C = b->shape[1];
    int ins[1] = {blocked};
    st = tsl_graph_set_node_inputs(g, n, 1, ins);
    if (st == TSL_OK) st = tsl_graph_set_attr_string(g, n, "kernel", twin);
    if (st == TSL_OK) st = tsl_graph_set_attr_int(g, n, "C", C);
    if (st == TSL_OK) st = tsl_graph_infer_node(g, n);
    if (st == TSL_OK) count++;
  }
  /* the other direction: an unpack read only through a transform to blocked NCHW[x]c
   * writes the blocked tensor itself */
  for (int n = 0; n < g->n_nodes && st == TSL_OK; n++) {
    const tsl_node *nd = &g->nodes[n];
    const tsl_attr *k = tsl_node_attr(nd, "kernel");
    if (nd->op != TSL_OP_BINARY || nd->n_outputs != 1 || !k || k->kind != TSL_ATTR_STRING ||
        strcmp(k->s, unpack_plain) != 0)
      continue;
    int v = nd->outputs[0], t = tsl_pass_single_user_op(g, v, TSL_OP_IDENTITY, NULL);
    if (t < 0 || g->values[v].layout.kind != TSL_LAYOUT_PLAIN || g->values[v].ndim != 4) continue;
    const tsl_node *tn = &g->nodes[t];
    if (tsl_node_attr_int(tn, TSL_ATTR_LAYOUT_TRANSFORM, 0) != 1 || tn->n_outputs != 1) continue;
    int u = tn->outputs[0];
    tsl_layout lay = g->values[u].layout;
    if (lay.kind != TSL_LAYOUT_NCHWC || lay.block < 1 || 64 % lay.block != 0 || g->values[u].ndim != 4) continue;
    st = tsl_graph_set_attr_string(g, n, "kernel", unpack_blocked);
    if (st == TSL_OK) st = tsl_graph_set_attr_int(g, n, "X", lay.block);
    if (st == TSL_OK) {
      g->values[v].layout = lay;
      st = tsl_graph_replace_uses(g, u, v);
    }
    if (st == TSL_OK) st = tsl_graph_infer_node(g, n);
    if (st == TSL_OK) count++;
  }
  /* the transforms nobody reads any more */
  if (st == TSL_OK && count > 0) st = tsl_graph_prune(g);
  if (st == TSL_OK && switched) *switched = count;
  return st;
}
