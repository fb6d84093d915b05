/* Conv + bias + activation (+ residual add) fusion (fuse_conv.h). */
#include "models/passes/fuse_conv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn/activation.h"

#include "models/passes/uses.h"

static bool same_shape(const tsl_value *a, const tsl_value *b) {
  if (a->ndim != b->ndim || a->ndim < 0) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

/* Folds the Add node `add` (y + r or r + y) into conv `conv` whose output is y. */
static tsl_status fuse_add(tsl_graph *g, int conv, int add, bool *done) {
  *done = false;
  const tsl_node *a = &g->nodes[add], *c = &g->nodes[conv];
  int y = c->outputs[0];
  if (a->n_inputs != 2 || c->n_inputs > 3 || tsl_node_attr(c, TSL_ATTR_ACTIVATION)) return TSL_OK;
  int r = a->inputs[0] == y ? a->inputs[1] : a->inputs[0];
  if (r < 0 || r == y || !same_shape(&g->values[r], &g->values[y]) || !same_shape(&g->values[a->outputs[0]], &g->values[y]))
    return TSL_OK;
  int ins[4] = {c->inputs[0], c->inputs[1], c->n_inputs > 2 ? c->inputs[2] : -1, r};
  tsl_status st = tsl_graph_set_node_inputs(g, conv, 4, ins);
  if (st == TSL_OK) st = tsl_graph_replace_uses(g, g->nodes[add].outputs[0], y);
  *done = st == TSL_OK;
  return st;
}

tsl_status tsl_node_fused_function(const tsl_graph *g, const tsl_node *n, const tsl_activation **fn, double *attrs) {
  *fn = NULL;
  if (tsl_node_attr_int(n, TSL_ATTR_ACTIVATION, TSL_ACT_NONE) != TSL_ACT_FUNCTION) return TSL_OK;
  const tsl_attr *f = tsl_node_attr(n, TSL_ATTR_ACT_FUNCTION);
  const tsl_attr *va = tsl_node_attr(n, TSL_ATTR_ACT_ATTRS);
  int na = va && va->kind == TSL_ATTR_FLOATS ? va->n : 0;
  const double *v = na ? va->floats : NULL;
  const tsl_activation *a = f && f->kind == TSL_ATTR_STRING ? tsl_activation_find(f->s) : NULL;
  (void)g;
  if (!a)
    return tsl_error(TSL_ERR_UNSUPPORTED, "node %s: fused activation '%s' is not in the activation table", n->name,
                     f && f->kind == TSL_ATTR_STRING ? f->s : "(none)");
  if (a->nattrs && (!v || na != a->nattrs))
    return tsl_error(TSL_ERR_INVALID, "node %s: fused %s needs %d attribute values, has %d", n->name, a->onnx_op,
                     a->nattrs, v ? na : 0);
  for (int i = 0; i < a->nattrs; i++) attrs[i] = v[i];
  *fn = a;
  return TSL_OK;
}

/* Fuses the tsl.Activation node `act` into node `prod` (a Conv, Gemm or MatMul). */
static tsl_status fuse_function(tsl_graph *g, int prod, int act) {
  const tsl_activation *a;
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  tsl_status st = tsl_node_activation(g, &g->nodes[act], &a, attrs);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(g, prod, TSL_ATTR_ACTIVATION, TSL_ACT_FUNCTION);
  if (st == TSL_OK) st = tsl_graph_set_attr_string(g, prod, TSL_ATTR_ACT_FUNCTION, a->onnx_op);
  if (st == TSL_OK && a->nattrs) st = tsl_graph_set_attr_floats(g, prod, TSL_ATTR_ACT_ATTRS, a->nattrs, attrs);
  return st;
}

/* Whether the activation node `act` stays a kernel of its own after node `prod`: a
 * transcendental function (exp, tanh, erf: tsl_activation_transcendental) after a grouped
 * or depthwise conv, when the layout block is below TSL_FUSE_TRANSCENDENTAL_MIN_BLOCK
 * lanes (or the graph is not blocked). Measured on EfficientNet-B0 at 1 thread (AVX2):
 * fused into the window template's register tile, Swish took 27% more than conv + a
 * separate Swish pass (its constants and temporaries spill the tile's accumulators); in
 * the 1x1 GEMM tile +3%, piecewise-linear HardSwish / HardSigmoid in depthwise convs
 * (MobileNetV3) +1%. The window template's epilogue pass (conv_common.h) removes the
 * spills, but at 8 lanes the fused convs still measured 3-10% slower than conv + a
 * separate Swish pass; at 16 lanes (AVX-512, 32 vector registers) fused was faster
 * (fuse_conv.h). */
static bool keep_separate(const tsl_graph *g, int block, int prod, int act) {
  const tsl_activation *a;
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  if (block >= TSL_FUSE_TRANSCENDENTAL_MIN_BLOCK) return false;
  if (g->nodes[prod].op != TSL_OP_CONV || tsl_node_attr_int(&g->nodes[prod], "group", 1) == 1) return false;
  return tsl_node_activation(g, &g->nodes[act], &a, attrs) == TSL_OK && tsl_activation_transcendental(a);
}

static tsl_status fuse_act(tsl_graph *g, int block, int conv, int act, bool *done) {
  *done = false;
  const tsl_node *a = &g->nodes[act], *c = &g->nodes[conv];
  if (a->n_inputs != 1 || tsl_node_attr(c, TSL_ATTR_ACTIVATION)) return TSL_OK;
  if (a->op == TSL_OP_ACTIVATION && keep_separate(g, block, conv, act)) return TSL_OK;
  tsl_status st;
  if (a->op == TSL_OP_ACTIVATION) {
    st = fuse_function(g, conv, act);
  } else if (a->op == TSL_OP_RELU) {
    st = tsl_graph_set_attr_int(g, conv, TSL_ATTR_ACTIVATION, TSL_ACT_RELU);
  } else {
    double lo = tsl_node_attr_float(a, "min", -INFINITY), hi = tsl_node_attr_float(a, "max", INFINITY);
    st = tsl_graph_set_attr_int(g, conv, TSL_ATTR_ACTIVATION, TSL_ACT_CLIP);
    if (st == TSL_OK) st = tsl_graph_set_attr_float(g, conv, TSL_ATTR_CLIP_MIN, lo);
    if (st == TSL_OK) st = tsl_graph_set_attr_float(g, conv, TSL_ATTR_CLIP_MAX, hi);
  }
  if (st == TSL_OK) st = tsl_graph_replace_uses(g, g->nodes[act].outputs[0], g->nodes[conv].outputs[0]);
  *done = st == TSL_OK;
  return st;
}

tsl_status tsl_pass_fuse_conv(tsl_graph *g, int block, int *fused) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "fuse_conv: NULL graph");
  int count = 0;
  bool *dead = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *dead);
  if (!dead) return tsl_error(TSL_ERR_NOMEM, "fuse_conv: out of memory");
  tsl_status st = TSL_OK;
  /* Visit convs last to first: of an Add of two conv outputs (a residual block with a
   * downsampling branch), the later conv takes the add, so its other operand is
   * already computed and the order stays topological in the common case. */
  for (int i = g->n_nodes - 1; i >= 0 && st == TSL_OK; i--) {
    tsl_op op = g->nodes[i].op;
    bool conv = op == TSL_OP_CONV, gemm = op == TSL_OP_GEMM || op == TSL_OP_MATMUL;
    if ((!conv && !gemm) || dead[i] || g->nodes[i].n_outputs != 1) continue;
    int y = g->nodes[i].outputs[0];
    int user = tsl_pass_single_user(g, y, dead);
    bool done = false;
    if (conv && user >= 0 && g->nodes[user].op == TSL_OP_ADD) {
      if ((st = fuse_add(g, i, user, &done)) != TSL_OK) break;
      if (done) {
        dead[user] = true;
        count++;
        user = tsl_pass_single_user(g, y, dead);
      }
    }
    tsl_op uop = user >= 0 ? g->nodes[user].op : TSL_OP_IDENTITY;
    if (user >= 0 && (uop == TSL_OP_ACTIVATION || (conv && (uop == TSL_OP_RELU || uop == TSL_OP_CLIP)))) {
      if ((st = fuse_act(g, block, i, user, &done)) != TSL_OK) break;
      if (done) {
        dead[user] = true;
        count++;
      }
    }
  }
  free(dead);
  if (st != TSL_OK) return st;
  if (fused) *fused = count;
  if (!count) return TSL_OK;
  if ((st = tsl_graph_toposort(g)) != TSL_OK) return st;
  return tsl_graph_prune(g);
}
