/* The binary residual streams channels-last (binary_channels_last.h). */
#include "models/passes/binary_channels_last.h"

#include <stdlib.h>
#include <string.h>

#include "models/passes/layout.h"
#include "models/passes/uses.h"

/* The operators of the i32 stream and their channels-last twins: the input index that
 * reads the stream (-1: none) and whether the output is a stream value. */
typedef struct stream_op {
  const char *nchw, *nhwc;
  int port_in;
  bool port_out;
} stream_op;

static const stream_op ops[] = {
    {"quantize_unipolar_i32", "quantize_unipolar_i32_nhwc", -1, true},
    {"bitserial_conv2d_unipolar64_requant", "bitserial_conv2d_unipolar64_requant_nhwc", -1, true},
    {"bitserial_conv2d_unipolar64_requant_add", "bitserial_conv2d_unipolar64_requant_add_nhwc", 4, true},
    {"bitpack_unipolar64_i32", "bitpack_unipolar64_i32_nhwc", 0, false},
    {"binary_global_avgpool_i32", "binary_global_avgpool_i32_nhwc", 0, false},
};

/* The stream operator node n runs, or NULL. */
static const stream_op *stream_op_of(const tsl_graph *g, int n) {
  const tsl_node *nd = &g->nodes[n];
  if (nd->op != TSL_OP_BINARY) return NULL;
  const tsl_attr *k = tsl_node_attr(nd, "kernel");
  if (!k || k->kind != TSL_ATTR_STRING) return NULL;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(k->s, ops[i].nchw) == 0 && nd->n_outputs == 1 && ops[i].port_in < nd->n_inputs) return &ops[i];
  return NULL;
}

/* Whether stream value v can be switched with the nodes marked in ok: a 4-D i32 value
 * written by an ok node's stream output, read only by ok nodes through their stream
 * input, no graph output. */
static bool value_ok(const tsl_graph *g, int v, const stream_op *const *sop, const bool *ok) {
  const tsl_value *val = &g->values[v];
  if (val->ndim != 4 || !tsl_dtype_equal(val->dtype, TSL_DTYPE_I32) || tsl_pass_is_graph_output(g, v)) return false;
  int p = val->producer;
  if (p < 0 || !ok[p] || !sop[p]->port_out) return false;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v && (!ok[n] || sop[n]->port_in != i)) return false;
  return true;
}

tsl_status tsl_pass_binary_channels_last(tsl_graph *g, int *switched) {
  if (switched) *switched = 0;
  if (!g) return tsl_error(TSL_ERR_INVALID, "binary channels-last pass: NULL graph");
  int nn = g->n_nodes;
  if (nn == 0) return TSL_OK;
  const stream_op **sop = calloc((size_t)nn, sizeof *sop);
  bool *ok = calloc((size_t)nn, sizeof *ok);
  if (!sop || !ok) {
    free(sop);
    free(ok);
    return tsl_error(TSL_ERR_NOMEM, "binary channels-last pass: out of memory");
  }
  for (int n = 0; n < nn; n++) ok[n] = (sop[n] = stream_op_of(g, n)) != NULL;
  /* the largest set closed under "a stream value goes with its writer and readers":
   * drop nodes with a value that cannot go until none is dropped */
  for (bool changed = true; changed;) {
    changed = false;
    for (int n = 0; n < nn; n++) {
      if (!ok[n]) continue;
      const tsl_node *nd = &g->nodes[n];
      bool keep = (sop[n]->port_in < 0 || value_ok(g, nd->inputs[sop[n]->port_in], sop, ok)) &&
                  (!sop[n]->port_out || value_ok(g, nd->outputs[0], sop, ok));
      if (!keep) ok[n] = false, changed = true;
    }
  }
  tsl_status st = TSL_OK;
  int count = 0;
  for (int n = 0; n < nn && st == TSL_OK; n++)
    if (ok[n] && (st = tsl_graph_set_attr_string(g, n, "kernel", sop[n]->nhwc)) == TSL_OK) count++;
  /* the new shapes, writers before readers (a checked graph's nodes are in topological
   * order; only the switched nodes' outputs change) */
  for (int n = 0; n < nn && st == TSL_OK; n++)
    if (ok[n]) st = tsl_graph_infer_node(g, n);
  free(sop);
  free(ok);
  if (st == TSL_OK && switched) *switched = count;
  return st;
}
