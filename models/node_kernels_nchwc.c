/* Nodes in the blocked layout NCHW[x]c (node_kernels.h): the stored shape, the layout
 * transforms (registry operators), and which operators have a blocked kernel (the
 * generators of ops/ write them from the arguments' layout, keeping the padding lanes,
 * channels past C in the last block, zero). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/node_kernels_internal.h"
#include "models/passes/layout.h"
#include "ops/op_text.h"

int tsl_value_storage_shape(const tsl_value *v, int64_t shape[TSL_MAX_NDIM]) {
  if (v->ndim < 0) return 0;
  tsl_op_tensor t = {.ndim = v->ndim, .block = v->layout.kind == TSL_LAYOUT_NCHWC ? v->layout.block : 0};
  memcpy(t.shape, v->shape, sizeof t.shape);
  return tsl_op_tensor_storage(&t, shape); /* ops/op_text.h: the generators' rule */
}

static void add_storage_arg(tsl_node_kernel *k, const tsl_graph *g, int value) {
  int64_t s[TSL_MAX_NDIM];
  int nd = tsl_value_storage_shape(&g->values[value], s);
  tsl_nk_add_arg(k, value, nd, s);
}

/* Registry op with integer params; the key lists the op, the argument shapes and params. */
static void key_of(tsl_node_kernel *k, tsl_text_buf *b) {
  tsl_text_put(b, "%s(", k->registry_op);
  for (int a = 0; a < k->nargs; a++) {
    tsl_text_put(b, "%s", a ? "; " : "");
    for (int d = 0; d < k->ndims[a]; d++) tsl_text_put(b, "%s%lld", d ? "x" : "", (long long)k->shapes[a][d]);
  }
  for (int p = 0; p < k->nparams; p++) {
    if (k->params[p].kind == TSL_DSL_PARAM_INT) tsl_text_put(b, ", %s=%lld", k->params[p].name, (long long)k->params[p].i);
    else tsl_text_put(b, ", %s=%.9g", k->params[p].name, k->params[p].f);
  }
  tsl_text_put(b, ")");
}

static void iparam(tsl_node_kernel *k, const char *name, int64_t v) { k->params[k->nparams++] = tsl_dsl_int_param(name, v); }

tsl_status tsl_nk_make_transform(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0), *y = &g->values[n->outputs[0]];
  if (x->ndim != 4) return tsl_nk_node_err(g, node, TSL_ERR_INVALID, "a layout transform of a non-image value");
  add_storage_arg(k, g, n->inputs[0]);
  k->ninputs = 1;
  add_storage_arg(k, g, n->outputs[0]);
  if (y->layout.kind == TSL_LAYOUT_NCHWC && x->layout.kind == TSL_LAYOUT_PLAIN) {
    k->registry_op = "nchw_to_nchwc";
    iparam(k, "block", y->layout.block);
  } else if (y->layout.kind == TSL_LAYOUT_PLAIN && x->layout.kind == TSL_LAYOUT_NCHWC) {
    k->registry_op = "nchwc_to_nchw";
    iparam(k, "channels", x->shape[1]);
  } else {
    k->registry_op = "nchwc_reblock";
    iparam(k, "channels", x->shape[1]);
    iparam(k, "block", y->layout.block);
  }
  snprintf(k->label, sizeof k->label, "%s", k->registry_op);
  key_of(k, b);
  return TSL_OK;
}

