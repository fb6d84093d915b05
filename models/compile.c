/* The graph compiler driver (compile.h). */
#include "models/compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/jit.h"
#include "ops/registry.h"
#include "dsl/parser.h"
#include "dsl/te.h"
#include "ir/arena.h"
#include "models/compile_conv.h"
#include "ops/nn/default_schedule.h"
#include "models/node_kernels.h"
#include "models/node_kernels_binary.h"
#include "models/passes/channel_shuffle.h"
#include "models/passes/fold_batch_norm.h"
#include "models/passes/fold_constants.h"
#include "models/passes/fuse_conv.h"
#include "models/passes/plan_memory.h"
#include "models/passes/layout.h"
#include "models/passes/pack_dense.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tuner/records.h"

static bool debug_on(void) {
  const char *d = getenv("TSL_DEBUG");
  return d && strstr(d, "compile");
}

tsl_status tsl_graph_optimize(tsl_graph *g, int block, tsl_compile_stats *stats) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "graph optimize: NULL graph");
  tsl_compile_stats local;
  if (!stats) stats = &local;
  stats->nodes_before = g->n_nodes;
  tsl_status st = tsl_pass_fold_constants(g, &stats->constants_folded);
  if (st == TSL_OK) st = tsl_pass_fold_batch_norm(g, &stats->batch_norms_folded);
  if (st == TSL_OK) st = tsl_pass_fuse_conv(g, &stats->nodes_fused);
  if (st == TSL_OK) st = tsl_pass_channel_shuffle(g, &stats->channel_shuffles);
  /* packing first: the layout pass then leaves the packed weights alone instead of
   * transposing them for the packing to copy again */
  if (st == TSL_OK && block > 0) st = tsl_pass_pack_dense(g, block, NULL);
  if (st == TSL_OK && block > 0) st = tsl_pass_select_layout(g, block, &stats->layout_transforms);
  stats->nodes_after = g->n_nodes;
  return st;
}

/* ---- kernels: one per distinct workload text ---- */

typedef struct kernel_entry {
  char *text;
  uint64_t hash;
  const tsl_kernel *kernel;
} kernel_entry;

typedef struct compiler {
  tsl_jit *jit;
  tsl_module *module;
  kernel_entry *kernels;
  int nkernels, cap;
  tsl_target target;
  const tsl_records *records; /* NULL: default schedules */
  tsl_records *owned;          /* records loaded from a file (freed at the end) */
  double build_seconds;
  tsl_conv_lowering convs;
  tsl_conv_step *conv_steps;   /* wanted by tsl_graph_compile_conv_steps, else NULL */
  int nconv_steps;
  bool want_conv_steps;
} compiler;

