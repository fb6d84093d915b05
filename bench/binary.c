/* bench/binary: binarized networks (models/zoo_binary.h) against full precision, on this
 * machine, with peers measured in the same process (ratios; median of repeats).
 *
 *   1. per layer, 1 thread: every distinct bitserial conv of bresnet18 (1- and 2-bit
 *      activations: bitserial_conv2d_unipolar64_*, glue and bitpack fused) against the
 *      fp32 conv of the same shape with the operator library's default algorithm and
 *      config (ops/conv2d/conv2d_select.h: what a graph compiles untuned), and
 *      the 1-bit conv with the template's one-pass accumulator (knob fuse_rows -1);
 *   2. end to end at 1 and 2 threads: squeezenet1_1 vs bsqueezenet1_1(_a2), resnet18 vs
 *      bresnet18(_a2), compiled by the graph compiler (default schedules, or the tuned
 *      ones with --records FILE, the same file for both);
 *   3. activation memory (all activation tensors, and the planned arena) of each
 *      binarized model with and without bitpack fusion (zoo_binary.h: no_fusion), and
 *      the unfused model's latency;
 *   4. (x86-64 with AVX2) the popcount bound: layer1's 1-bit 3x3 conv accumulator
 *      (64x56x56 -> 64) written by hand with AVX2 intrinsics in four ways (and with
 *      AVX-512 VPOPCNTDQ where the CPU has it), next to tessel's kernel, round-robin: what
 *      the popcount sequence itself allows on this CPU.
 *
 *   5. bresnet18(_a2) with its i32 residual stream channels-last (the default) and NCHW
 *      (compile option binary_nchw), with resnet18, round-robin.
 *
 * Usage: binary [--records FILE] [--reps N] [--skip-layers] [--skip-models] [--skip-bound]
 *               [--skip-stream] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "codegen/build.h"
#include "ops/registry.h"
#include "ir/arena.h"
#include "models/compile.h"
#include "models/node_kernels_binary.h"
#include "models/zoo.h"
#include "models/zoo_binary.h"
#include "runtime/module.h"
#include "ops/binary/bitserial.h"
#include "ops/conv2d/conv2d_select.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tuner/dispatch.h"
#include "tuner/records.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

enum { MAX_REPS = 64 };

/* A built kernel with zeroed buffers sized from its program's tensors. */
typedef struct prepared {
  tsl_module *m;
  const tsl_kernel *k;
  int n;
  void *bufs[8], *args[8];
} prepared;

static void prepared_free(prepared *pk) {
  for (int i = 0; i < 8; i++) free(pk->bufs[i]);
  tsl_module_free(pk->m);
  memset(pk, 0, sizeof *pk);
}

static tsl_status prepare(tsl_jit *jit, const tsl_te_program *p, const tsl_schedule *s, prepared *pk) {
  memset(pk, 0, sizeof *pk);
  pk->n = p->ninputs + p->noutputs;
  tsl_status st = pk->n <= 8 ? tsl_module_new(&pk->m) : tsl_error(TSL_ERR_INVALID, "bench: too many tensors");
  if (st == TSL_OK) st = tsl_build(s, "bench", jit, pk->m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(pk->m, "bench", &pk->k);
  for (int i = 0; i < pk->n && st == TSL_OK; i++) {
    const tsl_buffer *b = (i < p->ninputs ? p->inputs[i] : p->outputs[i - p->ninputs])->buf;
    size_t bytes = 8;
    for (int d = 0; d < b->ndim; d++) bytes *= (size_t)b->shape[d];
    pk->bufs[i] = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!pk->bufs[i]) st = tsl_error(TSL_ERR_NOMEM, "bench: out of memory");
    else memset(pk->bufs[i], 0, bytes);
    pk->args[i] = &pk->bufs[i];
  }
  if (st == TSL_OK) st = tsl_kernel_call(pk->k, pk->args, pk->n); /* warm-up */
  if (st != TSL_OK) {
    fprintf(stderr, "%s: %s\n", p->name, tsl_last_error());
    prepared_free(pk);
  }
  return st;
}

/* Runs the n kernels round-robin (the first of each round rotating) reps times: the
 * machine's other load hits all of them alike. med[i] = median seconds of kernel i;
 * ratio[i] = median over rounds of time(kernel base[i]) / time(kernel i) (base NULL: 0). */
