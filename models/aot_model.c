/* Ahead-of-time compilation of a whole model (aot_model.h). The graph-to-plan steps
 * follow tsl_graph_compile (models/compile.c) one for one — same passes, the same
 * convolution lowering (models/compile_conv.h: dispatch, weight pre-transforms run
 * here on a host JIT), the same kernel per workload text and schedule choice for the
 * other nodes, the same lifetimes and memory planning — so an AOT file computes what
 * the JIT plan computes; only the kernels are lowered for the target and collected for
 * one shared object instead of being JIT-compiled, and the plan goes to a
 * tsl_model_writer instead of a tsl_graph_plan. */
#include "models/aot_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/aot.h"
#include "codegen/jit.h"
#include "codegen/kernel_abi.h"
#include "ops/registry.h"
#include "dsl/parser.h"
#include "dsl/te.h"
#include "ir/arena.h"
#include "models/compile.h"
#include "models/compile_conv.h"
#include "ops/nn/default_schedule.h"
#include "models/node_kernels.h"
#include "models/node_kernels_binary.h"
#include "models/passes/plan_memory.h"
#include "runtime/model_file.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tuner/records.h"

typedef struct aot_kernel {
  char *text;   /* the workload text; NULL for a conv kernel (compile_conv.h dedupes those) */
  uint64_t hash;
  char name[160];
  tsl_func *func;         /* lowered in the compiler's arena */
  tsl_dsl_module *module; /* kept alive with the func (it may name its strings) */
} aot_kernel;

typedef struct aot_compiler {
  tsl_target target;
  tsl_records *records;
  tsl_arena *arena; /* every lowered kernel */
  aot_kernel *kernels;
  int nkernels, cap;
  tsl_conv_lowering convs;
  tsl_module *standins; /* conv kernels as compile_conv.h returns them: name + signature */
} aot_compiler;

/* What a stand-in kernel points at; never called (the plan is written, not run). */
static int32_t standin_fn(void) { return 1; }

/* A zeroed kernel appended to c->kernels (counted once the caller has filled it); *out is
 * NULL when allocation fails. */
static tsl_status push_kernel(aot_compiler *c, aot_kernel **out) {
  *out = NULL;
  if (c->nkernels == c->cap) {
    int cap = c->cap ? 2 * c->cap : 32;
    aot_kernel *nkp = realloc(c->kernels, (size_t)cap * sizeof *nkp);
    if (!nkp) return tsl_error(TSL_ERR_NOMEM, "aot compile: out of memory");
    c->kernels = nkp;
    c->cap = cap;
  }
  *out = &c->kernels[c->nkernels];
  memset(*out, 0, sizeof **out);
  return TSL_OK;
}

/* compile_conv.h's build_kernel hook: lowers conv kernel `name` for the target (in
 * c->arena, which is also the conv lowering's kernel_arena, so the program lives on)
 * and hands back a stand-in with its name and signature. */
static tsl_status build_conv(void *ctx, const tsl_schedule *s, const char *name, const tsl_kernel **out) {
  aot_compiler *c = ctx;
  aot_kernel *k;
  tsl_status st = push_kernel(c, &k);
  if (st != TSL_OK) return st;
  snprintf(k->name, sizeof k->name, "%s", name);
  tsl_lower_options o = tsl_lower_options_default();
  o.vector_bits = c->target.vector_bits;
  tsl_kernel_sig sig;
  if ((st = tsl_lower_with(s, name, &o, &k->func)) != TSL_OK) return st;
  if ((st = tsl_codegen_kernel_sig(k->func, &sig)) != TSL_OK) return st;
  if ((st = tsl_module_add_kernel(c->standins, name, (void *)standin_fn, &sig)) != TSL_OK) return st;
  c->nkernels++;
  return tsl_module_get_kernel(c->standins, name, out);
}

