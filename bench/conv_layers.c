/* bench/conv_layers: every convolution layer of SqueezeNet 1.1, ResNet-18 and
 * MobileNetV2 (shapes from the ONNX files in ../shared/models), each tessel algorithm
 * with its default config against oneDNN's direct convolution, one thread, in one
 * process. A benchmark, not a test: nothing here runs in the test suite.
 *
 *   conv_layers [--models squeezenet1_1,resnet18,mobilenet_v2] [--models-dir DIR]
 *               [--rounds R] [--repeat N] [--min-ms MS] [--filter SUBSTRING] [--no-peak]
 *               [--algos direct,gemm1x1,...] [--knobs name=value,...] [--schedule]
 *               [--records FILE] [--layer C,HxW,K,RxS,s,p,g ...]
 *
 * Each layer is taken as the graph states it: N x C x H x W input, K x C/g x R x S
 * weights, strides, paddings, dilations, groups, bias, and the activation that follows
 * it when the conv's only consumer is a Relu (relu) or a Clip (clip min..max); residual
 * adds are not fused here. Layers of identical shape within a model are run once and
 * counted ("x3"). --layer (repeatable) adds a layer of no model instead ("layers"; the
 * models are then read only when --models is given too): C input channels, H x W
 * pixels, K output channels, an R x S kernel, stride s, padding p on every side, g
 * groups, relu after it, e.g. --layer 128,56x56,128,3x3,1,1,32 (a ResNeXt-50 32x4d
 * 3x3). --filter keeps the layers whose "model/node C HxW K RxS s g" text
 * contains the string; --knobs sets knobs of every algorithm's template that has them
 * (over its default config); --schedule prints each schedule.
 *
 * tessel: NCHW[x]c activations with x = the target's f32 lanes (8 with AVX2), weights
 * transformed once (not timed), every algorithm of ops/conv2d/conv2d_select.h
 * that applies (Winograd ones included when the registry has them), each with its
 * template's default config; "default" is the algorithm tsl_conv2d_select picks.
 * oneDNN 2.x (Debian's libdnnl-dev): convolution_direct, forward inference, memory
 * formats `any` (it picks its blocked layout, nChw8c on AVX2), bias and the same
 * activation as eltwise post-op, reorders done once and not timed, OpenMP set to one
 * thread.
 *
 * Timing: R interleaved rounds of N samples per implementation (tsl_time_callback: each
 * sample at least MS milliseconds of back-to-back calls; defaults 3 x 15 x 1 ms): short
 * samples so that on this shared machine some run undisturbed, interleaved so a busy
 * period hits every implementation alike. The figure is the best sample in GFLOP/s
 * (2*N*K*OH*OW*C/g*R*S FLOPs per call, 1e9 FLOP/s). "ratio" is the default algorithm
 * over oneDNN, "best" the fastest tessel algorithm over oneDNN, "%pk" the default over
 * the single-thread fp32 FMA peak of tuner/peak.h. Every tessel output is checked
 * against oneDNN's (max error relative to the output's magnitude; "BAD" past 1e-3, and
 * a BAD result never counts as best).
 *
 * --records FILE (tuning records, tuner/records.h; read only) adds a "tuned" column: the
 * schedule the graph compiler would run for the layer, i.e. the layer's family workload
 * (ops/conv2d/algorithms_conv.h) through tsl_dispatch_schedule_any at 1 thread (so records
 * timed at 1 thread are preferred). Its program may be another operator than the
 * layer's (Winograd: info.op_workload); the weights then go through that algorithm's
 * transform, found by the operator as the compiler does (tsl_conv2d_algo_of_op). It is
 * built, checked and timed like the other candidates. A layer without a record shows
 * "-" and counts as its default algorithm in the tuned geometric mean (as the compiler
 * would run the default there); so does a tuned schedule that fails to build or is BAD.
 * "rec" is the record's own GFLOP/s (its fastest sample) and where it was timed: "m2" in
 * a model at 2 threads, "i1" in isolation at 1 thread, "f2" in the final plan of the
 * in-situ check (its cost spans the steps after the layer too: no GFLOP/s, 0) (dispatch
 * prefers this thread count, then final-plan, then in-model records; another count's
 * record is used when no other matches).
 * The keys are the bench's layers: residual adds are not fused here, so a layer the
 * compiler fuses with an Add is looked up as conv2d_nchwc_bias and may find no record.
 */
#include <dnnl.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "bench/dnnl_conv.h"
#include "ir/arena.h"
#include "models/graph.h"
#include "models/onnx.h"
#include "runtime/module.h"
#include "ops/conv2d/conv2d_select.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "ops/conv2d/algorithms_conv.h"
#include "tuner/dispatch.h"
#include "tuner/peak.h"
#include "tuner/records.h"

enum { MAX_LAYERS = 256, MAX_SAMPLES = 256, NALGO = TSL_CONV2D_ALGO_COUNT };