static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static tsl_status build_kernel(compiler *c, const tsl_graph *g, int node, const tsl_node_kernel *nk,
                               const tsl_kernel **out) {
  uint64_t h = text_hash(nk->text);
  for (int i = 0; i < c->nkernels; i++)
    if (c->kernels[i].hash == h && strcmp(c->kernels[i].text, nk->text) == 0) {
      *out = c->kernels[i].kernel;
      return TSL_OK;
    }
  const char *node_name = g->nodes[node].name;
  double t0 = tsl_time_now();
  char name[160];
  snprintf(name, sizeof name, "%s__%08llx", nk->label, (unsigned long long)(h & 0xffffffffu));
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_dsl_module *mod = NULL;
  tsl_schedule *s = NULL;
  tsl_te_program *prog = NULL;
  const int64_t *shapes[TSL_NODE_KERNEL_MAX_ARGS];
  for (int i = 0; i < nk->ninputs; i++) shapes[i] = nk->shapes[i];
  tsl_status st;
  if (tsl_binary_is_bitserial(nk->registry_op)) {
    bool tuned; /* bitserial convs: the tuner's record or the bitserial template's default */
    st = tsl_binary_node_schedule(c->records, &c->target, nk, stderr, &prog, &s, &tuned);
    c->convs.tuned += st == TSL_OK && tuned;
  } else if (nk->registry_op) {
    st = tsl_op_instantiate(nk->registry_op, nk->ninputs, shapes, nk->ndims, nk->nparams, nk->params, &prog);
  } else {
    st = tsl_dsl_parse(nk->text, name, &mod);
    if (st == TSL_OK)
      st = tsl_dsl_instantiate(tsl_dsl_module_find(mod, nk->op_name), nk->ninputs, shapes, nk->ndims, 0, NULL, &prog);
    if (st == TSL_OK) st = tsl_te_check(prog);
  }
  if (st == TSL_OK && prog->noutputs != nk->nargs - nk->ninputs)
    st = tsl_error(TSL_ERR_INVALID, "kernel %s has %d outputs, the node %d", name, prog->noutputs,
                   nk->nargs - nk->ninputs);
  if (st == TSL_OK && !s) st = tsl_default_schedule(prog, &c->target, &s);
  if (st == TSL_OK) st = tsl_build(s, name, c->jit, c->module, NULL, NULL);
  tsl_schedule_free(s);
  tsl_dsl_module_free(mod);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  if (st != TSL_OK) {
    /* keep the failing stage's message, prefixed with the node */
    char why[1024];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    return tsl_error(st, "compile: node %s (%s): kernel %s: %s", node_name, tsl_op_name(g->nodes[node].op), name, why);
  }
  if ((st = tsl_module_get_kernel(c->module, name, out)) != TSL_OK) return st;
  if (c->nkernels == c->cap) {
    int cap = c->cap ? 2 * c->cap : 32;
    kernel_entry *ne = realloc(c->kernels, (size_t)cap * sizeof *ne);
    if (!ne) return tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
    c->kernels = ne;
    c->cap = cap;
  }
  char *text = strdup(nk->text);
  if (!text) return tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
  c->kernels[c->nkernels++] = (kernel_entry){text, h, *out};
  double dt = tsl_time_now() - t0;
  c->build_seconds += dt;
  if (debug_on()) {
    size_t len = strlen(nk->text);
    fprintf(stderr, "compile: built %s for %s in %.1f ms\n%s%s", name, node_name, dt * 1e3, nk->text,
            len && nk->text[len - 1] == '\n' ? "" : "\n");
  }
  return TSL_OK;
}

/* ---- the plan ---- */

