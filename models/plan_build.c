/* The plan builder of both graph compilers (plan_build.h). */
#include "models/plan_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "dsl/parser.h"
#include "dsl/te.h"
#include "ir/arena.h"
#include "ops/nn/default_schedule.h"
#include "models/node_kernels.h"
#include "models/node_kernels_binary.h"
#include "models/passes/plan_memory.h"
#include "schedule/schedule.h"
#include "tessel/runtime.h"
#include "tuner/autosched.h"
#include "tuner/dispatch.h"

/* ---- kernels: one per distinct workload text ---- */

struct tsl_plan_kernel {
  char *text;
  uint64_t hash;
  const tsl_kernel *kernel;
  tsl_dsl_module *module; /* the parsed text, kept with the kernel (a lowered kernel may name its strings) */
};

static bool debug_on(void) {
  const char *d = getenv("TSL_DEBUG");
  return d && strstr(d, "compile");
}

static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Whether node kernel nk (program p) gets the auto-scheduler's kernel: p has a reduction
 * stage (a pure elementwise kernel's default schedule is already the auto-scheduler's
 * one: inlined, fused outer loops in parallel, vectorized) and neither a hand template of
 * its operator nor a hand schedule in the default (the packed dense layer) nor is it a
 * binary channels-last glue operator or blocked pack (tsl_binary_glue_schedule). */
static bool wants_auto(const tsl_node_kernel *nk, const tsl_te_program *p) {
  if (nk->registry_op && tsl_template_list(nk->registry_op, NULL, 0) > 0) return false;
  if (tsl_binary_has_hand_schedule(nk->registry_op)) return false;
  return !tsl_default_schedule_is_hand(p) && tsl_autosched_applies(p);
}

/* The auto-scheduler's kernel (issue 16 part 4): a registry operator's records of its
 * "OP.auto" template when the compile has records and one matches (tuner/dispatch.h; *p
 * becomes the dispatcher's instance of the same op), else the deterministic default
 * (the first sketch, tuner/autosched.h). */
static tsl_status auto_schedule(tsl_conv_lowering *cl, const tsl_node_kernel *nk, tsl_te_program **p,
                                tsl_schedule **s) {
  if (nk->registry_op && cl->records) {
    const int64_t *shapes[TSL_NODE_KERNEL_MAX_ARGS];
    for (int i = 0; i < nk->ninputs; i++) shapes[i] = nk->shapes[i];
    tsl_workload w;
    tsl_dispatch_info info;
    tsl_te_program *dp = NULL;
    tsl_status st = tsl_workload_init(&w, nk->registry_op, nk->ninputs, shapes, nk->ndims, nk->nparams, nk->params);
    if (st == TSL_OK) st = tsl_dispatch_schedule(cl->records, cl->target, &w, NULL, &dp, s, &info);
    if (st == TSL_OK) {
      *p = dp;
      cl->tuned += info.tuned;
      return TSL_OK;
    }
    tsl_clear_error(); /* the default below */
  }
  return tsl_autosched_default_schedule(*p, cl->target, s);
}

/* The program and schedule of node kernel nk: a bitserial conv's record or template
 * default, a registry operator or the node's text parsed (*mod) with the
 * auto-scheduler's schedule (wants_auto) or the default schedule. */