typedef struct opts {
  char models[256];
  char models_dir[512];
  int rounds, repeat;
  double min_ms;
  const char *filter;
  bool peak, quiet, print_schedule;
  bool algo_on[NALGO];
  const char *knobs;
  const char *records;
  bool models_given;
  int nextra;
  tsl_conv2d_layer extra[64]; /* --layer */
} opts;

typedef struct layer {
  char model[32];
  char name[96];
  tsl_conv2d_layer d;
  int count;
} layer;

/* ---- layers from the models ---- */

static bool same_desc(const tsl_conv2d_layer *a, const tsl_conv2d_layer *b) {
  return memcmp(a, b, sizeof *a) == 0;
}

/* The activation after conv node ni: act and clip bounds when its output has exactly
 * one consumer and that is a Relu or a Clip. */
static void activation_after(const tsl_graph *g, int ni, tsl_conv2d_layer *d) {
  int out = g->nodes[ni].outputs[0], consumer = -1, uses = 0;
  for (int j = 0; j < g->n_nodes; j++)
    for (int k = 0; k < g->nodes[j].n_inputs; k++)
      if (g->nodes[j].inputs[k] == out) {
        uses++;
        consumer = j;
      }
  for (int k = 0; k < g->n_outputs; k++) uses += g->outputs[k] == out;
  d->act = 0;
  d->clip_min = 0.0;
  d->clip_max = 6.0;
  if (uses != 1 || consumer < 0) return;
  const tsl_node *c = &g->nodes[consumer];
  if (c->op == TSL_OP_RELU) d->act = 1;
  if (c->op == TSL_OP_CLIP) {
    d->act = 2;
    d->clip_min = tsl_node_attr_float(c, "min", -INFINITY);
    d->clip_max = tsl_node_attr_float(c, "max", INFINITY);
  }
}

static int load_layers(const opts *o, int64_t block, layer *layers) {
  int n = 0;
  for (int i = 0; i < o->nextra && n < MAX_LAYERS; i++) {
    layer *l = &layers[n++];
    snprintf(l->model, sizeof l->model, "layers");
    snprintf(l->name, sizeof l->name, "--layer %d", i + 1);
    l->d = o->extra[i];
    l->d.block = block;
    l->count = 1;
  }
  char list[256];
  snprintf(list, sizeof list, "%s", o->nextra && !o->models_given ? "" : o->models);
  for (char *m = strtok(list, ","); m; m = strtok(NULL, ",")) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.onnx", o->models_dir, m);
    tsl_graph *g = NULL;
    if (tsl_graph_load_onnx(path, &g) != TSL_OK) {
      fprintf(stderr, "conv_layers: %s: %s\n", path, tsl_last_error());
      continue;
    }
    for (int ni = 0; ni < g->n_nodes; ni++) {
      const tsl_node *node = &g->nodes[ni];
      if (node->op != TSL_OP_CONV) continue;
      tsl_conv2d_params cp;
      if (tsl_node_conv2d_params(g, node, &cp) != TSL_OK) continue;
      const tsl_value *x = &g->values[node->inputs[0]], *w = &g->values[node->inputs[1]];
      tsl_conv2d_layer d;
      memset(&d, 0, sizeof d);
      d.N = x->shape[0];
      d.C = x->shape[1];
      d.H = x->shape[2];
      d.W = x->shape[3];
      d.K = w->shape[0];
      d.R = w->shape[2];
      d.S = w->shape[3];
      d.stride_h = cp.strides[0];
      d.stride_w = cp.strides[1];
      d.pad_top = cp.pads[0];
      d.pad_left = cp.pads[1];
      d.pad_bottom = cp.pads[2];
      d.pad_right = cp.pads[3];
      d.dilation_h = cp.dilations[0];
      d.dilation_w = cp.dilations[1];
      d.groups = cp.group;
      d.block = block;
      activation_after(g, ni, &d);
      if (o->filter) {
        char tag[256];
        snprintf(tag, sizeof tag, "%s/%s C%lld %lldx%lld K%lld %lldx%lld s%lld g%lld", m, node->name, (long long)d.C,
                 (long long)d.H, (long long)d.W, (long long)d.K, (long long)d.R, (long long)d.S,
                 (long long)d.stride_h, (long long)d.groups);
        if (!strstr(tag, o->filter)) continue;
      }
      int found = -1;
      for (int i = 0; i < n; i++)
        if (strcmp(layers[i].model, m) == 0 && same_desc(&layers[i].d, &d)) found = i;
      if (found >= 0) {
        layers[found].count++;
        continue;
      }
      if (n == MAX_LAYERS) break;
      layer *l = &layers[n++];
      snprintf(l->model, sizeof l->model, "%s", m);
      snprintf(l->name, sizeof l->name, "%s", node->name);
      l->d = d;
      l->count = 1;
    }
    tsl_graph_free(g);
  }
  return n;
}