static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The kernel of node `node` (lowered once per distinct workload text); *out is its index. */
static tsl_status lower_kernel(aot_compiler *c, const tsl_graph *g, int node, const tsl_node_kernel *nk, int *out) {
  uint64_t h = text_hash(nk->text);
  for (int i = 0; i < c->nkernels; i++)
    if (c->kernels[i].text && c->kernels[i].hash == h && strcmp(c->kernels[i].text, nk->text) == 0) {
      *out = i;
      return TSL_OK;
    }
  aot_kernel *k;
  tsl_status st = push_kernel(c, &k);
  if (st != TSL_OK) return st;
  snprintf(k->name, sizeof k->name, "%s__%08llx", nk->label, (unsigned long long)(h & 0xffffffffu));
  tsl_schedule *s = NULL;
  tsl_te_program *prog = NULL;
  const int64_t *shapes[TSL_NODE_KERNEL_MAX_ARGS];
  for (int i = 0; i < nk->ninputs; i++) shapes[i] = nk->shapes[i];
  if (tsl_binary_is_bitserial(nk->registry_op)) {
    bool tuned; /* bitserial convs: the tuner's record or the bitserial template's default */
    st = tsl_binary_node_schedule(c->records, &c->target, nk, stderr, &prog, &s, &tuned);
  } else if (nk->registry_op) {
    st = tsl_op_instantiate(nk->registry_op, nk->ninputs, shapes, nk->ndims, nk->nparams, nk->params, &prog);
  } else {
    st = tsl_dsl_parse(nk->text, k->name, &k->module);
    if (st == TSL_OK)
      st = tsl_dsl_instantiate(tsl_dsl_module_find(k->module, nk->op_name), nk->ninputs, shapes, nk->ndims, 0, NULL,
                               &prog);
    if (st == TSL_OK) st = tsl_te_check(prog);
  }
  if (st == TSL_OK && prog->noutputs != nk->nargs - nk->ninputs)
    st = tsl_error(TSL_ERR_INVALID, "kernel %s has %d outputs, the node %d", k->name, prog->noutputs,
                   nk->nargs - nk->ninputs);
  if (st == TSL_OK && !s) st = tsl_default_schedule(prog, &c->target, &s);
  if (st == TSL_OK) {
    tsl_lower_options o = tsl_lower_options_default();
    o.vector_bits = c->target.vector_bits; /* as tsl_build does with the JIT's target */
    st = tsl_lower_with(s, k->name, &o, &k->func);
  }
  tsl_schedule_free(s);
  if (st == TSL_OK && !(k->text = strdup(nk->text))) st = tsl_error(TSL_ERR_NOMEM, "aot compile: out of memory");
  if (st != TSL_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    tsl_dsl_module_free(k->module);
    return tsl_error(st, "aot compile: node %s (%s): kernel %s: %s", g->nodes[node].name, tsl_op_name(g->nodes[node].op),
                     k->name, why);
  }
  k->hash = h;
  *out = c->nkernels++;
  return TSL_OK;
}

typedef struct step_rec {
  int node;
  const char *kernel; /* its name in the object */
  bool conv;
  tsl_node_kernel nk;
} step_rec;

static int64_t value_bytes(const tsl_value *v) {
  int64_t s[TSL_MAX_NDIM], n = (int64_t)tsl_dtype_bytes(v->dtype);
  int nd = tsl_value_storage_shape(v, s);
  for (int d = 0; d < nd; d++) n *= s[d];
  return n;
}

/* A compact copy of a graph constant (graph constants may be strided views). */
static tsl_status add_constant(tsl_model_writer *w, const tsl_tensor *src, int *buf) {
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(src->dtype, src->ndim, src->shape, &t);
  if (st != TSL_OK) return st;
  if ((st = tsl_tensor_copy_to(src, t->data, tsl_tensor_nbytes(t))) == TSL_OK)
    st = tsl_model_writer_add_constant(w, t, buf);
  tsl_tensor_free(t);
  return st;
}