static void round_robin(prepared *pk, int n, int reps, const int *base, double *med, double *ratio) {
  double t[4][MAX_REPS], r[4][MAX_REPS];
  for (int rep = 0; rep < reps; rep++) {
    for (int j = 0; j < n; j++) {
      int i = (rep + j) % n;
      double t0 = now();
      if (pk[i].k) tsl_kernel_call(pk[i].k, pk[i].args, pk[i].n);
      t[i][rep] = now() - t0;
    }
    for (int i = 0; i < n; i++) r[i][rep] = t[base ? base[i] : 0][rep] / t[i][rep];
  }
  for (int i = 0; i < n; i++) {
    qsort(t[i], (size_t)reps, sizeof(double), cmp_double);
    qsort(r[i], (size_t)reps, sizeof(double), cmp_double);
    med[i] = pk[i].k ? t[i][reps / 2] : -1.0;
    ratio[i] = pk[i].k ? r[i][reps / 2] : 0.0;
  }
}

/* A binary workload with the records' schedule, or the template with knobs kn (NULL:
 * the template default). */
static void prep_binary(tsl_jit *jit, const tsl_target *t, const tsl_records *db, const tsl_workload *w,
                        const tsl_bitserial_knobs *kn, prepared *pk) {
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  memset(pk, 0, sizeof *pk);
  tsl_status st = db ? tsl_dispatch_schedule(db, t, w, NULL, &p, &s, NULL) : tsl_workload_instantiate(w, &p);
  if (st == TSL_OK && !s) st = tsl_bitserial_schedule(p, t, kn, &s);
  if (st == TSL_OK) prepare(jit, p, s, pk);
  else fprintf(stderr, "%s: %s\n", w->op, tsl_last_error());
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* The fp32 conv of the operator library: the default algorithm, default config. */
static void prep_fp32(tsl_jit *jit, const tsl_target *t, const tsl_conv2d_layer *d, const char **algo, prepared *pk) {
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  memset(pk, 0, sizeof *pk);
  tsl_conv2d_algo a = tsl_conv2d_select(d, t);
  *algo = tsl_conv2d_algo_name(a);
  tsl_status st = tsl_conv2d_algo_instantiate(d, a, t, &p, NULL);
  if (st == TSL_OK) st = tsl_conv2d_algo_schedule(p, a, t, &s);
  if (st == TSL_OK) prepare(jit, p, s, pk);
  else fprintf(stderr, "fp32 %s: %s\n", *algo, tsl_last_error());
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

static int64_t wparam(const tsl_workload *w, const char *name, int64_t dflt) {
  for (int i = 0; i < w->nparams; i++)
    if (strcmp(w->params[i].name, name) == 0) return w->params[i].i;
  return dflt;
}

static void per_layer(tsl_jit *jit, const tsl_target *t, const tsl_records *db, int reps) {
  tsl_graph *g1 = NULL, *g2 = NULL;
  if (tsl_zoo_build("bresnet18", 1, &g1) != TSL_OK || tsl_zoo_build("bresnet18_a2", 1, &g2) != TSL_OK) {
    fprintf(stderr, "bench: %s\n", tsl_last_error());
    tsl_graph_free(g1);
    return;
  }
  enum { MAXW = 64 };
  static tsl_workload w1[MAXW], w2[MAXW];
  int nodes1[MAXW], nodes2[MAXW];
  int n1 = tsl_binary_model_workloads(g1, w1, nodes1, MAXW), n2 = tsl_binary_model_workloads(g2, w2, nodes2, MAXW);
  tsl_set_num_threads(1);
  printf("\n1. bresnet18 binary convs vs fp32 (same shape), 1 thread, the three kernels run round-robin %d times:\n"
         "   median times, and x = median over rounds of fp32 time / binary time; %s\n", reps,
         db ? "binary schedules from the records" : "default schedules");
  printf("   1pass = the 1-bit conv with the template's one-pass accumulator (fuse_rows -1: the whole acc,\n"
         "   then the epilogue; the default before row fusion), xr = median over rounds of 1pass / 1-bit time\n");
  printf("%-20s %-24s %-10s %9s %9s %6s %9s %6s %8s %8s %5s\n", "layer", "C x H x W -> K kxk/s", "fp32 algo",
         "fp32 ms", "1-bit ms", "x", "2-bit ms", "x", "Gpair/s", "1pass ms", "xr");
  double s32 = 0, s1 = 0, s2 = 0, s1p = 0;
  for (int i = 0; i < n1 && i < n2; i++) {
    const tsl_workload *w = &w1[i];
    int64_t C = wparam(w, "C", 0), H = w->shapes[0][3], W = w->shapes[0][4], K = w->shapes[1][3],
            R = w->shapes[1][1], st = wparam(w, "stride_h", 1), pad = wparam(w, "pad_h", 0);
    /* the fp32 layer as the graph compiler runs it: blocked at the target's lanes */
    tsl_conv2d_layer d = {1, C, H, W, K, R, R, st, st, pad, pad, pad, pad, 1, 1, 1, 1, 0.0, 0.0, false, false,
                         tsl_target_f32_lanes(t), {0}, 0};
    const char *algo = "?";
    prepared pk[4];
    prep_fp32(jit, t, &d, &algo, &pk[0]);
    prep_binary(jit, t, db, w, NULL, &pk[1]);
    prep_binary(jit, t, db, &w2[i], NULL, &pk[2]);
    tsl_bitserial_knobs one_pass = tsl_bitserial_default_knobs(t, R, R);
    one_pass.fuse_rows = -1;
    prep_binary(jit, t, NULL, w, &one_pass, &pk[3]);
    double med[4], ratio[4];
    static const int base[4] = {0, 0, 0, 1};
    round_robin(pk, 4, reps, base, med, ratio);
    for (int k = 0; k < 4; k++) prepared_free(&pk[k]);
    double tf = med[0], tb1 = med[1], tb2 = med[2];
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld->%lld %lldx%lld/%lld", (long long)C, (long long)H, (long long)W,
             (long long)K, (long long)R, (long long)R, (long long)st);
    /* word pairs (data word & weight word) of the 1-bit conv: the popcount work */
    double pairs = (double)tsl_conv2d_layer_out_h(&d) * (double)tsl_conv2d_layer_out_w(&d) * (double)K *
                   (double)((C + 63) / 64) * (double)(R * R);
    printf("%-20.20s %-24s %-10s %9.3f %9.3f %6.1f %9.3f %6.1f %8.2f %8.3f %5.2f\n", g1->nodes[nodes1[i]].name, shape,
           algo, tf * 1e3, tb1 * 1e3, ratio[1], tb2 * 1e3, ratio[2], pairs / tb1 * 1e-9, med[3] * 1e3, 1.0 / ratio[3]);
    s32 += tf;
    s1 += tb1;
    s2 += tb2;
    s1p += med[3];
  }
  printf("%-20s %-24s %-10s %9.3f %9.3f %6.1f %9.3f %6.1f %8s %8.3f %5.2f\n", "sum (distinct)", "", "", s32 * 1e3,
         s1 * 1e3, s32 / s1, s2 * 1e3, s32 / s2, "", s1p * 1e3, s1p / s1);
  tsl_graph_free(g1);
  tsl_graph_free(g2);
}

typedef struct model_prep {
  tsl_graph_plan *plan;
  tsl_graph_ctx *ctx;
  int64_t act_bytes, peak_bytes;
  int64_t bin_bytes, bin_f32_bytes; /* outputs of the tsl.Binary nodes, and the same as f32 */
} model_prep;

/* Bytes of the values the binary nodes of g produce (bit planes, i32 levels), and what
 * the same activations take as f32 [N, C, H, W] (C = 64 per word of a plane). */
static void binary_bytes(const tsl_graph *g, int64_t *bytes, int64_t *f32_bytes) {
  *bytes = *f32_bytes = 0;
  for (int n = 0; n < g->n_nodes; n++) {
    if (g->nodes[n].op != TSL_OP_BINARY) continue;
    const tsl_value *v = &g->values[g->nodes[n].outputs[0]];
    int64_t e = 1;
    for (int d = 0; d < v->ndim; d++) e *= v->shape[d];
    *bytes += e * (int64_t)tsl_dtype_bytes(v->dtype);
    bool planes = tsl_dtype_equal(v->dtype, TSL_DTYPE_U64) && v->ndim == 5;
    *f32_bytes += planes ? e / v->shape[1] * 64 * 4 : e * 4;
  }
}

static void model_free(model_prep *m) {
  tsl_graph_ctx_free(m->ctx);
  tsl_graph_plan_free(m->plan);
  memset(m, 0, sizeof *m);
}

/* Compiles g (records or defaults; binary_nchw: the binary residual stream kept NCHW,
 * models/compile.h) and fills its input; false on error (reported). */
static bool model_prepare_ex(const tsl_graph *g, const char *records, bool binary_nchw, model_prep *m) {
  memset(m, 0, sizeof *m);
  tsl_compile_options o = {0};
  o.records = records;
  o.binary_nchw = binary_nchw;
  tsl_compile_stats stats;
  tsl_status st = tsl_graph_compile(g, &o, &m->plan, &stats);
  if (st == TSL_OK) st = tsl_graph_ctx_new(m->plan, &m->ctx);
  if (st == TSL_OK) st = tsl_graph_run(m->ctx, NULL); /* warm-up */
  if (st != TSL_OK) {
    fprintf(stderr, "bench: %s: %s\n", g->name, tsl_last_error());
    model_free(m);
    return false;
  }
  tsl_graph_io_info in = tsl_graph_plan_input_info(m->plan, 0);
  float *x = tsl_graph_ctx_input(m->ctx, 0);
  for (int64_t i = 0; i < in.bytes / 4; i++) x[i] = (float)((i * 7919) % 1000) / 1000.0f;
  m->act_bytes = stats.activation_bytes;
  m->peak_bytes = stats.planned_peak_bytes;
  binary_bytes(g, &m->bin_bytes, &m->bin_f32_bytes);
  return true;
}

static bool model_prepare(const tsl_graph *g, const char *records, model_prep *m) {
  return model_prepare_ex(g, records, false, m);
}

/* The models run round-robin reps times at `threads` threads (see round_robin). */
static void models_round_robin(model_prep *m, int n, int reps, int threads, double *med, double *mn, double *ratio) {
  double t[4][MAX_REPS], r[4][MAX_REPS];
  tsl_set_num_threads(threads);
  for (int rep = 0; rep < reps; rep++) {
    for (int j = 0; j < n; j++) {
      int i = (rep + j) % n;
      double t0 = now();
      if (m[i].ctx) tsl_graph_run(m[i].ctx, NULL);
      t[i][rep] = now() - t0;
    }
    for (int i = 0; i < n; i++) r[i][rep] = t[0][rep] / t[i][rep];
  }
  for (int i = 0; i < n; i++) {
    qsort(t[i], (size_t)reps, sizeof(double), cmp_double);
    qsort(r[i], (size_t)reps, sizeof(double), cmp_double);
    med[i] = m[i].ctx ? t[i][reps / 2] * 1e3 : -1.0;
    mn[i] = m[i].ctx ? t[i][0] * 1e3 : -1.0;
    ratio[i] = m[i].ctx ? r[i][reps / 2] : 0.0;
  }
}

static void models(const char *records, int reps) {
  static const char *const names[][3] = {{"squeezenet1_1", "bsqueezenet1_1", "bsqueezenet1_1_a2"},
                                         {"resnet18", "bresnet18", "bresnet18_a2"}};
  printf("\n2. end to end (%s), each fp32 model and its binarized ones run round-robin %d times:\n"
         "   median ms, min ms, x = median over rounds of fp32 time / binarized time\n",
         records ? "tuned: records" : "default schedules", reps);
  printf("%-20s %9s %8s %7s %9s %8s %7s\n", "model", "1thr ms", "min", "x", "2thr ms", "min", "x");
  int64_t act[2][3], peak[2][3];
  double fused1[2][3];
  for (int a = 0; a < 2; a++) {
    model_prep m[3];
    for (int v = 0; v < 3; v++) {
      tsl_graph *g = NULL;
      memset(&m[v], 0, sizeof m[v]);
      if (tsl_zoo_build(names[a][v], 1, &g) == TSL_OK) model_prepare(g, records, &m[v]);
      else fprintf(stderr, "bench: %s\n", tsl_last_error());
      tsl_graph_free(g);
      act[a][v] = m[v].act_bytes;
      peak[a][v] = m[v].peak_bytes;
    }
    double med[2][3], mn[2][3], ratio[2][3];
    for (int th = 0; th < 2; th++) models_round_robin(m, 3, reps, th + 1, med[th], mn[th], ratio[th]);
    for (int v = 0; v < 3; v++) {
      fused1[a][v] = med[0][v];
      printf("%-20s %9.2f %8.2f %7.2f %9.2f %8.2f %7.2f\n", names[a][v], med[0][v], mn[0][v], ratio[0][v], med[1][v],
             mn[1][v], ratio[1][v]);
      model_free(&m[v]);
    }
  }
  printf("\n3. activation memory, MiB: all activation tensors / the planned arena / the binary nodes' outputs\n"
         "   [the same activations as f32]; with and without bitpack fusion; 1-thread time (the two run\n"
         "   round-robin %d times; x = unfused / fused time)\n", reps);
  printf("%-18s %-30s %-30s %8s %8s %5s\n", "model", "bitpack fused", "unfused", "fused ms", "unfus ms", "x");
  for (int a = 0; a < 2; a++) {
    printf("%-18s %5.2f / %5.2f %18s %30s %8.2f\n", names[a][0], act[a][0] / 1048576.0, peak[a][0] / 1048576.0, "",
           "", fused1[a][0]);
    for (int v = 1; v < 3; v++) {
      model_prep m[2];
      memset(m, 0, sizeof m);
      tsl_zoo_binary_options fo = {a ? "bresnet18" : "bsqueezenet1_1", v, 1, 224, false, 1, true}, uo = fo;
      fo.no_fusion = false;
      tsl_graph *g = NULL;
      if (tsl_zoo_binary_build_ex(&fo, &g) == TSL_OK) model_prepare(g, records, &m[0]);
      tsl_graph_free(g);
      g = NULL;
      if (tsl_zoo_binary_build_ex(&uo, &g) == TSL_OK) model_prepare(g, records, &m[1]);
      tsl_graph_free(g);
      double med[2], mn[2], ratio[2];
      models_round_robin(m, 2, reps, 1, med, mn, ratio);
      printf("%-18s %5.2f / %5.2f / %5.2f [%6.2f] %5.2f / %5.2f / %5.2f [%6.2f] %8.2f %8.2f %5.2f\n", names[a][v],
             m[0].act_bytes / 1048576.0, m[0].peak_bytes / 1048576.0, m[0].bin_bytes / 1048576.0,
             m[0].bin_f32_bytes / 1048576.0, m[1].act_bytes / 1048576.0, m[1].peak_bytes / 1048576.0,
             m[1].bin_bytes / 1048576.0, m[1].bin_f32_bytes / 1048576.0, med[0], med[1],
             ratio[1] > 0 ? 1.0 / ratio[1] : 0.0);
      model_free(&m[0]);
      model_free(&m[1]);
    }
  }
}

/* ---- 5. the residual stream's layout ---- */

/* resnet18, bresnet18(_a2) with its i32 residual stream channels-last (the default,
 * models/passes/binary_channels_last.h) and kept NCHW (compile option binary_nchw),
 * round-robin in this process at 1 and 2 threads. */
static void stream_layouts(const char *records, int reps) {
  printf("\n5. bresnet18's residual stream NHWC (default) vs NCHW (binary_nchw), with resnet18, round-robin %d\n"
         "   times: median ms, x = median over rounds of fp32 / binarized time; nhwc/nchw = the NCHW\n"
         "   model's median time / the NHWC model's\n", reps);
  printf("%-22s %9s %7s %9s %7s\n", "model", "1thr ms", "x", "2thr ms", "x");
  for (int abits = 1; abits <= 2; abits++) {
    model_prep m[3];
    memset(m, 0, sizeof m);
    tsl_graph *g = NULL;
    if (tsl_zoo_build("resnet18", 1, &g) == TSL_OK) model_prepare(g, records, &m[0]);
    tsl_graph_free(g);
    g = NULL;
    if (tsl_zoo_build(abits == 1 ? "bresnet18" : "bresnet18_a2", 1, &g) == TSL_OK) {
      model_prepare_ex(g, records, false, &m[1]);
      model_prepare_ex(g, records, true, &m[2]);
    }
    tsl_graph_free(g);
    double med[2][3], mn[2][3], ratio[2][3];
    for (int th = 0; th < 2; th++) models_round_robin(m, 3, reps, th + 1, med[th], mn[th], ratio[th]);
    static const char *const label[2][3] = {{"resnet18", "bresnet18 nhwc", "bresnet18 nchw"},
                                            {"resnet18", "bresnet18_a2 nhwc", "bresnet18_a2 nchw"}};
    for (int v = 0; v < 3; v++)
      printf("%-22s %9.2f %7.2f %9.2f %7.2f\n", label[abits - 1][v], med[0][v], ratio[0][v], med[1][v], ratio[1][v]);
    printf("%-22s %9.3f %7s %9.3f\n", "nhwc/nchw speedup", med[0][2] / med[0][1], "", med[1][2] / med[1][1]);
    for (int v = 0; v < 3; v++) model_free(&m[v]);
  }
}

/* ---- 4. the popcount bound, by hand ---- */
#if defined(__x86_64__)
/* layer1.0.conv1 of bresnet18: 1-bit, 64 channels (one word), 56x56, 3x3, pad 1, 64 outputs.
 * The hand kernels read an input padded by hand (58x58 words, zeros at the border: exact
 * for unipolar data), so they do all 9 taps at the border too (tessel's kernel skips
 * them); tile = 2 pixels x 16 channels, like the template's default. */
enum { BD_H = 56, BD_W = 56, BD_K = 64, BD_PW = BD_W + 2 };
typedef struct bound_ctx {
  uint64_t *data;         /* [58][58] */
  uint64_t *w, *wlo, *whi; /* [9][64]; wlo/whi = the weights' low / high nibbles */
  int64_t *acc;           /* [56][56][64] */
  prepared *tessel;
} bound_ctx;

/* the nests need their small loops unrolled (accumulators in registers), as -O3 does; gcc
 * takes the level per function, clang has no optimize attribute (there the nests get the
 * build's own level, -O2 by default) */
#if defined(__clang__)
#define BOUND_O3
#else
#define BOUND_O3 optimize("O3"),
#endif
#define BOUND_FN __attribute__((target("avx2,popcnt"), BOUND_O3 noinline))
#define BOUND_INLINE __attribute__((target("avx2,popcnt"), BOUND_O3 always_inline)) inline

BOUND_INLINE static __m256i bd_nibble_counts(__m256i x) {
  const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2,
                                       3, 2, 3, 3, 4);
  const __m256i m = _mm256_set1_epi8(15);
  return _mm256_add_epi8(_mm256_shuffle_epi8(lut, _mm256_and_si256(x, m)),
                         _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(x, 4), m)));
}