typedef struct step_rec {
  int node;
  const tsl_kernel *kernel;
  tsl_node_kernel nk;
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

/* g is the optimized graph; names come from `orig`, the graph as given (passes may
 * have renamed the values that are now its outputs). */
static tsl_status make_plan(compiler *c, tsl_graph *g, const tsl_graph *orig, tsl_graph_plan *plan,
                            tsl_compile_stats *stats) {
  /* the convolutions first: they add their transformed weights to g */
  tsl_node_kernel *conv_steps = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *conv_steps);
  const tsl_kernel **conv_kernels = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *conv_kernels);
  const tsl_dispatch_info **conv_info = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *conv_info);
  if (!conv_steps || !conv_kernels || !conv_info) {
    free(conv_steps);
    free(conv_kernels);
    free(conv_info);
    return tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
  }
  c->convs.node_info = conv_info;
  tsl_status cst = tsl_lower_convs(g, &c->convs, conv_steps, conv_kernels);
  c->convs.node_info = NULL;
  if (cst != TSL_OK) {
    free(conv_steps);
    free(conv_kernels);
    free(conv_info);
    return cst;
  }
  int nv = g->n_values;
  int *root = malloc((size_t)nv * sizeof *root);   /* value -> the value whose bytes it is */
  int64_t *off = calloc((size_t)(nv ? nv : 1), sizeof *off); /* ... from this byte of root's */
  bool *elided = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *elided);
  int *buf = malloc((size_t)nv * sizeof *buf);     /* value -> plan buffer */
  int *first = malloc((size_t)nv * sizeof *first), *last = malloc((size_t)nv * sizeof *last);
  step_rec *steps = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *steps);
  tsl_mem_request *req = malloc((size_t)(nv ? nv : 1) * sizeof *req);
  int64_t *offsets = malloc((size_t)(nv ? nv : 1) * sizeof *offsets);
  int *req_value = malloc((size_t)(nv ? nv : 1) * sizeof *req_value);
  int nsteps = 0;
  tsl_status st = TSL_OK;
  if (!root || !buf || !first || !last || !steps || !req || !offsets || !req_value) {
    st = tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
    goto done;
  }
  for (int v = 0; v < nv; v++) {
    root[v] = v;
    buf[v] = -1;
    first[v] = g->values[v].is_input ? 0 : -1;
    last[v] = -1;
  }
  if (!off || !elided) {
    st = tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
    goto done;
  }
  elide_concats(g, conv_kernels, root, off, elided);
  for (int n = 0; n < g->n_nodes && st == TSL_OK; n++) {
    if (elided[n]) continue;
    tsl_node_kernel nk;
    const tsl_kernel *k;
    if (conv_kernels[n]) {
      nk = conv_steps[n];
      k = conv_kernels[n];
    } else {
      if ((st = tsl_node_kernel_make(g, n, &nk)) != TSL_OK) break;
      if (nk.kind == TSL_NODE_ALIAS) {
        root[nk.values[1]] = root[nk.values[0]];
        off[nk.values[1]] = off[nk.values[0]];
        continue;
      }
      if ((st = build_kernel(c, g, n, &nk, &k)) != TSL_OK) {
        tsl_node_kernel_clear(&nk);
        break;
      }
    }
    for (int a = 0; a < nk.nargs; a++) {
      int r = root[nk.values[a]];
      if (a >= nk.ninputs && first[r] < 0) first[r] = nsteps;
      if (last[r] < nsteps) last[r] = nsteps;
    }
    steps[nsteps++] = (step_rec){n, k, nk};
  }
  if (st != TSL_OK) goto done;
  /* inputs are set once and read by every later run; outputs are read after the run */
  for (int i = 0; i < g->n_inputs; i++) last[root[g->inputs[i]]] = nsteps;
  for (int i = 0; i < g->n_outputs; i++) last[root[g->outputs[i]]] = nsteps;
  int nreq = 0;
  stats->activation_bytes = 0;
  for (int v = 0; v < nv; v++) {
    const tsl_value *val = &g->values[v];
    if (root[v] != v || val->constant || first[v] < 0) continue;
    req[nreq] = (tsl_mem_request){value_bytes(val), first[v], last[v] < first[v] ? first[v] : last[v]};
    req_value[nreq++] = v;
    stats->activation_bytes += value_bytes(val);
  }
  int64_t peak;
  if ((st = tsl_pass_plan_memory(nreq, req, offsets, &peak)) != TSL_OK) goto done;
  for (int i = 0; i < nreq && st == TSL_OK; i++)
    st = tsl_graph_plan_add_activation(plan, offsets[i], req[i].bytes, &buf[req_value[i]]);
  /* constants read by kernels, then views for aliases */
  for (int s = 0; s < nsteps && st == TSL_OK; s++)
    for (int a = 0; a < steps[s].nk.ninputs && st == TSL_OK; a++) {
      int r = root[steps[s].nk.values[a]];
      const tsl_value *val = &g->values[r];
      if (!val->constant || buf[r] >= 0) continue;
      tsl_tensor *t;
      if ((st = tsl_tensor_new(val->constant->dtype, val->constant->ndim, val->constant->shape, &t)) != TSL_OK) break;
      if ((st = tsl_tensor_copy_to(val->constant, t->data, tsl_tensor_nbytes(t))) != TSL_OK) {
        tsl_tensor_free(t);
        break;
      }
      st = tsl_graph_plan_add_constant(plan, t, &buf[r]);
    }
  for (int i = 0; i < g->n_outputs && st == TSL_OK; i++) {
    int r = root[g->outputs[i]];
    const tsl_value *val = &g->values[r];
    if (buf[r] >= 0 || !val->constant) continue;
    tsl_tensor *t;
    if ((st = tsl_tensor_new(val->constant->dtype, val->constant->ndim, val->constant->shape, &t)) != TSL_OK) break;
    if ((st = tsl_tensor_copy_to(val->constant, t->data, tsl_tensor_nbytes(t))) == TSL_OK)
      st = tsl_graph_plan_add_constant(plan, t, &buf[r]);
    else tsl_tensor_free(t);
  }
  for (int v = 0; v < nv && st == TSL_OK; v++) {
    if (root[v] == v || buf[root[v]] < 0) continue;
    st = tsl_graph_plan_add_view(plan, buf[root[v]], off[v], value_bytes(&g->values[v]), &buf[v]);
  }
  for (int s = 0; s < nsteps && st == TSL_OK; s++) {
    int args[TSL_NODE_KERNEL_MAX_ARGS];
    for (int a = 0; a < steps[s].nk.nargs; a++) args[a] = buf[steps[s].nk.values[a]];
    char label[256];
    /* a conv's label names the template that scheduled it (its algorithm) */
    if (conv_kernels[steps[s].node])
      snprintf(label, sizeof label, "%.120s [%.120s]", g->nodes[steps[s].node].name, steps[s].nk.label);
    else snprintf(label, sizeof label, "%.250s", g->nodes[steps[s].node].name);
    st = tsl_graph_plan_add_step(plan, steps[s].kernel, label, steps[s].nk.nargs, args);
  }
  for (int i = 0; i < g->n_inputs && st == TSL_OK; i++) {
    const tsl_value *val = &g->values[g->inputs[i]];
    st = tsl_graph_plan_add_input(plan, orig->values[orig->inputs[i]].name, buf[g->inputs[i]], val->dtype, val->ndim,
                                  val->shape);
  }
  for (int i = 0; i < g->n_outputs && st == TSL_OK; i++) {
    const tsl_value *val = &g->values[g->outputs[i]];
    if (buf[g->outputs[i]] < 0) {
      st = tsl_error(TSL_ERR_INVALID, "compile: graph output %s is computed by no node", val->name);
      break;
    }
    st = tsl_graph_plan_add_output(plan, orig->values[orig->outputs[i]].name, buf[g->outputs[i]], val->dtype, val->ndim,
                                   val->shape);
  }
  if (st == TSL_OK && c->want_conv_steps) {
    int nc = 0;
    for (int s = 0; s < nsteps; s++) nc += conv_info[steps[s].node] != NULL;
    if (nc > 0 && !(c->conv_steps = calloc((size_t)nc, sizeof *c->conv_steps)))
      st = tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
    for (int s = 0; st == TSL_OK && s < nsteps; s++) {
      const tsl_dispatch_info *di = conv_info[steps[s].node];
      if (!di) continue;
      tsl_conv_step *cs = &c->conv_steps[c->nconv_steps++];
      cs->step = s;
      snprintf(cs->node, sizeof cs->node, "%s", g->nodes[steps[s].node].name ? g->nodes[steps[s].node].name : "");
      cs->info = *di;
    }
  }
  stats->steps = nsteps;
  stats->planned_peak_bytes = tsl_graph_plan_arena_bytes(plan);
  stats->constant_bytes = tsl_graph_plan_constant_bytes(plan);
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
  free(conv_steps);
  free(conv_kernels);
  free(conv_info);
  return st;
}