/* ---- data ---- */


static int64_t numel(const tsl_buffer *b) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) n *= b->shape[i];
  return n;
}

/* ---- tessel ---- */

typedef struct tessel_conv {
  const tsl_kernel *kernel;
  int nargs;
  void *ptrs[8];
  void *args[8];
  float *owned[8];
  int nowned;
  int64_t out_numel;
  bool ok;
} tessel_conv;

static int32_t tessel_run(void *ctx) {
  tessel_conv *c = ctx;
  return tsl_kernel_call(c->kernel, c->args, c->nargs) == TSL_OK ? 0 : 1;
}

/* Runs a program once with default schedule (the weight transform). */
static tsl_status run_once(tsl_jit *jit, tsl_module *m, const tsl_te_program *p, const char *name, void **bufs) {
  tsl_schedule *s = NULL;
  tsl_status st = tsl_schedule_create(p, &s);
  if (st == TSL_OK) st = tsl_build(s, name, jit, m, NULL, NULL);
  tsl_schedule_free(s);
  const tsl_kernel *k = NULL;
  if (st == TSL_OK) st = tsl_module_get_kernel(m, name, &k);
  if (st != TSL_OK) return st;
  void *args[4];
  int n = p->ninputs + p->noutputs;
  for (int i = 0; i < n && i < 4; i++) args[i] = &bufs[i];
  return tsl_kernel_call(k, args, n);
}

/* The schedule of conv with its template's default config and "name=value,..." over it
 * (names the template does not have are skipped: --knobs serves every algorithm). */
static tsl_status schedule_with_knobs(const tsl_te_program *conv, const tsl_target *t, const char *knobs,
                                      tsl_schedule **out) {
  const tsl_template *tpl = tsl_conv2d_algo_template(conv);
  if (!tpl) return tsl_error(TSL_ERR_NOT_FOUND, "bench: no template for %s", conv->name);
  tsl_config_space space;
  tsl_config c;
  tsl_status st = tpl->space(conv, t, &space);
  if (st == TSL_OK) st = tpl->default_config(conv, t, &space, &c);
  if (st != TSL_OK) return st;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", knobs);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (!eq) return tsl_error(TSL_ERR_INVALID, "bench: --knobs entry '%s' is not name=value", tok);
    *eq = '\0';
    int k = tsl_space_knob_index(&space, tok);
    if (k >= 0) c.values[k] = strtoll(eq + 1, NULL, 10);
  }
  return tpl->apply(conv, t, &space, &c, out);
}

/* Builds conv program `conv` with schedule s as kernel `name` into c: its buffers, the
 * data from src (NCHW) converted to NCHW[x]c, the bias, and the weights from w (OIHW)
 * through weight program wt (its default schedule, not timed). label names the
 * candidate in error messages. */