/* mode 0: per word pair the sequence LLVM emits for ctpop on <4 x i64> (byte counts, then
 * vpsadbw to i64 and an i64 add); mode 1: byte counts accumulated over the 9 taps (vpaddb),
 * one vpsadbw per accumulator (Mula, Kurz and Lemire, sec. 3); mode 2: as 1 with the
 * weights' nibbles split beforehand and the data word's high nibbles shifted once per tap,
 * so a pair costs two vpand and two vpshufb. */
BOUND_INLINE static void bd_vector(const bound_ctx *c, int mode) {
  const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2,
                                       3, 2, 3, 3, 4);
  const __m256i zero = _mm256_setzero_si256();
  for (int y = 0; y < BD_H; y++)
    for (int kb = 0; kb < BD_K; kb += 16)
      for (int x = 0; x < BD_W; x += 2) {
        __m256i acc[2][4];
        for (int i = 0; i < 2; i++)
          for (int j = 0; j < 4; j++) acc[i][j] = zero;
        for (int r = 0; r < 3; r++)
          for (int s = 0; s < 3; s++) {
            uint64_t d0 = c->data[(y + r) * BD_PW + x + s], d1 = c->data[(y + r) * BD_PW + x + s + 1];
            __m256i a[2] = {_mm256_set1_epi64x((long long)d0), _mm256_set1_epi64x((long long)d1)};
            __m256i ah[2] = {_mm256_set1_epi64x((long long)(d0 >> 4)), _mm256_set1_epi64x((long long)(d1 >> 4))};
            int wi = (r * 3 + s) * BD_K + kb;
            for (int j = 0; j < 4; j++) {
              __m256i w = _mm256_loadu_si256((const __m256i *)&c->w[wi + 4 * j]);
              __m256i wl = _mm256_loadu_si256((const __m256i *)&c->wlo[wi + 4 * j]);
              __m256i wh = _mm256_loadu_si256((const __m256i *)&c->whi[wi + 4 * j]);
              for (int i = 0; i < 2; i++) {
                if (mode == 0)
                  acc[i][j] = _mm256_add_epi64(acc[i][j],
                                               _mm256_sad_epu8(bd_nibble_counts(_mm256_and_si256(a[i], w)), zero));
                else if (mode == 1)
                  acc[i][j] = _mm256_add_epi8(acc[i][j], bd_nibble_counts(_mm256_and_si256(a[i], w)));
                else
                  acc[i][j] = _mm256_add_epi8(acc[i][j],
                                              _mm256_add_epi8(_mm256_shuffle_epi8(lut, _mm256_and_si256(a[i], wl)),
                                                              _mm256_shuffle_epi8(lut, _mm256_and_si256(ah[i], wh))));
              }
            }
          }
        for (int i = 0; i < 2; i++)
          for (int j = 0; j < 4; j++)
            _mm256_storeu_si256((__m256i *)&c->acc[((y * BD_W) + x + i) * BD_K + kb + 4 * j],
                                mode == 0 ? acc[i][j] : _mm256_sad_epu8(acc[i][j], zero));
      }
}