tsl_status tsl_node_kernel_weight_scale(const tsl_graph *g, int weight, const int64_t view[5], int scale, int out,
                                        tsl_node_kernel *k) {
  if (!g || !view || !k || weight < 0 || scale < 0 || out < 0 || weight >= g->n_values || scale >= g->n_values ||
      out >= g->n_values)
    return tsl_error(TSL_ERR_INVALID, "compile: weight scale: bad arguments");
  memset(k, 0, sizeof *k);
  const tsl_value *w = &g->values[weight], *s = &g->values[scale], *o = &g->values[out];
  int64_t ss[TSL_MAX_NDIM], n_s = 1, n_w = 1, n_o = 1, sv[2] = {view[1], view[3]};
  int nd = tsl_value_storage_shape(s, ss);
  for (int d = 0; d < nd; d++) n_s *= ss[d];
  for (int d = 0; d < w->ndim; d++) n_w *= w->shape[d];
  for (int d = 0; d < o->ndim; d++) n_o *= o->shape[d];
  int64_t n_view = view[0] * view[1] * view[2] * view[3] * view[4];
  /* the scale's storage [CB, x], or (view[1] == 1: the weight's C channels in one block)
   * its first view[3] values, which are channels 0 .. C-1 of one image */
  bool blocked = s->layout.block == view[3] && n_s == view[1] * view[3];
  bool prefix = view[1] == 1 && view[3] <= n_s;
  if (s->layout.kind != TSL_LAYOUT_NCHWC || !(blocked || prefix) || n_w != n_view || n_o != n_view)
    return tsl_error(TSL_ERR_INVALID, "compile: weight scale: the scale %s (one image, blocked by %lld) does not fit "
                     "the weight %s seen as %lldx%lldx%lldx%lldx%lld",
                     s->name, (long long)view[3], w->name, (long long)view[0], (long long)view[1], (long long)view[2],
                     (long long)view[3], (long long)view[4]);
  tsl_nk_add_arg(k, weight, 5, view);
  tsl_nk_add_arg(k, scale, 2, sv);
  k->ninputs = 2;
  tsl_nk_add_arg(k, out, 5, view);
  k->kind = TSL_NODE_KERNEL;
  k->registry_op = "conv_weight_channel_scale";
  snprintf(k->op_name, sizeof k->op_name, "k");
  snprintf(k->label, sizeof k->label, "%s", k->registry_op);
  tsl_text_buf b = {0};
  key_of(k, &b);
  if (b.oom) {
    free(b.s);
    return tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
  }
  k->text = b.s;
  return TSL_OK;
}

tsl_status tsl_nk_check_nchwc(const tsl_graph *g, int node) {
  switch (g->nodes[node].op) {
  case TSL_OP_CONV:
    /* its algorithm, kernel and weights come from the tuner's dispatch */
    return tsl_nk_node_err(g, node, TSL_ERR_INVALID,
                           "a blocked conv is built by the graph compiler's conv path (models/compile_conv.h)");
  case TSL_OP_MAX_POOL:
  case TSL_OP_AVERAGE_POOL:
  case TSL_OP_GLOBAL_AVERAGE_POOL:
  case TSL_OP_REDUCE_MEAN:
  case TSL_OP_RELU:
  case TSL_OP_CLIP:
  case TSL_OP_ADD:
  case TSL_OP_MUL:
  case TSL_OP_SUB:
  case TSL_OP_DIV: /* broadcasting or dividing: padding lanes guarded (ops/nn elemwise) */
  case TSL_OP_RESIZE:
  case TSL_OP_PRELU:
  case TSL_OP_ACTIVATION:
  case TSL_OP_BATCH_NORM:
  case TSL_OP_CONCAT:
  case TSL_OP_SLICE:
  case TSL_OP_CHANNEL_SHUFFLE:
  case TSL_OP_CHANNEL_GATHER:
  case TSL_OP_LAYER_NORM:      /* over the channels (ops/nn/layer_norm.c) */
  case TSL_OP_SQUEEZE_EXCITE: /* blocked only (ops/nn/squeeze_excite.c) */
  case TSL_OP_BINARY:         /* its operator writes the value's storage: bitunpack's blocked
                                 twin and the lookup-table conv only (tsl_binary_infer_node
                                 refuses any other) */
    return TSL_OK;
  default: return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "no blocked (NCHW[x]c) kernel for this operator");
  }
}