static bool tessel_finish(tessel_conv *c, tsl_jit *jit, tsl_module *m, const tsl_conv2d_layer *d,
                          const tsl_te_program *conv, const tsl_te_program *wt, const tsl_schedule *s,
                          const char *name, const char *label, const float *src, float *w, const float *bias) {
  tsl_status st = TSL_OK;
  if (conv->ninputs < 3 || conv->noutputs != 1 || conv->ninputs + conv->noutputs > 8)
    st = tsl_error(TSL_ERR_INVALID, "bench: program %s has %d inputs and %d outputs", conv->name, conv->ninputs,
                   conv->noutputs);
  if (st == TSL_OK) st = tsl_build(s, name, jit, m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(m, name, &c->kernel);
  if (st != TSL_OK) {
    fprintf(stderr, "conv_layers: %s: %s\n", label, tsl_last_error());
    return false;
  }
  c->nargs = conv->ninputs + conv->noutputs;
  for (int i = 0; i < c->nargs; i++) {
    const tsl_buffer *b = i < conv->ninputs ? conv->inputs[i]->buf : conv->outputs[0]->buf;
    float *p = bench_conv_alloc_floats(numel(b));
    if (!p) {
      fprintf(stderr, "conv_layers: %s: out of memory\n", label);
      return false;
    }
    c->owned[c->nowned++] = p;
    c->ptrs[i] = p;
    c->args[i] = &c->ptrs[i];
  }
  c->out_numel = numel(conv->outputs[0]->buf);
  /* data NCHW -> NCHW[x]c (zero lanes past C) */
  int64_t x = d->block, CB = (d->C + x - 1) / x, HW = d->H * d->W;
  float *data = c->ptrs[0];
  for (int64_t n = 0; n < d->N; n++)
    for (int64_t ch = 0; ch < d->C; ch++)
      for (int64_t i = 0; i < HW; i++) data[((n * CB + ch / x) * HW + i) * x + ch % x] = src[(n * d->C + ch) * HW + i];
  /* bias, zero-padded */
  memcpy(c->ptrs[2], bias, sizeof(float) * (size_t)d->K);
  /* weights through the algorithm's transform */
  if (wt) {
    void *bufs[2] = {w, c->ptrs[1]};
    char wname[112];
    snprintf(wname, sizeof wname, "%s_weights", name);
    if ((st = run_once(jit, m, wt, wname, bufs)) != TSL_OK) {
      fprintf(stderr, "conv_layers: weights of %s: %s\n", label, tsl_last_error());
      return false;
    }
  }
  c->ok = true;
  return true;
}

/* Builds algorithm a for layer d with its template's default config (and --knobs). */
static bool tessel_setup(tessel_conv *c, tsl_jit *jit, tsl_module *m, const tsl_target *t, const tsl_conv2d_layer *d,
                         tsl_conv2d_algo a, const float *src, float *w, const float *bias, const opts *o,
                         int layer_index) {
  const char *knobs = o->knobs;
  memset(c, 0, sizeof *c);
  tsl_te_program *conv = NULL, *wt = NULL;
  tsl_status st = tsl_conv2d_algo_instantiate(d, a, t, &conv, &wt);
  tsl_schedule *s = NULL;
  if (st == TSL_OK && knobs) st = schedule_with_knobs(conv, t, knobs, &s);
  else if (st == TSL_OK) st = tsl_conv2d_algo_schedule(conv, a, t, &s);
  char name[96];
  snprintf(name, sizeof name, "l%d_%s", layer_index, tsl_conv2d_algo_name(a));
  if (st != TSL_OK) {
    fprintf(stderr, "conv_layers: %s: %s\n", tsl_conv2d_algo_name(a), tsl_last_error());
    return false;
  }
  if (o->print_schedule) {
    printf("# layer %d, %s\n", layer_index, name);
    tsl_schedule_print(stdout, s);
  }
  bool ok = tessel_finish(c, jit, m, d, conv, wt, s, name, tsl_conv2d_algo_name(a), src, w, bias);
  tsl_schedule_free(s);
  return ok;
}

/* Whether programs a and b have the same inputs and outputs (count and shapes). */
static bool same_signature(const tsl_te_program *a, const tsl_te_program *b) {
  if (a->ninputs != b->ninputs || a->noutputs != b->noutputs) return false;
  for (int i = 0; i < a->ninputs + a->noutputs; i++) {
    const tsl_buffer *x = i < a->ninputs ? a->inputs[i]->buf : a->outputs[i - a->ninputs]->buf;
    const tsl_buffer *y = i < b->ninputs ? b->inputs[i]->buf : b->outputs[i - b->ninputs]->buf;
    if (x->ndim != y->ndim || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim) != 0) return false;
  }
  return true;
}

enum { TUNED_NONE = 0, TUNED_OK = 1, TUNED_ERR = -1 };

/* The schedule the graph compiler picks for layer d from db: d's family workload through
 * tsl_dispatch_schedule_any (the caller has set 1 thread). TUNED_NONE when no record
 * matched (nothing is built: the compiler runs the default), TUNED_ERR on a failure
 * (printed). *algo is the algorithm whose operator the program instantiates. */
static int tuned_setup(tessel_conv *c, tsl_jit *jit, tsl_module *m, const tsl_target *t, const tsl_conv2d_layer *d,
                       const tsl_records *db, const float *src, float *w, const float *bias, const opts *o,
                       int layer_index, tsl_dispatch_info *info, tsl_conv2d_algo *algo) {
  memset(c, 0, sizeof *c);
  tsl_workload fw;
  tsl_te_program *prog = NULL, *conv = NULL, *wt = NULL;
  tsl_schedule *s = NULL;
  tsl_status st = tsl_conv2d_family_workload(d, &fw);
  if (st == TSL_OK) st = tsl_dispatch_schedule_any(db, t, &fw, NULL, &prog, &s, info);
  if (st == TSL_OK && !info->tuned) {
    tsl_schedule_free(s);
    return TUNED_NONE;
  }
  /* the weight transform of the algorithm whose operator the program is, as the graph
   * compiler finds it ("conv2d_nchwc_grouped.tile" is the grouped operator's own
   * template: no algorithm name to go by) */
  if (st == TSL_OK && !tsl_conv2d_algo_of_op(info->op_workload.op, algo))
    st = tsl_error(TSL_ERR_INVALID, "bench: the dispatch chose operator %s, no conv algorithm", info->op_workload.op);
  if (st == TSL_OK) st = tsl_conv2d_algo_instantiate(d, *algo, t, &conv, &wt);
  if (st == TSL_OK && !same_signature(conv, prog))
    st = tsl_error(TSL_ERR_INVALID, "bench: dispatched %s differs in shapes from %s's instantiation of the layer",
                   prog->name, tsl_conv2d_algo_name(*algo));
  if (st != TSL_OK) {
    fprintf(stderr, "conv_layers: tuned: %s\n", tsl_last_error());
    tsl_schedule_free(s);
    return TUNED_ERR;
  }
  char name[96];
  snprintf(name, sizeof name, "l%d_tuned_%s", layer_index, tsl_conv2d_algo_name(*algo));
  if (o->print_schedule) {
    printf("# layer %d, %s: %s (%s)\n", layer_index, name, info->template_name, info->config_str);
    tsl_schedule_print(stdout, s);
  }
  bool ok = tessel_finish(c, jit, m, d, prog, wt, s, name, "tuned", src, w, bias);
  tsl_schedule_free(s);
  return ok ? TUNED_OK : TUNED_ERR;
}

