/* x * gate(x) -> one activation (fuse_gating.h). */
#include "models/passes/fuse_gating.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "models/passes/uses.h"
#include "ops/nn/activation.h"

/* The fused function for gate node `gate` (a tsl.Activation), or NULL when the gate is
 * not one of the self-gating ones. */
static const char *fused_function(const tsl_graph *g, const tsl_node *gate) {
  const tsl_activation *a;
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  if (gate->op != TSL_OP_ACTIVATION || tsl_node_activation(g, gate, &a, attrs) != TSL_OK) return NULL;
  if (strcmp(a->onnx_op, "Sigmoid") == 0) return "Swish";
  /* HardSwish is x * HardSigmoid(x) at exactly these constants, up to f32 rounding */
  if (strcmp(a->onnx_op, "HardSigmoid") == 0 && fabs(attrs[0] - 1.0 / 6.0) < 1e-7 && attrs[1] == 0.5)
    return "HardSwish";
  return NULL;
}

static tsl_status rewrite(tsl_graph *g, int i, bool *dead, void *ctx, bool *done) {
  (void)ctx;
  const tsl_node *mul = &g->nodes[i];
  if (mul->op != TSL_OP_MUL || mul->n_inputs != 2 || mul->n_outputs != 1 ||
      tsl_pass_is_graph_output(g, mul->outputs[0]))
    return TSL_OK;
  for (int k = 0; k < 2; k++) {
    int x = mul->inputs[1 - k], gv = mul->inputs[k];
    if (x < 0 || gv < 0 || x == gv) continue;
    int gate = g->values[gv].producer;
    if (gate < 0 || g->nodes[gate].n_inputs != 1 || g->nodes[gate].inputs[0] != x ||
        tsl_pass_single_user(g, gv, dead) != i)
      continue;
    const char *f = fused_function(g, &g->nodes[gate]);
    if (!f) continue;
    /* the gate computes the fused function; the Mul's readers read it instead */
    tsl_status st = tsl_graph_set_attr_string(g, gate, "function", f);
    if (st == TSL_OK && strcmp(f, "Swish") == 0) st = tsl_graph_set_attr_float(g, gate, "alpha", 1.0);
    if (st == TSL_OK) st = tsl_graph_replace_uses(g, mul->outputs[0], gv);
    if (st != TSL_OK) return st;
    dead[i] = *done = true;
    return TSL_OK;
  }
  return TSL_OK;
}

tsl_status tsl_pass_fuse_gating(tsl_graph *g, int *fused) {
  return tsl_pass_rewrite_each(g, "fuse_gating", rewrite, NULL, fused);
}