/* g is the optimized graph, orig the graph as given (its value names are the user's). */
static tsl_status make_plan(aot_compiler *c, tsl_graph *g, const tsl_graph *orig, tsl_model_writer *w,
                            tsl_aot_model_stats *stats) {
  /* the convolutions first: they add their transformed weights to g */
  size_t nn = (size_t)(g->n_nodes ? g->n_nodes : 1);
  tsl_node_kernel *conv_steps = calloc(nn, sizeof *conv_steps);
  const tsl_kernel **conv_kernels = calloc(nn, sizeof *conv_kernels);
  if (!conv_steps || !conv_kernels) {
    free(conv_steps);
    free(conv_kernels);
    return tsl_error(TSL_ERR_NOMEM, "aot compile: out of memory");
  }
  tsl_status cst = tsl_lower_convs(g, &c->convs, conv_steps, conv_kernels);
  if (cst != TSL_OK) {
    free(conv_steps);
    free(conv_kernels);
    return cst;
  }
  int nv = g->n_values;
  size_t nvs = (size_t)(nv ? nv : 1);
  int *root = malloc(nvs * sizeof *root), *buf = malloc(nvs * sizeof *buf);
  int *first = malloc(nvs * sizeof *first), *last = malloc(nvs * sizeof *last);
  step_rec *steps = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *steps);
  tsl_mem_request *req = malloc(nvs * sizeof *req);
  int64_t *offsets = malloc(nvs * sizeof *offsets);
  int *req_value = malloc(nvs * sizeof *req_value);
  int nsteps = 0;
  tsl_status st = TSL_OK;
  if (!root || !buf || !first || !last || !steps || !req || !offsets || !req_value) {
    st = tsl_error(TSL_ERR_NOMEM, "aot compile: out of memory");
    goto done;
  }
  for (int v = 0; v < nv; v++) {
    root[v] = v;
    buf[v] = -1;
    first[v] = g->values[v].is_input ? 0 : -1;
    last[v] = -1;
  }
  for (int n = 0; n < g->n_nodes && st == TSL_OK; n++) {
    tsl_node_kernel nk;
    const char *kname;
    if (conv_kernels[n]) {
      nk = conv_steps[n];
      kname = tsl_kernel_name(conv_kernels[n]);
    } else {
      if ((st = tsl_node_kernel_make(g, n, &nk)) != TSL_OK) break;
      if (nk.kind == TSL_NODE_ALIAS) {
        root[nk.values[1]] = root[nk.values[0]];
        tsl_node_kernel_clear(&nk);
        continue;
      }
      int k = -1;
      if ((st = lower_kernel(c, g, n, &nk, &k)) != TSL_OK) {
        tsl_node_kernel_clear(&nk);
        break;
      }
      kname = c->kernels[k].name;
    }
    for (int a = 0; a < nk.nargs; a++) {
      int r = root[nk.values[a]];
      if (a >= nk.ninputs && first[r] < 0) first[r] = nsteps;
      if (last[r] < nsteps) last[r] = nsteps;
    }
    steps[nsteps++] = (step_rec){n, kname, conv_kernels[n] != NULL, nk};
  }
  if (st != TSL_OK) goto done;
  for (int i = 0; i < g->n_inputs; i++) last[root[g->inputs[i]]] = nsteps;
  for (int i = 0; i < g->n_outputs; i++) last[root[g->outputs[i]]] = nsteps;
  int nreq = 0;
  for (int v = 0; v < nv; v++) {
    const tsl_value *val = &g->values[v];
    if (root[v] != v || val->constant || first[v] < 0) continue;
    req[nreq] = (tsl_mem_request){value_bytes(val), first[v], last[v] < first[v] ? first[v] : last[v]};
    req_value[nreq++] = v;
  }
  int64_t peak;
  if ((st = tsl_pass_plan_memory(nreq, req, offsets, &peak)) != TSL_OK) goto done;
  stats->arena_bytes = peak;
  for (int i = 0; i < nreq && st == TSL_OK; i++)
    st = tsl_model_writer_add_activation(w, offsets[i], req[i].bytes, &buf[req_value[i]]);
  for (int s = 0; s < nsteps && st == TSL_OK; s++)
    for (int a = 0; a < steps[s].nk.ninputs && st == TSL_OK; a++) {
      int r = root[steps[s].nk.values[a]];
      const tsl_value *val = &g->values[r];
      if (!val->constant || buf[r] >= 0) continue;
      st = add_constant(w, val->constant, &buf[r]);
      if (st == TSL_OK) stats->constant_bytes += (int64_t)tsl_tensor_nbytes(val->constant);
    }
  for (int i = 0; i < g->n_outputs && st == TSL_OK; i++) {
    int r = root[g->outputs[i]];
    const tsl_value *val = &g->values[r];
    if (buf[r] >= 0 || !val->constant) continue;
    st = add_constant(w, val->constant, &buf[r]);
    if (st == TSL_OK) stats->constant_bytes += (int64_t)tsl_tensor_nbytes(val->constant);
  }
  for (int v = 0; v < nv && st == TSL_OK; v++) {
    if (root[v] == v || buf[root[v]] < 0) continue;
    st = tsl_model_writer_add_view(w, buf[root[v]], 0, value_bytes(&g->values[v]), &buf[v]);
  }
  for (int s = 0; s < nsteps && st == TSL_OK; s++) {
    int args[TSL_NODE_KERNEL_MAX_ARGS];
    for (int a = 0; a < steps[s].nk.nargs; a++) args[a] = buf[steps[s].nk.values[a]];
    char label[256];
    /* a conv's label names the template that scheduled it (its algorithm), as compile.c */
    if (steps[s].conv)
      snprintf(label, sizeof label, "%.120s [%.120s]", g->nodes[steps[s].node].name, steps[s].nk.label);
    else snprintf(label, sizeof label, "%.250s", g->nodes[steps[s].node].name);
    st = tsl_model_writer_add_step(w, steps[s].kernel, label, steps[s].nk.nargs, args);
  }
  for (int i = 0; i < g->n_inputs && st == TSL_OK; i++) {
    const tsl_value *val = &g->values[g->inputs[i]];
    st = tsl_model_writer_add_input(w, orig->values[orig->inputs[i]].name, buf[g->inputs[i]], val->dtype, val->ndim,
                                    val->shape);
  }
  for (int i = 0; i < g->n_outputs && st == TSL_OK; i++) {
    const tsl_value *val = &g->values[g->outputs[i]];
    if (buf[g->outputs[i]] < 0) {
      st = tsl_error(TSL_ERR_INVALID, "aot compile: graph output %s is computed by no node", val->name);
      break;
    }
    st = tsl_model_writer_add_output(w, orig->values[orig->outputs[i]].name, buf[g->outputs[i]], val->dtype, val->ndim,
                                     val->shape);
  }
  stats->steps = nsteps;