static tsl_status schedule_node(tsl_plan_builder *b, const tsl_node_kernel *nk, const char *name, tsl_dsl_module **mod,
                                tsl_schedule **s) {
  tsl_conv_lowering *cl = &b->convs;
  tsl_te_program *prog = NULL;
  const int64_t *shapes[TSL_NODE_KERNEL_MAX_ARGS];
  for (int i = 0; i < nk->ninputs; i++) shapes[i] = nk->shapes[i];
  tsl_status st;
  if (tsl_binary_is_bitserial(nk->registry_op)) {
    bool tuned; /* bitserial convs: the tuner's record or the bitserial template's default */
    st = tsl_binary_node_schedule(cl->records, cl->target, nk, stderr, &prog, s, &tuned);
    cl->tuned += st == TSL_OK && tuned;
  } else if (nk->registry_op) {
    st = tsl_op_instantiate(nk->registry_op, nk->ninputs, shapes, nk->ndims, nk->nparams, nk->params, &prog);
    if (st == TSL_OK && tsl_binary_has_hand_schedule(nk->registry_op))
      st = tsl_binary_glue_schedule(nk->registry_op, prog, cl->target, s);
  } else {
    st = tsl_dsl_parse(nk->text, name, mod);
    if (st == TSL_OK)
      st = tsl_dsl_instantiate(tsl_dsl_module_find(*mod, nk->op_name), nk->ninputs, shapes, nk->ndims, 0, NULL, &prog);
    if (st == TSL_OK) st = tsl_te_check(prog);
  }
  if (st == TSL_OK && prog->noutputs != nk->nargs - nk->ninputs)
    st = tsl_error(TSL_ERR_INVALID, "kernel %s has %d outputs, the node %d", name, prog->noutputs,
                   nk->nargs - nk->ninputs);
  if (st == TSL_OK && !*s && b->auto_schedule && !tsl_binary_is_bitserial(nk->registry_op) && wants_auto(nk, prog)) {
    st = auto_schedule(cl, nk, &prog, s);
    b->auto_kernels += st == TSL_OK;
  }
  if (st == TSL_OK && !*s) st = tsl_default_schedule(prog, cl->target, s);
  return st;
}

/* The kernel of node `node` (built once per distinct workload text). */
static tsl_status node_kernel(tsl_plan_builder *b, const tsl_graph *g, int node, const tsl_node_kernel *nk,
                              const tsl_kernel **out) {
  uint64_t h = text_hash(nk->text);
  for (int i = 0; i < b->ncache; i++)
    if (b->cache[i].hash == h && strcmp(b->cache[i].text, nk->text) == 0) {
      *out = b->cache[i].kernel;
      return TSL_OK;
    }
  if (b->ncache == b->capcache) {
    int cap = b->capcache ? 2 * b->capcache : 32;
    tsl_plan_kernel *ne = realloc(b->cache, (size_t)cap * sizeof *ne);
    if (!ne) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", b->who);
    b->cache = ne;
    b->capcache = cap;
  }
  const char *node_name = g->nodes[node].name;
  double t0 = tsl_time_now();
  char name[160];
  snprintf(name, sizeof name, "%s__%08llx", nk->label, (unsigned long long)(h & 0xffffffffu));
  tsl_conv_lowering *cl = &b->convs;
  tsl_arena *arena = cl->kernel_arena ? cl->kernel_arena : tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_dsl_module *mod = NULL;
  tsl_schedule *s = NULL;
  tsl_status st = schedule_node(b, nk, name, &mod, &s);
  if (st == TSL_OK) st = tsl_conv_lowering_build(cl, s, name, out);
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  if (arena != cl->kernel_arena) tsl_arena_free(arena);
  char *text = st == TSL_OK ? strdup(nk->text) : NULL;
  if (st == TSL_OK && !text) st = tsl_error(TSL_ERR_NOMEM, "%s: out of memory", b->who);
  if (st != TSL_OK) {
    tsl_dsl_module_free(mod);
    /* keep the failing stage's message, prefixed with the node */
    char why[1024];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    return tsl_error(st, "%s: node %s (%s): kernel %s: %s", b->who, node_name, tsl_op_name(g->nodes[node].op), name,
                     why);
  }
  b->cache[b->ncache++] = (tsl_plan_kernel){text, h, *out, mod};
  b->kernels++;
  double dt = tsl_time_now() - t0;
  b->build_seconds += dt;
  if (debug_on()) {
    size_t len = strlen(nk->text);
    fprintf(stderr, "%s: built %s for %s in %.1f ms\n%s%s", b->who, name, node_name, dt * 1e3, nk->text,
            len && nk->text[len - 1] == '\n' ? "" : "\n");
  }
  return TSL_OK;
}

/* ---- the plan ---- */

typedef struct step_rec {
  int node;
  const tsl_kernel *kernel;
  tsl_node_kernel nk;
  bool before_conv; /* the call before a conv's own (tsl_lower_convs' pre_steps) */
} step_rec;