/* scalar popcnt, 2 pixels x 8 channels in registers */
BOUND_FN static void bd_scalar(const bound_ctx *c) {
  for (int y = 0; y < BD_H; y++)
    for (int kb = 0; kb < BD_K; kb += 8)
      for (int x = 0; x < BD_W; x += 2) {
        int64_t acc[2][8] = {{0}};
        for (int r = 0; r < 3; r++)
          for (int s = 0; s < 3; s++) {
            uint64_t a0 = c->data[(y + r) * BD_PW + x + s], a1 = c->data[(y + r) * BD_PW + x + s + 1];
            for (int j = 0; j < 8; j++) {
              uint64_t w = c->w[(r * 3 + s) * BD_K + kb + j];
              acc[0][j] += __builtin_popcountll(a0 & w);
              acc[1][j] += __builtin_popcountll(a1 & w);
            }
          }
        for (int i = 0; i < 2; i++)
          for (int j = 0; j < 8; j++) c->acc[((y * BD_W) + x + i) * BD_K + kb + j] = acc[i][j];
      }
}

/* AVX-512 VPOPCNTDQ: and + vpopcntq + add on 8 words a vector, a tile of 8 pixels x 16
 * channels (16 zmm accumulators; each weight vector used for 8 pixels, each broadcast data
 * word for 2 vectors): the three-uops-per-8-pairs sequence of the anchor figure. */