done:
  for (int s = 0; steps && s < nsteps; s++) tsl_node_kernel_clear(&steps[s].nk);
  free(root);
  free(buf);
  free(first);
  free(last);
  free(steps);
  free(req);
  free(offsets);
  free(req_value);
  free(conv_steps);
  free(conv_kernels);
  return st;
}

tsl_status tsl_aot_compile_model(const tsl_graph *g, const tsl_aot_model_options *opts, const char *out_so,
                                 tsl_aot_model_stats *stats) {
  if (!g || !out_so || !out_so[0]) return tsl_error(TSL_ERR_INVALID, "aot compile: NULL argument");
  tsl_aot_model_stats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  tsl_aot_model_options o = {0};
  if (opts) o = *opts;
  double t0 = tsl_time_now();
  aot_compiler c = {0};
  tsl_status st = tsl_target_parse(o.target ? o.target : "host", &c.target);
  if (st != TSL_OK) return st;
  if (o.records) {
    if ((st = tsl_records_new(&c.records)) != TSL_OK) return st;
    if ((st = tsl_records_load(c.records, o.records, true, stderr)) != TSL_OK) {
      tsl_records_free(c.records);
      return st;
    }
  }
  char tstr[256];
  tsl_target_str(&c.target, tstr, sizeof tstr);
  tsl_graph *work = NULL;
  tsl_model_writer *w = NULL;
  tsl_jit *host_jit = NULL;
  tsl_module *weights = NULL;
  tsl_target host;
  c.arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(c.arena);
  const tsl_func **funcs = NULL;
  bool wrote = false;
  if ((st = tsl_graph_clone(g, &work)) != TSL_OK) goto done;
  int block = o.no_layout ? 0 : tsl_target_f32_lanes(&c.target);
  if ((st = tsl_graph_optimize(work, block, NULL)) != TSL_OK) goto done;
  /* the convolutions' weight programs run here, whatever the target: a host JIT */
  if ((st = tsl_target_parse("host", &host)) != TSL_OK || (st = tsl_jit_new(&host, &host_jit)) != TSL_OK) goto done;
  if ((st = tsl_module_new(&weights)) != TSL_OK || (st = tsl_module_new(&c.standins)) != TSL_OK) goto done;
  c.convs.jit = host_jit;
  c.convs.module = weights;
  c.convs.target = &c.target;
  c.convs.records = c.records;
  c.convs.warn = o.verbose ? stderr : NULL;
  c.convs.build_kernel = build_conv;
  c.convs.build_ctx = &c;
  c.convs.kernel_arena = c.arena;
  if ((st = tsl_model_writer_new(tstr, &w)) != TSL_OK) goto done;
  if ((st = make_plan(&c, work, g, w, stats)) != TSL_OK) goto done;
  if (c.records && c.convs.missed && !o.verbose)
    fprintf(stderr,
            "tessel: warning: no tuning record for %d of %d distinct conv workloads on %s (first: %s); using the "
            "default schedules for them (per-layer lines: --verbose)\n",
            c.convs.missed, c.convs.kernels, tstr, c.convs.missed_key);
  if (c.nkernels == 0) {
    st = tsl_error(TSL_ERR_UNSUPPORTED, "aot compile: the model has no kernel to compile");
    goto done;
  }
  if (!(funcs = malloc((size_t)c.nkernels * sizeof *funcs))) {
    st = tsl_error(TSL_ERR_NOMEM, "aot compile: out of memory");
    goto done;
  }
  for (int i = 0; i < c.nkernels; i++) funcs[i] = c.kernels[i].func;
  double t1 = tsl_time_now();
  stats->lower_seconds = t1 - t0;
  wrote = true;
  if ((st = tsl_aot_compile(funcs, c.nkernels, &c.target, out_so)) != TSL_OK) goto done;
  st = tsl_model_writer_append(w, out_so, &stats->plan_bytes);
  stats->codegen_seconds = tsl_time_now() - t1;
done:
  if (st != TSL_OK && wrote) unlink(out_so);
  stats->kernels = c.nkernels;
  stats->conv_layers = c.convs.layers;
  stats->records_used = c.convs.tuned;
  stats->records_missed = c.convs.missed;
  stats->weight_seconds = c.convs.weight_seconds;
  free(funcs);
  for (int i = 0; i < c.nkernels; i++) {
    free(c.kernels[i].text);
    tsl_dsl_module_free(c.kernels[i].module);
  }
  free(c.kernels);
  tsl_conv_lowering_clear(&c.convs);
  tsl_module_free(weights);
  tsl_module_free(c.standins);
  tsl_jit_free(host_jit);
  tsl_records_free(c.records);
  tsl_model_writer_free(w);
  tsl_graph_free(work);
  tsl_arena_set_current(prev);
  tsl_arena_free(c.arena);
  return st;
}