static void tessel_free(tessel_conv *c) {
  for (int i = 0; i < c->nowned; i++) free(c->owned[i]);
}

/* max |tessel - ref| / max(1, max |ref|), tessel's NCHW[x]c output against NCHW ref. */
static double compare(const tessel_conv *c, const tsl_conv2d_layer *d, const float *ref) {
  int64_t x = d->block, KB = (d->K + x - 1) / x, OH = tsl_conv2d_layer_out_h(d), OW = tsl_conv2d_layer_out_w(d);
  const float *out = c->ptrs[c->nargs - 1];
  double worst = 0.0, scale = 1.0;
  for (int64_t i = 0; i < d->N * d->K * OH * OW; i++) scale = fmax(scale, fabs(ref[i]));
  for (int64_t n = 0; n < d->N; n++)
    for (int64_t k = 0; k < d->K; k++)
      for (int64_t i = 0; i < OH * OW; i++) {
        double got = out[((n * KB + k / x) * OH * OW + i) * x + k % x], want = ref[(n * d->K + k) * OH * OW + i];
        double e = fabs(got - want) / scale;
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
      }
  return worst;
}

/* ---- main ---- */

static int usage(void) {
  fprintf(stderr, "usage: conv_layers [--models a,b] [--models-dir DIR] [--rounds R] [--repeat N] [--min-ms MS] "
                  "[--filter S] [--algos a,b] [--knobs k=v,...] [--schedule] [--no-peak] [--quiet] "
                  "[--records FILE] [--layer C,HxW,K,RxS,s,p,g ...]\n");
  return 2;
}

static bool parse_args(int argc, char **argv, opts *o) {
  memset(o, 0, sizeof *o);
  snprintf(o->models, sizeof o->models, "squeezenet1_1,resnet18,mobilenet_v2");
  snprintf(o->models_dir, sizeof o->models_dir, "%s", TSL_BENCH_MODELS_DIR);
  o->rounds = 3;
  o->repeat = 15;
  o->min_ms = 1.0;
  o->peak = true;
  for (int a = 0; a < NALGO; a++) o->algo_on[a] = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--no-peak") == 0) o->peak = false;
    else if (strcmp(a, "--quiet") == 0) o->quiet = true;
    else if (strcmp(a, "--schedule") == 0) o->print_schedule = true;
    else if (!v) return false;
    else if (strcmp(a, "--models") == 0) {
      snprintf(o->models, sizeof o->models, "%s", argv[++i]);
      o->models_given = true;
    } else if (strcmp(a, "--layer") == 0) {
      long long c, h, w, k, r, sz, st, pad, g;
      if (o->nextra == 64 || sscanf(argv[++i], "%lld,%lldx%lld,%lld,%lldx%lld,%lld,%lld,%lld", &c, &h, &w, &k, &r, &sz,
                                    &st, &pad, &g) != 9)
        return false;
      tsl_conv2d_layer *d = &o->extra[o->nextra++];
      memset(d, 0, sizeof *d);
      d->N = 1;
      d->C = c;
      d->H = h;
      d->W = w;
      d->K = k;
      d->R = r;
      d->S = sz;
      d->stride_h = d->stride_w = st;
      d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = pad;
      d->dilation_h = d->dilation_w = 1;
      d->groups = g;
      d->act = 1;
      d->clip_max = 6.0;
      d->block = 1;
      if (tsl_conv2d_layer_check(d) != TSL_OK) {
        fprintf(stderr, "conv_layers: --layer %s: %s\n", argv[i], tsl_last_error());
        return false;
      }
    }
    else if (strcmp(a, "--models-dir") == 0) snprintf(o->models_dir, sizeof o->models_dir, "%s", argv[++i]);
    else if (strcmp(a, "--rounds") == 0 && (o->rounds = atoi(argv[++i])) >= 1) continue;
    else if (strcmp(a, "--repeat") == 0 && (o->repeat = atoi(argv[++i])) >= 1) continue;
    else if (strcmp(a, "--min-ms") == 0 && (o->min_ms = atof(argv[++i])) >= 0) continue;
    else if (strcmp(a, "--filter") == 0) o->filter = argv[++i];
    else if (strcmp(a, "--knobs") == 0) o->knobs = argv[++i];
    else if (strcmp(a, "--records") == 0) o->records = argv[++i];
    else if (strcmp(a, "--algos") == 0) {
      for (int k = 0; k < NALGO; k++) o->algo_on[k] = strstr(v, tsl_conv2d_algo_name((tsl_conv2d_algo)k)) != NULL;
      i++;
    } else return false;
  }
  return o->rounds * o->repeat <= MAX_SAMPLES;
}