/* Bytes as stored (a blocked value holds its padding lanes too). */
static int64_t value_bytes(const tsl_value *v) {
  int64_t s[TSL_MAX_NDIM], n = (int64_t)tsl_dtype_bytes(v->dtype);
  int nd = tsl_value_storage_shape(v, s);
  for (int d = 0; d < nd; d++) n *= s[d];
  return n;
}

/* Concat elision: a channel concat in NCHW[x]c of one image (N = 1) whose inputs are
 * whole channel blocks is, byte for byte, its inputs one after the other. When every
 * input is computed by a kernel of its own (a conv, a channel slice, ...) and read by
 * this concat only, those kernels write straight into their slices of the concat's
 * buffer (root/off) and the concat node runs no kernel (elided). */
static void elide_concats(const tsl_graph *g, const tsl_kernel *const *conv_kernels, int *root, int64_t *off,
                          bool *elided) {
  for (int n = 0; n < g->n_nodes; n++) {
    const tsl_node *c = &g->nodes[n];
    if (c->op != TSL_OP_CONCAT || c->n_outputs != 1) continue;
    const tsl_value *y = &g->values[c->outputs[0]];
    if (y->layout.kind != TSL_LAYOUT_NCHWC || y->ndim != 4 || y->shape[0] != 1 || y->layout.block < 1) continue;
    int64_t X = y->layout.block, plane = y->shape[2] * y->shape[3] * X * (int64_t)tsl_dtype_bytes(y->dtype);
    bool ok = c->n_inputs > 0;
    for (int i = 0; i < c->n_inputs && ok; i++) {
      int v = c->inputs[i];
      const tsl_value *x = v >= 0 ? &g->values[v] : NULL;
      /* (not an elided concat itself: views of views are not made) */
      ok = x && !x->constant && !x->is_input && x->producer >= 0 && !elided[x->producer] &&
           x->layout.kind == TSL_LAYOUT_NCHWC && x->layout.block == X && x->shape[1] % X == 0 && root[v] == v;
      if (ok && !conv_kernels[x->producer]) {
        /* a kernel of its own that writes the value (not a view of another value) */
        tsl_node_kernel nk;
        ok = tsl_node_kernel_make(g, x->producer, &nk) == TSL_OK && nk.kind == TSL_NODE_KERNEL;
        if (ok) tsl_node_kernel_clear(&nk);
      }
      for (int o = 0; ok && o < g->n_outputs; o++) ok = g->outputs[o] != v;
      /* read by this concat, once, and by no other node */
      for (int m = 0; ok && m < g->n_nodes; m++)
        for (int k = 0; ok && k < g->nodes[m].n_inputs; k++)
          if (g->nodes[m].inputs[k] == v && (m != n || k != i)) ok = false;
    }
    /* each slice must start 64-byte aligned: kernels take aligned pointers (runtime/module.h) */
    int64_t at = 0;
    for (int i = 0; i < c->n_inputs && ok; i++) {
      ok = at % TSL_TENSOR_ALIGN == 0;
      at += g->values[c->inputs[i]].shape[1] / X * plane;
    }
    if (!ok) continue;
    at = 0;
    for (int i = 0; i < c->n_inputs; i++) {
      root[c->inputs[i]] = c->outputs[0];
      off[c->inputs[i]] = at;
      at += g->values[c->inputs[i]].shape[1] / X * plane;
    }
    elided[n] = true;
  }
}

/* A compact copy of graph constant src (graph constants may be strided views) into the sink. */
static tsl_status add_constant(tsl_plan_builder *b, const tsl_plan_sink *sink, const tsl_tensor *src, int *buf) {
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(src->dtype, src->ndim, src->shape, &t);
  if (st != TSL_OK) return st;
  if ((st = tsl_tensor_copy_to(src, t->data, tsl_tensor_nbytes(t))) != TSL_OK) {
    tsl_tensor_free(t);
    return st;
  }
  if ((st = sink->constant(sink->self, t, buf)) == TSL_OK) b->constant_bytes += (int64_t)tsl_tensor_nbytes(src);
  return st;
}