static tsl_status compile_graph(const tsl_graph *g, const tsl_compile_options *opts, tsl_graph_plan **out,
                                tsl_compile_stats *stats, tsl_conv_step **conv_steps, int *nconv) {
  if (!g || !out) return tsl_error(TSL_ERR_INVALID, "compile: NULL argument");
  *out = NULL;
  tsl_compile_stats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  tsl_compile_options o = {0};
  if (opts) o = *opts;
  double t0 = tsl_time_now();
  compiler c = {0};
  c.want_conv_steps = conv_steps != NULL;
  tsl_status st = tsl_target_parse(o.target ? o.target : "host", &c.target);
  if (st != TSL_OK) return st;
  if (o.records_db) {
    c.records = o.records_db;
  } else if (o.records) {
    if ((st = tsl_records_new(&c.owned)) != TSL_OK) return st;
    if ((st = tsl_records_load(c.owned, o.records, true, stderr)) != TSL_OK) {
      tsl_records_free(c.owned);
      return st;
    }
    c.records = c.owned;
  }
  tsl_graph *work = NULL;
  tsl_graph_plan *plan = NULL;
  if ((st = tsl_graph_clone(g, &work)) != TSL_OK) {
    tsl_records_free(c.owned);
    return st;
  }
  int block = o.no_layout ? 0 : tsl_target_f32_lanes(&c.target);
  if (!o.no_passes) st = tsl_graph_optimize(work, block, stats);
  else stats->nodes_before = stats->nodes_after = work->n_nodes;
  stats->pass_seconds = tsl_time_now() - t0;
  if (st == TSL_OK && debug_on()) {
    fprintf(stderr, "compile: graph after the passes\n");
    tsl_graph_print(work, stderr);
  }
  if (st == TSL_OK) st = tsl_jit_new(&c.target, &c.jit);
  if (st == TSL_OK) st = tsl_module_new(&c.module);
  if (st == TSL_OK) st = tsl_graph_plan_new(&plan);
  if (st == TSL_OK) {
    tsl_graph_plan_set_module(plan, c.module);
    c.convs.jit = c.jit;
    c.convs.module = c.module;
    c.convs.target = &c.target;
    c.convs.records = c.records;
    c.convs.warn = o.verbose ? stderr : NULL;
    st = make_plan(&c, work, g, plan, stats);
  } else {
    tsl_module_free(c.module);
  }
  stats->kernels = c.nkernels + c.convs.kernels;
  stats->conv_layers = c.convs.layers;
  stats->records_used = c.convs.tuned;
  stats->records_missed = c.convs.missed;
  if (st == TSL_OK && c.records && c.convs.missed && !o.verbose) {
    char target[192];
    tsl_target_str(&c.target, target, sizeof target);
    /* one line per model (per layer with verbose: tuner/dispatch.h's line) */
    fprintf(stderr,
            "tessel: warning: no tuning record for %d of %d distinct conv workloads on %s (first: %s); using the "
            "default schedules for them (per-layer lines: --verbose)\n",
            c.convs.missed, c.convs.kernels, target, c.convs.missed_key);
  }
  tsl_records_free(c.owned);
  stats->build_seconds = c.build_seconds + c.convs.build_seconds;
  stats->weight_seconds = c.convs.weight_seconds;
  tsl_conv_lowering_clear(&c.convs);
  for (int i = 0; i < c.nkernels; i++) free(c.kernels[i].text);
  free(c.kernels);
  tsl_jit_free(c.jit);
  tsl_graph_free(work);
  if (st != TSL_OK) {
    tsl_graph_plan_free(plan);
    free(c.conv_steps);
    return st;
  }
  stats->total_seconds = tsl_time_now() - t0;
  *out = plan;
  if (conv_steps) {
    *conv_steps = c.conv_steps;
    *nconv = c.nconv_steps;
  }
  return TSL_OK;
}

tsl_status tsl_graph_compile(const tsl_graph *g, const tsl_compile_options *opts, tsl_graph_plan **out,
                             tsl_compile_stats *stats) {
  return compile_graph(g, opts, out, stats, NULL, NULL);
}

tsl_status tsl_graph_compile_conv_steps(const tsl_graph *g, const tsl_compile_options *opts, tsl_graph_plan **out,
                                        tsl_compile_stats *stats, tsl_conv_step **conv_steps, int *nconv) {
  if (!conv_steps || !nconv) return tsl_error(TSL_ERR_INVALID, "compile: NULL conv_steps");
  *conv_steps = NULL;
  *nconv = 0;
  return compile_graph(g, opts, out, stats, conv_steps, nconv);
}