__attribute__((target("avx512f,avx512vpopcntdq"), BOUND_O3 noinline)) static void bd_avx512(const bound_ctx *c) {
  for (int y = 0; y < BD_H; y++)
    for (int kb = 0; kb < BD_K; kb += 16)
      for (int x = 0; x < BD_W; x += 8) {
        __m512i acc[8][2];
        for (int i = 0; i < 8; i++) acc[i][0] = acc[i][1] = _mm512_setzero_si512();
        for (int r = 0; r < 3; r++)
          for (int s = 0; s < 3; s++) {
            int wi = (r * 3 + s) * BD_K + kb;
            __m512i w0 = _mm512_loadu_si512(&c->w[wi]), w1 = _mm512_loadu_si512(&c->w[wi + 8]);
            for (int i = 0; i < 8; i++) {
              __m512i a = _mm512_set1_epi64((long long)c->data[(y + r) * BD_PW + x + i + s]);
              acc[i][0] = _mm512_add_epi64(acc[i][0], _mm512_popcnt_epi64(_mm512_and_si512(a, w0)));
              acc[i][1] = _mm512_add_epi64(acc[i][1], _mm512_popcnt_epi64(_mm512_and_si512(a, w1)));
            }
          }
        for (int i = 0; i < 8; i++) {
          _mm512_storeu_si512(&c->acc[((y * BD_W) + x + i) * BD_K + kb], acc[i][0]);
          _mm512_storeu_si512(&c->acc[((y * BD_W) + x + i) * BD_K + kb + 8], acc[i][1]);
        }
      }
}