/* The conv steps and what the dispatch chose for each (conv_info: per node). */
static tsl_status collect_conv_steps(tsl_plan_builder *b, const tsl_graph *g, const step_rec *steps, int nsteps,
                                     const tsl_dispatch_info *const *conv_info) {
  int nc = 0;
  for (int s = 0; s < nsteps; s++) nc += conv_info[steps[s].node] != NULL && !steps[s].before_conv;
  if (nc > 0 && !(b->conv_steps = calloc((size_t)nc, sizeof *b->conv_steps)))
    return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", b->who);
  for (int s = 0; s < nsteps; s++) {
    const tsl_dispatch_info *di = conv_info[steps[s].node];
    if (!di || steps[s].before_conv) continue;
    tsl_conv_step *cs = &b->conv_steps[b->nconv_steps++];
    cs->step = s;
    snprintf(cs->node, sizeof cs->node, "%s", g->nodes[steps[s].node].name ? g->nodes[steps[s].node].name : "");
    cs->info = *di;
  }
  return TSL_OK;
}

/* Claims the outputs of step s when its kernel is below TSL_CLAIM_MAX_FLOPS_PER_BYTE:
 * those at least as large as each activation it reads that are values of their own
 * (root[v] == v) and have no aliases (aliased[v] false: the sink would refuse a buffer
 * with views). A claim is optional: one the sink refuses is skipped. */
static void claim_step(tsl_plan_builder *b, const tsl_graph *g, const tsl_plan_sink *sink, int s, const step_rec *sr,
                       const int *root, const bool *aliased) {
  double fpb = tsl_conv_lowering_flops_per_byte(&b->convs, sr->kernel);
  if (fpb < 0.0 || fpb >= TSL_CLAIM_MAX_FLOPS_PER_BYTE) return;
  int64_t in_bytes = 0; /* the largest activation read */
  for (int a = 0; a < sr->nk.ninputs; a++) {
    const tsl_value *in = &g->values[sr->nk.values[a]];
    if (!in->constant && value_bytes(in) > in_bytes) in_bytes = value_bytes(in);
  }
  for (int a = sr->nk.ninputs; a < sr->nk.nargs; a++) {
    int v = sr->nk.values[a];
    if (value_bytes(&g->values[v]) < in_bytes || root[v] != v || aliased[v]) continue;
    if (sink->claim(sink->self, s, a) != TSL_OK) {
      tsl_clear_error();
      continue;
    }
    b->claimed++;
  }
}