static double best_of(const double *s, int n) {
  double b = INFINITY;
  for (int i = 0; i < n; i++) b = fmin(b, s[i]);
  return b;
}

typedef struct summary {
  double log_default, log_best, log_tuned;
  int n, n_tuned; /* n_tuned: layers whose tuned figure is a record's schedule */
} summary;

/* r_tuned <= 0: no tuned schedule (the layer counts as its default in the tuned mean). */
static void add_summary(summary *s, double r_default, double r_best, double r_tuned) {
  if (!(r_default > 0) || !(r_best > 0)) return;
  s->log_default += log(r_default);
  s->log_best += log(r_best);
  s->log_tuned += log(r_tuned > 0 ? r_tuned : r_default);
  s->n_tuned += r_tuned > 0;
  s->n++;
}

static void print_summary(const char *name, const summary *s, bool tuned) {
  if (!s->n) return;
  printf("  %-16s %3d layers: default algorithm %.2f, best algorithm %.2f", name, s->n, exp(s->log_default / s->n),
         exp(s->log_best / s->n));
  if (tuned) printf(", tuned %.2f (%d of %d run a record's schedule)", exp(s->log_tuned / s->n), s->n_tuned, s->n);
  printf("\n");
}

int main(int argc, char **argv) {
  opts o;
  if (!parse_args(argc, argv, &o)) return usage();
  tsl_target target;
  if (tsl_target_parse("host", &target) != TSL_OK) {
    fprintf(stderr, "conv_layers: %s\n", tsl_last_error());
    return 1;
  }
  int64_t block = tsl_target_f32_lanes(&target);
  tsl_set_num_threads(1);
  omp_set_num_threads(1);
  char tbuf[256];
  printf("bench/conv_layers: fp32 conv layers, 1 thread; target %s (%d-bit vectors, NCHW%lldc); oneDNN %d.%d.%d "
         "(isa mask 0x%x)\n",
         tsl_target_str(&target, tbuf, sizeof tbuf), target.vector_bits, (long long)block, dnnl_version()->major,
         dnnl_version()->minor, dnnl_version()->patch, (unsigned)dnnl_get_effective_cpu_isa());
  printf("%d rounds x %d samples per implementation, each sample >= %.0f ms; GFLOP/s of the best sample\n", o.rounds,
         o.repeat, o.min_ms);
  double peak = 0.0;
  if (o.peak) {
    tsl_peak_opts po = tsl_peak_opts_default();
    po.threads = 1;
    po.triad_bytes = 0;
    po.repeat = 5;
    tsl_peak pk;
    if (tsl_peak_measure(&target, &po, &pk) == TSL_OK) {
      peak = pk.fma_gflops_1;
      printf("fp32 FMA peak (tuner/peak.h), 1 thread: %.1f GFLOP/s\n", peak);
    } else {
      fprintf(stderr, "conv_layers: peak: %s\n", tsl_last_error());
    }
  }
  tsl_records *db = NULL;
  if (o.records) {
    if (tsl_records_new(&db) != TSL_OK || tsl_records_load(db, o.records, true, stderr) != TSL_OK) {
      fprintf(stderr, "conv_layers: records %s: %s\n", o.records, tsl_last_error());
      tsl_records_free(db);
      return 1;
    }
    printf("records %s: %d loaded, %d bad lines skipped; tuned = the dispatched schedule "
           "(tuner/dispatch.h) at 1 thread\n",
           o.records, db->n, db->skipped);
  }
  static layer layers[MAX_LAYERS];
  int nl = load_layers(&o, block, layers);
  if (nl == 0) {
    fprintf(stderr, "conv_layers: no layers (models in %s?)\n", o.models_dir);
    return 1;
  }
  tsl_jit *jit = NULL;
  if (tsl_jit_new(&target, &jit) != TSL_OK) {
    fprintf(stderr, "conv_layers: %s\n", tsl_last_error());
    return 1;
  }
  printf("\n%-13s %-28s %-30s %3s %7s %7s |", "model", "layer", "shape (C HxW K RxS s p g act)", "cnt", "MFLOP",
         "oneDNN");
  for (int a = 0; a < NALGO; a++)
    if (o.algo_on[a]) printf(" %11s", tsl_conv2d_algo_name((tsl_conv2d_algo)a));
  printf(" | %-11s %5s %4s | %5s", "default", "ratio", "%pk", "best");
  if (db) printf(" | %-11s %7s %5s %7s", "tuned", "GFLOP/s", "ratio", "rec");
  printf("\n");
  summary sum_3x3 = {0}, sum_1x1 = {0}, sum_dw = {0}, sum_all = {0};
  double *samples = malloc(sizeof(double) * MAX_SAMPLES);
  enum { TUNED = NALGO + 1 }; /* sample slots: algorithms, oneDNN, tuned */
  static double all[NALGO + 2][MAX_SAMPLES];
  for (int li = 0; li < nl && samples; li++) {
    layer *L = &layers[li];
    tsl_conv2d_layer *d = &L->d;
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    tsl_module *mod = NULL;
    tsl_module_new(&mod);
    int64_t nsrc = d->N * d->C * d->H * d->W, nw = d->K * (d->C / d->groups) * d->R * d->S;
    int64_t OH = tsl_conv2d_layer_out_h(d), OW = tsl_conv2d_layer_out_w(d), nout = d->N * d->K * OH * OW;
    float *src = bench_conv_alloc_floats(nsrc), *w = bench_conv_alloc_floats(nw), *bias = bench_conv_alloc_floats(d->K), *ref = bench_conv_alloc_floats(nout);
    bench_conv_fill(src, nsrc, 11 + (uint64_t)li, 1.0);
    bench_conv_fill(w, nw, 23 + (uint64_t)li, 1.0 / sqrt((double)(nw / d->K)));
    bench_conv_fill(bias, d->K, 37 + (uint64_t)li, 0.1);
    bench_dnnl_conv dc;
    bool have_dnnl = bench_dnnl_conv_setup(&dc, d, src, w, bias) && bench_dnnl_conv_run(&dc) == 0 && bench_dnnl_conv_output_nchw(&dc, d, ref);
    tessel_conv tc[NALGO];
    memset(tc, 0, sizeof tc);
    double err[NALGO] = {0};
    for (int a = 0; a < NALGO; a++) {
      if (!o.algo_on[a] || !tsl_conv2d_algo_applies(d, (tsl_conv2d_algo)a, NULL)) continue;
      if (!tessel_setup(&tc[a], jit, mod, &target, d, (tsl_conv2d_algo)a, src, w, bias, &o, li)) continue;
      if (tessel_run(&tc[a]) != 0) {
        tc[a].ok = false;
        continue;
      }
      err[a] = have_dnnl ? compare(&tc[a], d, ref) : 0.0;
    }
    tessel_conv tuned;
    memset(&tuned, 0, sizeof tuned);
    static tsl_dispatch_info info;
    tsl_conv2d_algo tuned_algo = TSL_CONV2D_DIRECT;
    int tuned_state = TUNED_NONE;
    double tuned_err = 0.0;
    if (db) {
      tuned_state = tuned_setup(&tuned, jit, mod, &target, d, db, src, w, bias, &o, li, &info, &tuned_algo);
      if (tuned_state == TUNED_OK && tessel_run(&tuned) != 0) {
        fprintf(stderr, "conv_layers: tuned schedule of layer %d failed to run\n", li);
        tuned.ok = false;
        tuned_state = TUNED_ERR;
      }
      if (tuned_state == TUNED_OK) tuned_err = have_dnnl ? compare(&tuned, d, ref) : 0.0;
    }
    int ns[NALGO + 2] = {0};
    for (int r = 0; r < o.rounds; r++) {
      for (int a = 0; a <= TUNED; a++) {
        tsl_time_opts to = tsl_time_opts_default();
        to.repeat = o.repeat;
        to.min_repeat_ms = o.min_ms;
        tsl_status st;
        if (a == NALGO) {
          if (!have_dnnl) continue;
          st = tsl_time_callback(bench_dnnl_conv_run, &dc, "oneDNN", &to, samples);
        } else if (a == TUNED) {
          if (!tuned.ok) continue;
          st = tsl_time_callback(tessel_run, &tuned, "tuned", &to, samples);
        } else {
          if (!tc[a].ok) continue;
          st = tsl_time_callback(tessel_run, &tc[a], tsl_conv2d_algo_name((tsl_conv2d_algo)a), &to, samples);
        }
        if (st != TSL_OK) continue;
        memcpy(&all[a][ns[a]], samples, sizeof(double) * (size_t)o.repeat);
        ns[a] += o.repeat;
      }
    }
    double flops = tsl_conv2d_layer_flops(d);
    double gf[NALGO + 2];
    for (int a = 0; a <= TUNED; a++) gf[a] = ns[a] ? flops / best_of(all[a], ns[a]) * 1e-9 : 0.0;
    char shape[64];
    const char *act = d->act == 1 ? "relu" : d->act == 2 ? "clip" : "-";
    snprintf(shape, sizeof shape, "%lld %lldx%lld %lld %lldx%lld s%lld p%lld g%lld %s", (long long)d->C,
             (long long)d->H, (long long)d->W, (long long)d->K, (long long)d->R, (long long)d->S,
             (long long)d->stride_h, (long long)d->pad_top, (long long)d->groups, act);
    printf("%-13s %-28.28s %-30s x%-2d %7.1f %7.1f |", L->model, L->name, shape, L->count, flops * 1e-6, gf[NALGO]);
    int best = -1;
    for (int a = 0; a < NALGO; a++) {
      if (!o.algo_on[a]) continue;
      if (!tc[a].ok) {
        printf(" %11s", "-");
        continue;
      }
      printf(" %7.1f%s", gf[a], err[a] > 1e-3 ? " BAD" : "    ");
      if (err[a] <= 1e-3 && (best < 0 || gf[a] > gf[best])) best = a;
    }
    tsl_conv2d_algo def = tsl_conv2d_select(d, &target);
    double gdef = tc[def].ok ? gf[def] : 0.0;
    double rdef = gf[NALGO] > 0 ? gdef / gf[NALGO] : 0.0, rbest = best >= 0 && gf[NALGO] > 0 ? gf[best] / gf[NALGO] : 0.0;
    printf(" | %-11s %5.2f %4.0f | %5.2f", tsl_conv2d_algo_name(def), rdef, peak > 0 ? 100.0 * gdef / peak : 0.0,
           rbest);
    /* the tuned ratio; 0 when the layer runs its default (no record, a failure, BAD) */
    double rtuned = 0.0;
    if (db) {
      bool bad = tuned_state == TUNED_OK && tuned_err > 1e-3;
      if (tuned_state == TUNED_NONE) printf(" | %-11s %7s %5s %7s", "-", "-", "-", "-");
      else if (tuned_state == TUNED_ERR || !(gf[TUNED] > 0)) printf(" | %-11s %7s %5s %7s", "error", "-", "-", "-");
      else {
        rtuned = gf[NALGO] > 0 && !bad ? gf[TUNED] / gf[NALGO] : 0.0;
        /* the record's algorithm (FAMILY.ALGO: "tile" is the grouped operator's own
         * template), its own figure and where it was timed (m: in a model, i: isolated)
         * at how many threads */
        const char *dot = strrchr(info.algorithm, '.');
        printf(" | %-11.11s %7.1f %5.2f %7.1f %c%d%s", dot ? dot + 1 : tsl_conv2d_algo_name(tuned_algo), gf[TUNED],
               gf[NALGO] > 0 ? gf[TUNED] / gf[NALGO] : 0.0,
               info.cost > 0 && info.record.window_steps == 0 ? flops / info.cost * 1e-9 : 0.0,
               info.record.window_steps > 0 ? 'f' : info.in_model ? 'm' : 'i', info.record.threads, bad ? " BAD" : "");
      }
    }
    printf("\n");
    fflush(stdout);
    for (int c = 0; c < L->count; c++) {
      if (d->groups > 1 && d->groups == d->C) add_summary(&sum_dw, rdef, rbest, rtuned);
      else if (d->R == 3 && d->S == 3) add_summary(&sum_3x3, rdef, rbest, rtuned);
      else if (d->R == 1 && d->S == 1) add_summary(&sum_1x1, rdef, rbest, rtuned);
      add_summary(&sum_all, rdef, rbest, rtuned);
    }
    tessel_free(&tuned);
    for (int a = 0; a < NALGO; a++) tessel_free(&tc[a]);
    if (have_dnnl || dc.engine) bench_dnnl_conv_free(&dc);
    free(src);
    free(w);
    free(bias);
    free(ref);
    tsl_module_free(mod);
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
  free(samples);
  printf("\ngeometric mean of tessel / oneDNN over layers (each layer counted as often as it occurs):\n");
  if (db)
    printf("  (tuned: a layer without a record (\"-\"), or whose tuned schedule failed or was BAD, counts as "
           "its default algorithm)\n");
  const struct {
    const char *name;
    summary *s;
  } rows[] = {{"3x3 (groups 1)", &sum_3x3}, {"1x1 (groups 1)", &sum_1x1}, {"depthwise", &sum_dw}, {"all", &sum_all}};
  for (int i = 0; i < 4; i++) print_summary(rows[i].name, rows[i].s, db != NULL);
  summary both = {sum_3x3.log_default + sum_1x1.log_default, sum_3x3.log_best + sum_1x1.log_best,
                  sum_3x3.log_tuned + sum_1x1.log_tuned, sum_3x3.n + sum_1x1.n, sum_3x3.n_tuned + sum_1x1.n_tuned};
  print_summary("3x3 and 1x1", &both, db != NULL);
  tsl_jit_free(jit);
  tsl_records_free(db);
  return 0;
}