/* one copy of the loop nest per mode (mode a constant in each) */
BOUND_FN static void bd_vector0(const bound_ctx *c) { bd_vector(c, 0); }
BOUND_FN static void bd_vector1(const bound_ctx *c) { bd_vector(c, 1); }
BOUND_FN static void bd_vector2(const bound_ctx *c) { bd_vector(c, 2); }

static void bd_run(const bound_ctx *c, int v) {
  if (v == 0) tsl_kernel_call(c->tessel->k, c->tessel->args, c->tessel->n);
  else if (v == 1) bd_vector0(c);
  else if (v == 2) bd_vector1(c);
  else if (v == 3) bd_vector2(c);
  else if (v == 4) bd_scalar(c);
  else bd_avx512(c);
}

static void popcount_bound(tsl_jit *jit, const tsl_target *t, int reps) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("popcnt")) {
    printf("\n4. popcount bound: skipped (no AVX2 on this CPU)\n");
    return;
  }
  bound_ctx c = {aligned_alloc(64, (size_t)BD_PW * BD_PW * 8), aligned_alloc(64, 9 * BD_K * 8),
                 aligned_alloc(64, 9 * BD_K * 8), aligned_alloc(64, 9 * BD_K * 8),
                 aligned_alloc(64, (size_t)BD_H * BD_W * BD_K * 8), NULL};
  prepared tk;
  memset(&tk, 0, sizeof tk);
  c.tessel = &tk;
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  int64_t sd[5] = {1, 1, 1, BD_H, BD_W}, sw[4] = {1, 3, 3, BD_K}, sk[1] = {BD_K};
  const int64_t *shapes[4] = {sd, sw, sk, sk};
  int ndims[4] = {5, 4, 1, 1};
  tsl_dsl_param_value prm[3] = {{"C", TSL_DSL_PARAM_INT, 64, 0.0}, {"pad_h", TSL_DSL_PARAM_INT, 1, 0.0},
                                {"pad_w", TSL_DSL_PARAM_INT, 1, 0.0}};
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  tsl_status st = c.data && c.w && c.wlo && c.whi && c.acc ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "bench: out of memory");
  if (st == TSL_OK) st = tsl_op_instantiate("bitserial_conv2d_unipolar64_packed", 4, shapes, ndims, 3, prm, &p);
  if (st == TSL_OK) st = tsl_bitserial_schedule(p, t, NULL, &s);
  if (st == TSL_OK) st = prepare(jit, p, s, &tk);
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  if (st != TSL_OK || !tk.k) {
    fprintf(stderr, "bench: popcount bound: %s\n", tsl_last_error());
  } else {
    uint64_t seed = 12345;
    for (int i = 0; i < BD_PW * BD_PW; i++) {
      int y = i / BD_PW, x = i % BD_PW;
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      c.data[i] = y == 0 || x == 0 || y == BD_PW - 1 || x == BD_PW - 1 ? 0 : seed ^ (seed >> 29);
    }
    for (int i = 0; i < 9 * BD_K; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      c.w[i] = seed ^ (seed >> 31);
      c.wlo[i] = c.w[i] & 0x0f0f0f0f0f0f0f0full;
      c.whi[i] = (c.w[i] >> 4) & 0x0f0f0f0f0f0f0f0full;
    }
    static const char *const names[6] = {"tessel (template default, with glue + packing)",
                                         "by hand: LLVM's ctpop sequence per pair", "by hand: bytes summed over the window",
                                         "by hand: + weights' nibbles pre-split", "by hand: scalar popcnt",
                                         "by hand: AVX-512 vpopcntq, 8 px x 16 ch tile"};
    /* the AVX-512 kernel only where the CPU has VPOPCNTDQ */
    int nv = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq") ? 6 : 5;
    double tm[6][MAX_REPS], r[6][MAX_REPS];
    tsl_set_num_threads(1);
    for (int v = 0; v < nv; v++) bd_run(&c, v); /* warm-up */
    for (int rep = 0; rep < reps; rep++) {
      for (int j = 0; j < nv; j++) {
        int v = (rep + j) % nv;
        double t0 = now();
        bd_run(&c, v);
        tm[v][rep] = now() - t0;
      }
      for (int v = 0; v < nv; v++) r[v][rep] = tm[0][rep] / tm[v][rep];
    }
    printf("\n4. popcount bound: layer1.0.conv1's 1-bit accumulator (64x56x56 -> 64, 3x3), 1 thread, round-robin %d\n"
           "   times; the hand kernels do all 9 taps at the border (tessel skips the padded ones) and no epilogue;\n"
           "   x = median over rounds of tessel time / variant time\n", reps);
    printf("%-48s %9s %8s %6s\n", "kernel", "ms", "Gpair/s", "x");
    double pairs = (double)BD_H * BD_W * BD_K * 9;
    for (int v = 0; v < nv; v++) {
      qsort(tm[v], (size_t)reps, sizeof(double), cmp_double);
      qsort(r[v], (size_t)reps, sizeof(double), cmp_double);
      printf("%-48s %9.3f %8.2f %6.2f\n", names[v], tm[v][reps / 2] * 1e3, pairs / tm[v][reps / 2] * 1e-9,
             r[v][reps / 2]);
    }
  }
  prepared_free(&tk);
  free(c.data);
  free(c.w);
  free(c.wlo);
  free(c.whi);
  free(c.acc);
}
#else
static void popcount_bound(tsl_jit *jit, const tsl_target *t, int reps) {
  (void)jit;
  (void)t;
  (void)reps;
  printf("\n4. popcount bound: skipped (x86-64 only)\n");
}
#endif