tsl_status tsl_plan_build(tsl_plan_builder *b, tsl_graph *g, const tsl_graph *orig, const tsl_plan_sink *sink) {
  if (!b || !g || !orig || !sink) return tsl_error(TSL_ERR_INVALID, "plan build: NULL argument");
  /* the convolutions first: they add their transformed weights to g */
  size_t nn = (size_t)(g->n_nodes ? g->n_nodes : 1);
  tsl_node_kernel *conv_steps = calloc(nn, sizeof *conv_steps), *pre_steps = calloc(nn, sizeof *pre_steps);
  const tsl_kernel **conv_kernels = calloc(nn, sizeof *conv_kernels);
  const tsl_dispatch_info **conv_info = calloc(nn, sizeof *conv_info);
  bool *fused_away = calloc(nn, sizeof *fused_away); /* expand convs fused into their depthwise */
  if (!conv_steps || !pre_steps || !conv_kernels || !conv_info || !fused_away) {
    free(conv_steps);
    free(pre_steps);
    free(conv_kernels);
    free(conv_info);
    free(fused_away);
    return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", b->who);
  }
  b->convs.node_info = conv_info;
  b->convs.fused_away = fused_away;
  tsl_status cst = tsl_lower_convs(g, &b->convs, conv_steps, pre_steps, conv_kernels);
  b->convs.node_info = NULL;
  b->convs.fused_away = NULL;
  if (cst != TSL_OK) {
    for (size_t i = 0; i < nn; i++) tsl_node_kernel_clear(&pre_steps[i]);
    free(conv_steps);
    free(pre_steps);
    free(conv_kernels);
    free(conv_info);
    free(fused_away);
    return cst;
  }
  int nv = g->n_values;
  size_t nvs = (size_t)(nv ? nv : 1);
  int *root = malloc(nvs * sizeof *root);      /* value -> the value whose bytes it is */
  int64_t *off = calloc(nvs, sizeof *off);     /* ... from this byte of root's */
  bool *elided = calloc(nn, sizeof *elided);
  int *buf = malloc(nvs * sizeof *buf);        /* value -> plan buffer */
  int *first = malloc(nvs * sizeof *first), *last = malloc(nvs * sizeof *last);
  step_rec *steps = calloc(2 * nn, sizeof *steps); /* a conv may have a step before its own */
  tsl_mem_request *req = malloc(nvs * sizeof *req);
  int64_t *offsets = malloc(nvs * sizeof *offsets);
  int *req_value = malloc(nvs * sizeof *req_value);
  int nsteps = 0;
  tsl_status st = TSL_OK;
  if (!root || !off || !elided || !buf || !first || !last || !steps || !req || !offsets || !req_value) {
    st = tsl_error(TSL_ERR_NOMEM, "%s: out of memory", b->who);
    goto done;
  }
  for (int v = 0; v < nv; v++) {
    root[v] = v;
    buf[v] = -1;
    first[v] = g->values[v].is_input ? 0 : -1;
    last[v] = -1;
  }
  for (size_t i = 0; i < nn && elided; i++) elided[i] = fused_away[i];
  if (b->elide_concats) elide_concats(g, conv_kernels, root, off, elided);
  for (int n = 0; n < g->n_nodes && st == TSL_OK; n++) {
    if (elided[n]) continue;
    tsl_node_kernel nk;
    const tsl_kernel *k;
    if (conv_kernels[n] && pre_steps[n].text) {
      /* the call before the conv's (the scaled weight it reads) */
      const tsl_kernel *pk;
      if ((st = node_kernel(b, g, n, &pre_steps[n], &pk)) != TSL_OK) break;
      for (int a = 0; a < pre_steps[n].nargs; a++) {
        int r = root[pre_steps[n].values[a]];
        if (a >= pre_steps[n].ninputs && first[r] < 0) first[r] = nsteps;
        if (last[r] < nsteps) last[r] = nsteps;
      }
      steps[nsteps++] = (step_rec){n, pk, pre_steps[n], true};
      pre_steps[n].text = NULL; /* owned by the step now */
    }
    if (conv_kernels[n]) {
      nk = conv_steps[n];
      k = conv_kernels[n];
    } else {
      if ((st = tsl_node_kernel_make(g, n, &nk)) != TSL_OK) break;
      if (nk.kind == TSL_NODE_ALIAS) {
        root[nk.values[1]] = root[nk.values[0]];
        off[nk.values[1]] = off[nk.values[0]];
        tsl_node_kernel_clear(&nk);
        continue;
      }
      if ((st = node_kernel(b, g, n, &nk, &k)) != TSL_OK) {
        tsl_node_kernel_clear(&nk);
        break;
      }
    }
    for (int a = 0; a < nk.nargs; a++) {
      int r = root[nk.values[a]];
      if (a >= nk.ninputs && first[r] < 0) first[r] = nsteps;
      if (last[r] < nsteps) last[r] = nsteps;
    }
    steps[nsteps++] = (step_rec){n, k, nk, false};
  }
  if (st != TSL_OK) goto done;
  /* inputs are set once and read by every later run; outputs are read after the run */
  for (int i = 0; i < g->n_inputs; i++) last[root[g->inputs[i]]] = nsteps;
  for (int i = 0; i < g->n_outputs; i++) last[root[g->outputs[i]]] = nsteps;
  int nreq = 0;
  for (int v = 0; v < nv; v++) {
    const tsl_value *val = &g->values[v];
    if (root[v] != v || val->constant || first[v] < 0) continue;
    req[nreq] = (tsl_mem_request){value_bytes(val), first[v], last[v] < first[v] ? first[v] : last[v]};
    req_value[nreq++] = v;
    b->activation_bytes += value_bytes(val);
  }
  if ((st = tsl_pass_plan_memory(nreq, req, offsets, &b->arena_bytes)) != TSL_OK) goto done;
  for (int i = 0; i < nreq && st == TSL_OK; i++)
    st = sink->activation(sink->self, offsets[i], req[i].bytes, &buf[req_value[i]]);
  /* constants read by kernels (and constant graph outputs), then views for aliases */
  for (int s = 0; s < nsteps && st == TSL_OK; s++)
    for (int a = 0; a < steps[s].nk.ninputs && st == TSL_OK; a++) {
      int r = root[steps[s].nk.values[a]];
      if (g->values[r].constant && buf[r] < 0) st = add_constant(b, sink, g->values[r].constant, &buf[r]);
    }
  for (int i = 0; i < g->n_outputs && st == TSL_OK; i++) {
    int r = root[g->outputs[i]];
    if (g->values[r].constant && buf[r] < 0) st = add_constant(b, sink, g->values[r].constant, &buf[r]);
  }
  for (int v = 0; v < nv && st == TSL_OK; v++) {
    if (root[v] == v || buf[root[v]] < 0) continue;
    st = sink->view(sink->self, buf[root[v]], off[v], value_bytes(&g->values[v]), &buf[v]);
  }
  /* claims: aliased[v], another value's bytes are v's (a Reshape's or Identity's alias) */
  bool *aliased = st == TSL_OK && b->claim_outputs && sink->claim ? calloc(nvs, sizeof *aliased) : NULL;
  for (int v = 0; aliased && v < nv; v++)
    if (root[v] != v) aliased[root[v]] = true;
  for (int s = 0; s < nsteps && st == TSL_OK; s++) {
    int args[TSL_NODE_KERNEL_MAX_ARGS];
    for (int a = 0; a < steps[s].nk.nargs; a++) args[a] = buf[steps[s].nk.values[a]];
    char label[256];
    /* a conv's label names the template that scheduled it (its algorithm) */
    if (conv_kernels[steps[s].node])
      snprintf(label, sizeof label, "%.120s [%.120s]", g->nodes[steps[s].node].name, steps[s].nk.label);
    else snprintf(label, sizeof label, "%.250s", g->nodes[steps[s].node].name);
    st = sink->step(sink->self, steps[s].kernel, label, steps[s].nk.nargs, args);
    if (st == TSL_OK && aliased) claim_step(b, g, sink, s, &steps[s], root, aliased);
  }
  free(aliased);
  for (int i = 0; i < g->n_inputs && st == TSL_OK; i++) {
    const tsl_value *val = &g->values[g->inputs[i]];
    st = sink->io(sink->self, false, orig->values[orig->inputs[i]].name, buf[g->inputs[i]], val->dtype, val->ndim,
                  val->shape);
  }
  for (int i = 0; i < g->n_outputs && st == TSL_OK; i++) {
    const tsl_value *val = &g->values[g->outputs[i]];
    if (buf[g->outputs[i]] < 0) {
      st = tsl_error(TSL_ERR_INVALID, "%s: graph output %s is computed by no node", b->who, val->name);
      break;
    }
    st = sink->io(sink->self, true, orig->values[orig->outputs[i]].name, buf[g->outputs[i]], val->dtype, val->ndim,
                  val->shape);
  }
  if (st == TSL_OK && b->want_conv_steps) st = collect_conv_steps(b, g, steps, nsteps, conv_info);
  if (st == TSL_OK) b->steps = nsteps;
done:
  for (int s = 0; steps && s < nsteps; s++) tsl_node_kernel_clear(&steps[s].nk);
  free(root);
  free(off);
  free(elided);
  free(buf);
  free(first);
  free(last);
  free(steps);
  free(req);
  free(offsets);
  free(req_value);
  for (size_t i = 0; i < nn; i++) tsl_node_kernel_clear(&pre_steps[i]);
  free(conv_steps);
  free(pre_steps);
  free(conv_kernels);
  free(conv_info);
  free(fused_away);
  return st;
}

void tsl_plan_builder_clear(tsl_plan_builder *b) {
  if (!b) return;
  for (int i = 0; i < b->ncache; i++) {
    free(b->cache[i].text);
    tsl_dsl_module_free(b->cache[i].module);
  }
  free(b->cache);
  b->cache = NULL;
  b->ncache = b->capcache = 0;
  tsl_conv_lowering_clear(&b->convs);
}