int main(int argc, char **argv) {
  const char *records = NULL;
  int reps = 11;
  bool layers = true, whole = true, bound = true, stream = true;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--records") == 0 && i + 1 < argc) records = argv[++i];
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--skip-layers") == 0) layers = false;
    else if (strcmp(argv[i], "--skip-models") == 0) whole = false;
    else if (strcmp(argv[i], "--skip-bound") == 0) bound = false;
    else if (strcmp(argv[i], "--skip-stream") == 0) stream = false;
    else {
      fprintf(stderr, "usage: binary [--records FILE] [--reps N (1..%d)] [--skip-layers] [--skip-models] [--skip-bound]\n"
                      "       [--skip-stream]\n",
              MAX_REPS);
      return 2;
    }
  }
  if (reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "binary: --reps must be in 1..%d\n", MAX_REPS);
    return 2;
  }
  tsl_target t;
  tsl_jit *jit = NULL;
  tsl_records *db = NULL;
  if (tsl_target_parse("host", &t) != TSL_OK || tsl_jit_new(&t, &jit) != TSL_OK ||
      (records && (tsl_records_new(&db) != TSL_OK || tsl_records_load(db, records, true, stderr) != TSL_OK))) {
    fprintf(stderr, "binary: %s\n", tsl_last_error());
    tsl_records_free(db);
    tsl_jit_free(jit);
    return 1;
  }
  printf("bench/binary on %s (%s)\n", t.cpu, records ? records : "no records");
  if (layers) per_layer(jit, &t, db, reps);
  if (whole) models(records, reps);
  if (stream) stream_layouts(records, reps);
  if (bound) popcount_bound(jit, &t, reps);
  tsl_records_free(db);
  tsl_jit_free(jit);
  return 0;
}
