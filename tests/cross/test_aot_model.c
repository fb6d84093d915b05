/* Whole models compiled ahead of time (models/aot_model.h, runtime/model_file.h), part
 * of module `cross`: squeezenet1_1 compiled for armv8 by `tunecli compile` (and the
 * binary bsqueezenet1_1 through the C API) and run by the aarch64 tessel-device-app
 * under qemu-aarch64, and squeezenet1_1 compiled for the host and loaded in-process and
 * by the host-built app, each against the x86 JIT plan of the same graph
 * (tsl_graph_compile: another layout, NCHW8c, and another code path); the model file's
 * own checks (no plan, CRC, version, truncation, mutated plans); the format round trip
 * on a hand-made plan; NEON fmla / cnt in the armv8 disassembly. qemu timings printed
 * here are emulation time, not a device's. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/aot.h"
#include "cross/cross_paths.h"
#include "graph/graph_util.h"
#include "cross_util.h"
#include "ir/arena.h"
#include "models/aot_model.h"
#include "models/compile.h"
#include "models/zoo.h"
#include "ref/ref_ops.h"
#include "runtime/graph_executor.h"
#include "runtime/model_file.h"
#include "schedule/template.h"
#include "ops/conv2d/conv2d_select.h"
#include "tessel/runtime.h"
#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "tuner/dispatch.h"
#include "tuner/records.h"

#define MODEL "squeezenet1_1"
#define MODEL_SEED 1 /* what `tunecli compile squeezenet1_1` builds (tools/tunecli/cmd_compile.c) */
#define INPUT_SEED 7

static tsl_graph *graph;      /* the zoo model */
static float *input, *jit_out; /* the input and the host JIT plan's output */
static int64_t in_n, out_n;
static tsl_arena *arena, *prev_arena;

/* Runs p on `input` into out; false (printing why) on failure. No CUnit assertion:
 * suite_init calls it too. */
static bool run_plan(const tsl_graph_plan *p, float *out) {
  tsl_graph_ctx *ctx = NULL;
  bool ok = tsl_graph_ctx_new(p, &ctx) == TSL_OK;
  if (ok) memcpy(tsl_graph_ctx_input(ctx, 0), input, (size_t)in_n * 4);
  ok = ok && tsl_graph_run(ctx, NULL) == TSL_OK;
  if (ok) memcpy(out, tsl_graph_ctx_output(ctx, 0), (size_t)out_n * 4);
  else printf("\n  running the plan failed: %s\n", tsl_last_error());
  tsl_graph_ctx_free(ctx);
  return ok;
}

static int suite_init(void) {
  arena = tsl_arena_new();
  prev_arena = tsl_arena_set_current(arena);
  if (tsl_zoo_build(MODEL, MODEL_SEED, &graph) != TSL_OK) return 1;
  const tsl_value *in = &graph->values[graph->inputs[0]], *out = &graph->values[graph->outputs[0]];
  in_n = out_n = 1;
  for (int d = 0; d < in->ndim; d++) in_n *= in->shape[d];
  for (int d = 0; d < out->ndim; d++) out_n *= out->shape[d];
  input = malloc((size_t)in_n * 4);
  jit_out = malloc((size_t)out_n * 4);
  if (!input || !jit_out) return 1;
  ref_fill_uniform(input, in_n, INPUT_SEED, -1.0f, 1.0f);
  tsl_graph_plan *p = NULL;
  if (tsl_graph_compile(graph, NULL, &p, NULL) != TSL_OK) {
    printf("\n  cross_model: JIT compile of %s failed: %s\n", MODEL, tsl_last_error());
    return 1;
  }
  bool ok = run_plan(p, jit_out);
  tsl_graph_plan_free(p);
  return ok ? 0 : 1;
}

static int suite_clean(void) {
  tsl_graph_free(graph);
  graph = NULL;
  free(input);
  free(jit_out);
  tsl_arena_set_current(prev_arena);
  tsl_arena_free(arena);
  cross_scratch_cleanup();
  return 0;
}

static void top5(const float *v, int64_t n, int top[5]) {
  for (int k = 0; k < 5; k++) {
    top[k] = -1;
    for (int64_t i = 0; i < n; i++) {
      bool taken = false;
      for (int j = 0; j < k; j++) taken |= top[j] == i;
      if (!taken && (top[k] < 0 || v[i] > v[top[k]])) top[k] = (int)i;
    }
  }
}

/* got against want (n values): max abs error <= tol * max |want|, the same top-5 in order. */
static void check_against(const float *got, const float *want, int64_t n, double tol, const char *what) {
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < n; i++) {
    max_ref = fmax(max_ref, fabs(want[i]));
    double e = fabs((double)got[i] - want[i]);
    max_err = isnan(e) ? INFINITY : fmax(max_err, e);
  }
  printf("\n  %s: max abs error %.3g of max |out| %.3g (%.2g relative)", what, max_err, max_ref, max_err / max_ref);
  CU_ASSERT(max_ref > 0);
  CU_ASSERT(max_err <= tol * max_ref);
  int a[5], b[5];
  top5(got, n, a);
  top5(want, n, b);
  CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
}

static void check_against_jit(const float *got, double tol, const char *what) {
  check_against(got, jit_out, out_n, tol, what);
}

static bool write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(data, 1, n, f) == n;
  if (f && fclose(f) != 0) ok = false;
  return ok;
}

static bool read_file(const char *path, void *data, size_t n) {
  FILE *f = fopen(path, "rb");
  bool ok = f && fread(data, 1, n, f) == n && fgetc(f) == EOF;
  if (f) fclose(f);
  return ok;
}

static char *read_all(const char *path) {
  size_t cap = 1 << 24;
  char *text = malloc(cap);
  if (text) cross_read_text(path, text, cap);
  return text;
}

/* How many functions of the disassembly `dis` have a symbol containing `part`; *matching
 * receives how many of those contain both needles (a and b) in their own code. */
static int functions_with(const char *dis, const char *part, const char *a, const char *b, int *matching) {
  int n = 0;
  *matching = 0;
  for (const char *p = strstr(dis, ">:\n"); p; p = strstr(p + 3, ">:\n")) {
    const char *lt = p;
    while (lt > dis && *lt != '<') lt--;
    if (!memmem(lt, (size_t)(p - lt), part, strlen(part))) continue;
    const char *end = strstr(p, "\n\n");
    size_t len = end ? (size_t)(end - p) : strlen(p);
    n++;
    if (memmem(p, len, a, strlen(a)) && memmem(p, len, b, strlen(b))) (*matching)++;
  }
  return n;
}

/* llvm-objdump-19 -d of so into a malloc'd text, or NULL when objdump cannot run. */
static char *disassemble(const char *so) {
  char log[512];
  cross_path(log, sizeof log, "objdump_model.txt");
  char *argv[] = {"llvm-objdump-19", "-d", (char *)so, NULL};
  int rc = cross_spawn(argv, log);
  char *text = rc == 0 ? read_all(log) : NULL;
  unlink(log);
  if (rc != 0) printf("\n  disassembly skipped: llvm-objdump-19 not runnable (%d)", rc);
  return text;
}

/* A layer of squeezenet1_1 as the graph compiler states it for a target of `block`
 * lanes: C x 55 x 55 -> K, k x k, stride 1, "same" padding, ReLU fused. */
static tsl_conv2d_layer fire_layer(int64_t C, int64_t K, int64_t k, int64_t block) {
  tsl_conv2d_layer d;
  memset(&d, 0, sizeof d);
  d.N = 1;
  d.C = C;
  d.H = d.W = 55;
  d.K = K;
  d.R = d.S = k;
  d.stride_h = d.stride_w = d.dilation_h = d.dilation_w = d.groups = 1;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = k / 2;
  d.act = 1;
  d.clip_max = 6.0;
  d.block = block;
  return d;
}

/* Appends to `path` a successful record for target `target` of layer d: the first
 * algorithm other than the one the dispatch picks by default, with its template's
 * default config; its template's name goes to tpl_name. */
static void append_record(const char *path, const char *target, const tsl_conv2d_layer *d, char *tpl_name, size_t n) {
  tsl_tuner_register_templates();
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse(target, &t), TSL_OK);
  tsl_workload w;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(d, &w), TSL_OK);
  tsl_algo_choice *algos = calloc(32, sizeof *algos);
  tsl_record *r = calloc(1, sizeof *r);
  CU_ASSERT_FATAL(algos && r);
  int na = tsl_algorithms_for(&w, algos, 32, NULL);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_schedule *sch = NULL;
  tsl_dispatch_info info;
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(NULL, &t, &w, NULL, &p, &sch, &info), TSL_OK);
  tsl_schedule_free(sch);
  int a = 0;
  while (a < na && strcmp(algos[a].tpl->name, info.template_name) == 0) a++;
  CU_ASSERT_FATAL(a < na && a < 32);
  tsl_config_space sp;
  tsl_config c;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_instantiate(&algos[a].op_workload, &p), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(algos[a].tpl->space(p, &t, &sp), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(algos[a].tpl->default_config(p, &t, &sp, &c), TSL_OK);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_target_str(&t, r->target, sizeof r->target);
  snprintf(r->task, sizeof r->task, "%s", algos[a].tpl->op);
  char *key = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&w, &key), TSL_OK);
  snprintf(r->workload, sizeof r->workload, "%s", key);
  free(key);
  snprintf(r->algorithm, sizeof r->algorithm, "%s", algos[a].name);
  snprintf(r->template_name, sizeof r->template_name, "%s", algos[a].tpl->name);
  snprintf(tpl_name, n, "%s", algos[a].tpl->name);
  r->space_hash = tsl_space_hash(algos[a].tpl->name, algos[a].tpl->version, algos[a].tpl->op, &sp);
  r->config_index = -1;
  r->nknobs = sp.nknobs;
  for (int k = 0; k < sp.nknobs; k++) {
    snprintf(r->knob_names[k], sizeof r->knob_names[k], "%s", sp.knobs[k].name);
    r->knob_kinds[k] = sp.knobs[k].kind;
  }
  r->config = c;
  r->ncosts = 1;
  r->costs[0] = 1e-3;
  r->error_no = TSL_MEASURE_OK;
  r->threads = 1;
  tsl_device_info_host(&t, &r->device);
  tsl_record_stamp(r);
  CU_ASSERT_EQUAL_FATAL(tsl_record_append(path, r), TSL_OK);
  free(r);
  free(algos);
}

/* `tunecli compile squeezenet1_1 --target armv8` -> the aarch64 app under qemu gives
 * the x86 JIT's output; the object's 3x3 convolutions are NEON fmla code. */
static void test_aot_model_armv8_squeezenet_under_qemu_matches_jit(void) {
  if (!cross_device_app_ready()) return;
  char so[512], in[512], out[512], logpath[512];
  cross_path(so, sizeof so, "squeezenet_armv8.so");
  cross_path(in, sizeof in, "squeezenet_in.f32");
  cross_path(out, sizeof out, "squeezenet_out.f32");
  cross_path(logpath, sizeof logpath, "aot_model.log");
  /* records: one armv8 record choosing a non-default algorithm for features.3.expand3x3,
   * and a host record for features.4.squeeze (at armv8's block 4: the same workload key,
   * so only the target tells them apart), which an armv8 file must not use; the other
   * layers take the defaults, with ONE warning line saying so */
  char records[512], armv8_tpl[96], host_tpl[96];
  cross_path(records, sizeof records, "squeezenet_records.jsonl");
  unlink(records);
  tsl_conv2d_layer expand3x3 = fire_layer(16, 64, 3, 4), squeeze = fire_layer(128, 16, 1, 4);
  append_record(records, "armv8", &expand3x3, armv8_tpl, sizeof armv8_tpl);
  append_record(records, "host", &squeeze, host_tpl, sizeof host_tpl);
  double t0 = tsl_time_now();
  char *compile[] = {TSL_TUNECLI_PATH, "compile", MODEL, "--target", "armv8", "--records", records, "-o", so, NULL};
  int rc = cross_spawn(compile, logpath);
  char *log = read_all(logpath);
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  if (rc != 0) printf("\n  tunecli compile: exit %d: %s\n", rc, log);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "distinct kernels, 1 tuned from"));
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "distinct conv workloads on armv8"));
  const char *warn = strstr(log, "tessel: warning: no tuning record");
  CU_ASSERT(warn && !strstr(warn + 1, "tessel: warning: no tuning record"));
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "input input f32[1x3x224x224], 602112 bytes"));
  double t1 = tsl_time_now();
  CU_ASSERT_FATAL(write_file(in, input, (size_t)in_n * 4));
  char *run[] = {(char *)cross_qemu(), "-cpu", "cortex-a53", "-L", "/usr/aarch64-linux-gnu", (char *)TSL_CROSS_DEVICE_APP,
                 "--threads", "2", "--profile", "-o", out, so, in, NULL};
  rc = cross_spawn(run, logpath);
  double t2 = tsl_time_now();
  free(log);
  log = read_all(logpath);
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  if (rc != 0) printf("\n  device app: exit %d: %s\n", rc, log);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "compiled for armv8"));
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "top-5 of output 0:"));
  /* the armv8 record's template scheduled that layer; the host record changed nothing */
  /* (features.4.expand3x3 is the same workload as features.3's: it shares the record) */
  char want_label[256];
  int ntuned = 0;
  for (const char *t = strstr(log, "(tuned)"); t; t = strstr(t + 1, "(tuned)")) ntuned++;
  CU_ASSERT_EQUAL(ntuned, 2);
  snprintf(want_label, sizeof want_label, "features.3.expand3x3 [%s (tuned)]", armv8_tpl);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, want_label));
  snprintf(want_label, sizeof want_label, "features.4.expand3x3 [%s (tuned)]", armv8_tpl);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, want_label));
  const char *sq = strstr(log, "features.4.squeeze [");
  CU_ASSERT(sq && !memmem(sq, strcspn(sq, "\n"), "tuned", 5));
  printf("\n  armv8 AOT compile %.1f s (record: %s for expand3x3); qemu-aarch64 load+run %.1f s (emulation, not a "
         "device timing)", t1 - t0, armv8_tpl, t2 - t1);
  float *got = malloc((size_t)out_n * 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(got);
  CU_ASSERT_FATAL(read_file(out, got, (size_t)out_n * 4));
  check_against_jit(got, 1e-4, "armv8 AOT under qemu vs x86 JIT");
  free(got);
  free(log);
  /* the armv8 model file is refused by the x86 loader, clearly */
  tsl_graph_plan *p = NULL;
#if defined(__x86_64__)
  CU_ASSERT_NOT_EQUAL(tsl_model_file_load(so, &p, NULL), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), so));
  CU_ASSERT_PTR_NULL(p);
#endif
  char *dis = disassemble(so);
  if (dis) {
    /* the 3x3 convs' loop bodies (a kernel, or its outlined parallel task "_par0")
     * multiply-add NEON vectors of 4 floats */
    int with = 0, n = functions_with(dis, "3x3__", "fmla\tv", ".4s", &with);
    printf("\n  3x3 conv functions in the armv8 object: %d, with fmla v.4s: %d", n, with);
    CU_ASSERT(n > 0);
    CU_ASSERT(with > 0);
    int direct = 0;
    functions_with(dis, "conv_direct_3x3", "fmla\tv", ".4s", &direct);
    CU_ASSERT(direct > 0); /* the direct 3x3 conv's default config (the first layer) */
    free(dis);
  }
  unlink(so);
  unlink(in);
  unlink(out);
  unlink(records);
}

/* Compiles g for armv8 ahead of time into the cross folder as NAME.so, runs it with the
 * aarch64 device app under qemu on input[0..n_in) and reads n_out outputs into got.
 * Returns the app's exit status (0: got holds the output); the files are removed. */
int cross_aot_run_under_qemu(const tsl_graph *g, const char *name, const float *input, int64_t n_in, float *got,
                             int64_t n_out) {
  char file[128], so[512], in[512], out[512], logpath[512];
  snprintf(file, sizeof file, "%s_armv8.so", name);
  cross_path(so, sizeof so, file);
  snprintf(file, sizeof file, "%s_in.f32", name);
  cross_path(in, sizeof in, file);
  snprintf(file, sizeof file, "%s_out.f32", name);
  cross_path(out, sizeof out, file);
  snprintf(file, sizeof file, "aot_%s.log", name);
  cross_path(logpath, sizeof logpath, file);
  tsl_aot_model_options o = {.target = "armv8"};
  tsl_aot_model_stats st;
  tsl_status s = tsl_aot_compile_model(g, &o, so, &st);
  if (s != TSL_OK) printf("\n  aot compile: %s\n", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(s, TSL_OK);
  CU_ASSERT_FATAL(write_file(in, input, (size_t)n_in * 4));
  char *run[] = {(char *)cross_qemu(), "-cpu", "cortex-a53", "-L", "/usr/aarch64-linux-gnu", (char *)TSL_CROSS_DEVICE_APP,
                 "-o", out, so, in, NULL};
  int rc = cross_spawn(run, logpath);
  char *log = read_all(logpath);
  if (rc != 0) printf("\n  device app: exit %d: %s\n", rc, log ? log : "");
  if (rc == 0) CU_ASSERT(read_file(out, got, (size_t)n_out * 4));
  free(log);
  unlink(so);
  unlink(in);
  unlink(out);
  return rc;
}

/* A binary network (1-bit activations and weights: bitpack, bitserial conv, glue) through
 * the C API for armv8, run under qemu: the x86 JIT plan's output. */
static void test_aot_model_armv8_binary_squeezenet_under_qemu_matches_jit(void) {
  if (!cross_device_app_ready()) return;
  tsl_graph *bg = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build("bsqueezenet1_1", MODEL_SEED, &bg), TSL_OK);
  float *want = malloc((size_t)out_n * 4), *got = malloc((size_t)out_n * 4);
  CU_ASSERT_FATAL(want && got);
  tsl_graph_plan *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_compile(bg, NULL, &p, NULL), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_output_info(p, 0).bytes, out_n * 4);
  CU_ASSERT(run_plan(p, want));
  tsl_graph_plan_free(p);
  int rc = cross_aot_run_under_qemu(bg, "bsqueezenet", input, in_n, got, out_n);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc == 0) check_against(got, want, out_n, 1e-4, "binary squeezenet armv8 AOT under qemu vs x86 JIT");
  free(want);
  free(got);
  tsl_graph_free(bg);
}

static int node2(tsl_graph *g, tsl_op op, int a, int b, int *node) {
  int ins[2] = {a, b};
  return gt_add_node(g, op, b >= 0 ? 2 : 1, ins, node);
}

/* ConvNeXt's block as the armv8 AOT compiler builds it (erf's polynomial, the layer_norm,
 * reduce and pow generators, MatMul on NHWC data, transposes), run by the device app
 * under qemu, against the reference executor: to NHWC, LayerNorm, MatMul + bias, Gelu,
 * + Erf, MatMul + bias, x - mean(x), cube, back to NCHW, + input. */
static void test_aot_model_armv8_convnext_block_under_qemu_matches_reference(void) {
  if (!cross_device_app_ready()) return;
  tsl_graph *g;
  int x, n;
  int64_t xs[4] = {1, 16, 6, 5}, c[1] = {16}, w1[2] = {16, 64}, b1[1] = {64}, w2[2] = {64, 16}, last = -1;
  static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("convnext_block", &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, xs, &x), TSL_OK);
  int v = node2(g, TSL_OP_TRANSPOSE, x, -1, &n);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, n, "perm", 4, to_nhwc), TSL_OK);
  int ln[3] = {v, gt_add_const(g, 1, c, 1, 0.5, 1.5), gt_add_const(g, 1, c, 2, -0.2, 0.2)};
  v = gt_add_node(g, TSL_OP_LAYER_NORM, 3, ln, &n);
  v = node2(g, TSL_OP_ADD, node2(g, TSL_OP_MATMUL, v, gt_add_const(g, 2, w1, 3, -0.3, 0.3), NULL),
            gt_add_const(g, 1, b1, 4, -0.1, 0.1), NULL);
  v = node2(g, TSL_OP_ACTIVATION, v, -1, &n);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, n, "function", "Gelu"), TSL_OK);
  int e = node2(g, TSL_OP_ACTIVATION, v, -1, &n);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, n, "function", "Erf"), TSL_OK);
  v = node2(g, TSL_OP_ADD, v, e, NULL);
  v = node2(g, TSL_OP_ADD, node2(g, TSL_OP_MATMUL, v, gt_add_const(g, 2, w2, 5, -0.3, 0.3), NULL),
            gt_add_const(g, 1, c, 6, -0.1, 0.1), NULL);
  int m = node2(g, TSL_OP_REDUCE_MEAN, v, -1, &n);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, n, "axes", 1, &last), TSL_OK);
  v = node2(g, TSL_OP_POW, node2(g, TSL_OP_SUB, v, m, NULL), -1, &n);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, n, "exponent", 3.0), TSL_OK);
  v = node2(g, TSL_OP_TRANSPOSE, v, -1, &n);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, n, "perm", 4, to_nchw), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, node2(g, TSL_OP_ADD, v, x, NULL)), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  int64_t count = 16 * 6 * 5;
  float *in_data = malloc((size_t)count * 4), *want[1] = {NULL}, *got = malloc((size_t)count * 4);
  CU_ASSERT_FATAL(in_data && got);
  ref_fill_uniform(in_data, count, INPUT_SEED, -2.0f, 2.0f);
  const float *ins[1] = {in_data};
  CU_ASSERT_EQUAL_FATAL(gt_reference_run(g, ins, want), TSL_OK);
  int rc = cross_aot_run_under_qemu(g, "convnext_block", in_data, count, got, count);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc == 0) {
    double max_ref = 0, max_err = 0;
    for (int64_t i = 0; i < count; i++) {
      max_ref = fmax(max_ref, fabs(want[0][i]));
      max_err = isnan(got[i]) ? INFINITY : fmax(max_err, fabs((double)got[i] - want[0][i]));
    }
    printf("\n  ConvNeXt block armv8 AOT under qemu vs reference: max abs error %.3g of max |out| %.3g", max_err, max_ref);
    CU_ASSERT(max_err <= 1e-5 * max_ref);
  }
  free(in_data);
  free(want[0]);
  free(got);
  tsl_graph_free(g);
}

/* --target host: the same file format loads in-process and in the host-built app,
 * giving the JIT plan's output. */
static void test_aot_model_host_file_loads_and_matches_jit(void) {
  char so[512], out[512], logpath[512];
  cross_path(so, sizeof so, "squeezenet_host.so");
  cross_path(out, sizeof out, "squeezenet_host_out.f32");
  cross_path(logpath, sizeof logpath, "aot_host.log");
  tsl_aot_model_options o = {.target = "host"};
  tsl_aot_model_stats s;
  CU_ASSERT_EQUAL_FATAL(tsl_aot_compile_model(graph, &o, so, &s), TSL_OK);
  CU_ASSERT(s.kernels > 0 && s.kernels <= s.steps);
  CU_ASSERT(s.constant_bytes > 4000000); /* squeezenet1_1 has 1.24 M weights */
  tsl_graph_plan *p = NULL;
  tsl_model_file_info info;
  CU_ASSERT_EQUAL_FATAL(tsl_model_file_load(so, &p, &info), TSL_OK);
  CU_ASSERT_EQUAL(info.version, TSL_MODEL_FILE_VERSION);
  CU_ASSERT_EQUAL(info.steps, s.steps);
  CU_ASSERT_EQUAL(info.kernels, s.kernels);
  CU_ASSERT_EQUAL(info.constant_bytes, s.constant_bytes);
  CU_ASSERT_EQUAL(tsl_graph_plan_arena_bytes(p), s.arena_bytes);
  CU_ASSERT_EQUAL(tsl_graph_plan_num_inputs(p), 1);
  tsl_graph_io_info ii = tsl_graph_plan_input_info(p, 0), oi = tsl_graph_plan_output_info(p, 0);
  CU_ASSERT_STRING_EQUAL(ii.name, "input");
  CU_ASSERT_STRING_EQUAL(oi.name, "output");
  CU_ASSERT_EQUAL(oi.bytes, out_n * 4);
  float *got = malloc((size_t)out_n * 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(got);
  CU_ASSERT(run_plan(p, got));
  check_against_jit(got, 1e-5, "host AOT in-process vs JIT");
  tsl_graph_plan_free(p);
  /* the host-built device app, from a seeded input file */
  char in[512];
  cross_path(in, sizeof in, "squeezenet_host_in.f32");
  CU_ASSERT_FATAL(write_file(in, input, (size_t)in_n * 4));
  char *run[] = {TSL_HOST_DEVICE_APP, "--repeat", "3", "-o", out, so, in, NULL};
  int rc = cross_spawn(run, logpath);
  char *log = read_all(logpath);
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  if (rc != 0) printf("\n  host app: exit %d: %s\n", rc, log);
  CU_ASSERT_EQUAL(rc, 0);
  memset(got, 0, (size_t)out_n * 4);
  if (rc == 0) {
    CU_ASSERT(read_file(out, got, (size_t)out_n * 4));
    check_against_jit(got, 1e-5, "host AOT in tessel-device-app vs JIT");
  }
  /* wrong input size: exit 1 naming the input and its bytes */
  char *bad[] = {TSL_HOST_DEVICE_APP, so, logpath, NULL};
  char badlog[512];
  cross_path(badlog, sizeof badlog, "aot_host_bad.log");
  CU_ASSERT_EQUAL(cross_spawn(bad, badlog), 1);
  free(log);
  log = read_all(badlog);
  CU_ASSERT(log != NULL && strstr(log, "wants exactly 602112 bytes") != NULL);
  free(log);
  free(got);
  unlink(so);
  unlink(in);
  unlink(out);
}

static bool copy_file(const char *from, const char *to, long truncate_by) {
  FILE *f = fopen(from, "rb");
  if (!f) return false;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n);
  bool ok = b && fread(b, 1, (size_t)n, f) == (size_t)n;
  fclose(f);
  ok = ok && write_file(to, b, (size_t)(n - truncate_by));
  free(b);
  return ok;
}

/* Patches `n` bytes at `offset` from the end of the file (negative offsets). */
static bool patch_file(const char *path, long from_end, const void *bytes, size_t n) {
  FILE *f = fopen(path, "r+b");
  bool ok = f && fseek(f, from_end, SEEK_END) == 0 && fwrite(bytes, 1, n, f) == n;
  if (f && fclose(f) != 0) ok = false;
  return ok;
}

/* The format round trip on a hand-made plan (a relu step, a constant output through a
 * view), and each refusal of a damaged file with its message. */
static void test_model_file_round_trip_and_damaged_files(void) {
  const tsl_op_info *relu = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("relu", &relu), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(relu, 3, &op));
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(cross_lower(&op, &t, "relu_k", &f), TSL_OK);
  char so[512], bad[512];
  cross_path(so, sizeof so, "relu_model.so");
  const tsl_func *fs[1] = {f};
  CU_ASSERT_EQUAL_FATAL(tsl_aot_compile(fs, 1, &t, so), TSL_OK);
  /* a kernel object without a plan */
  tsl_graph_plan *p = NULL;
  CU_ASSERT_EQUAL(tsl_model_file_load(so, &p, NULL), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "no tessel model plan"));
  CU_ASSERT_PTR_NULL(p);
  int64_t n = (int64_t)(op.bytes[0] / 4), padded = ((int64_t)op.bytes[0] + 63) / 64 * 64;
  tsl_model_writer *w = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_writer_new("host", &w), TSL_OK);
  int in_buf, out_buf, c_buf, v_buf;
  CU_ASSERT_EQUAL(tsl_model_writer_add_activation(w, 0, n * 4, &in_buf), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_activation(w, padded, n * 4, &out_buf), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_activation(w, 3, 4, &c_buf), TSL_ERR_INVALID); /* misaligned */
  int64_t cshape[2] = {4, 6};
  tsl_tensor *ct = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 2, cshape, &ct), TSL_OK);
  for (int i = 0; i < 24; i++) ((float *)ct->data)[i] = 0.5f * (float)i - 1.0f;
  CU_ASSERT_EQUAL(tsl_model_writer_add_constant(w, ct, &c_buf), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_view(w, c_buf, 64, 16, &v_buf), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_view(w, c_buf, 64, 33, &v_buf), TSL_ERR_INVALID); /* past the base */
  CU_ASSERT_EQUAL(tsl_model_writer_add_view(w, c_buf, 8, 16, &v_buf), TSL_ERR_INVALID);  /* misaligned */
  CU_ASSERT_EQUAL(tsl_model_writer_add_step(w, "relu_k", "the relu", 2, (int[]){in_buf, out_buf}), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_step(w, "relu_k", NULL, 2, (int[]){in_buf, 99}), TSL_ERR_INVALID);
  int64_t shape1[1] = {n}, shape4[1] = {4};
  CU_ASSERT_EQUAL(tsl_model_writer_add_input(w, "x", c_buf, TSL_DTYPE_F32, 2, cshape), TSL_ERR_INVALID); /* constant */
  CU_ASSERT_EQUAL(tsl_model_writer_add_input(w, "x", in_buf, TSL_DTYPE_F32, 1, shape1), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_output(w, "y", out_buf, TSL_DTYPE_F32, 1, shape1), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_output(w, "c", v_buf, TSL_DTYPE_F32, 1, shape4), TSL_OK);
  int64_t appended = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_model_writer_append(w, so, &appended), TSL_OK);
  CU_ASSERT(appended > TSL_MODEL_FILE_TRAILER_BYTES + 24);
  tsl_model_writer_free(w);
  tsl_model_file_info info;
  CU_ASSERT_EQUAL_FATAL(tsl_model_file_load(so, &p, &info), TSL_OK);
  CU_ASSERT_EQUAL(info.plan_bytes, appended);
  CU_ASSERT_STRING_EQUAL(info.target, "host");
  CU_ASSERT_EQUAL(info.buffers, 4);
  CU_ASSERT_EQUAL(info.steps, 1);
  CU_ASSERT_STRING_EQUAL(tsl_graph_plan_step_label(p, 0), "the relu");
  tsl_graph_ctx *ctx = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(p, &ctx), TSL_OK);
  memcpy(tsl_graph_ctx_input(ctx, 0), op.bufs[0], (size_t)n * 4);
  CU_ASSERT_EQUAL(tsl_graph_run(ctx, NULL), TSL_OK);
  const float *x = op.bufs[0], *y = tsl_graph_ctx_output(ctx, 0), *cv = tsl_graph_ctx_output(ctx, 1);
  int wrong = 0;
  for (int64_t i = 0; i < n; i++) wrong += y[i] != (x[i] > 0 ? x[i] : 0.0f);
  CU_ASSERT_EQUAL(wrong, 0);
  for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(cv[i], 0.5f * (float)(i + 16) - 1.0f);
  tsl_graph_ctx_free(ctx);
  tsl_graph_plan_free(p);
  tsl_tensor_free(ct);
  /* damaged copies (each at a fresh path: dlopen caches by path) */
  cross_path(bad, sizeof bad, "relu_truncated.so");
  CU_ASSERT_FATAL(copy_file(so, bad, 5));
  CU_ASSERT_EQUAL(tsl_model_file_load(bad, &p, NULL), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), bad));
  cross_path(bad, sizeof bad, "relu_crc.so");
  CU_ASSERT_FATAL(copy_file(so, bad, 0));
  CU_ASSERT_FATAL(patch_file(bad, -TSL_MODEL_FILE_TRAILER_BYTES - 3, "\x7f", 1));
  CU_ASSERT_EQUAL(tsl_model_file_load(bad, &p, NULL), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "CRC-32"));
  cross_path(bad, sizeof bad, "relu_v2.so");
  CU_ASSERT_FATAL(copy_file(so, bad, 0));
  CU_ASSERT_FATAL(patch_file(bad, -12, "\x02\x00\x00\x00", 4));
  CU_ASSERT_EQUAL(tsl_model_file_load(bad, &p, NULL), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "version 2"));
  cross_path(bad, sizeof bad, "no_such_model.so");
  CU_ASSERT_EQUAL(tsl_model_file_load(bad, &p, NULL), TSL_ERR_IO);
  CU_ASSERT_PTR_NULL(p);
  unlink(so);
  cross_op_free(&op);
}

/* CRC-32 (IEEE), bit by bit: written apart from runtime/model_file.c's table version. */
static uint32_t naive_crc32(const uint8_t *p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

/* Random byte changes in the plan, with the CRC made to match again so the parser sees
 * them: every load fails cleanly or succeeds, never crashes or reads outside the file
 * (the sanitizer build checks the latter). */
static void test_model_file_mutated_plans_fail_cleanly(void) {
  const tsl_op_info *relu = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("relu", &relu), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(relu, 5, &op));
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(cross_lower(&op, &t, "relu_m", &f), TSL_OK);
  char so[512], bad[512];
  cross_path(so, sizeof so, "relu_mut.so");
  cross_path(bad, sizeof bad, "relu_mut_bad.so");
  const tsl_func *fs[1] = {f};
  CU_ASSERT_EQUAL_FATAL(tsl_aot_compile(fs, 1, &t, so), TSL_OK);
  int64_t n = (int64_t)(op.bytes[0] / 4);
  tsl_model_writer *w = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_writer_new("host", &w), TSL_OK);
  int b[4];
  int64_t cshape[1] = {32}, shape[1] = {n};
  tsl_tensor *ct = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, cshape, &ct), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_activation(w, 0, n * 4, &b[0]), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_activation(w, (n * 4 + 63) / 64 * 64, n * 4, &b[1]), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_constant(w, ct, &b[2]), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_view(w, b[2], 64, 8, &b[3]), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_step(w, "relu_m", "relu", 2, b), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_input(w, "x", b[0], TSL_DTYPE_F32, 1, shape), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_writer_add_output(w, "y", b[1], TSL_DTYPE_F32, 1, shape), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_model_writer_append(w, so, NULL), TSL_OK);
  tsl_model_writer_free(w);
  tsl_tensor_free(ct);
  FILE *fp = fopen(so, "rb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
  fseek(fp, 0, SEEK_END);
  size_t size = (size_t)ftell(fp);
  fseek(fp, 0, SEEK_SET);
  uint8_t *good = malloc(size), *mut = malloc(size);
  CU_ASSERT_FATAL(good && mut && fread(good, 1, size, fp) == size);
  fclose(fp);
  const uint8_t *tr = good + size - TSL_MODEL_FILE_TRAILER_BYTES;
  uint64_t off = 0, len = 0;
  for (int i = 7; i >= 0; i--) off = off << 8 | tr[i];
  for (int i = 15; i >= 8; i--) len = len << 8 | tr[i];
  CU_ASSERT_FATAL(off + len + TSL_MODEL_FILE_TRAILER_BYTES == size);
  uint64_t rng = 12345;
  int loaded = 0, refused = 0;
  for (int trial = 0; trial < 300; trial++) {
    memcpy(mut, good, size);
    int nflips = 1 + trial % 3;
    for (int k = 0; k < nflips; k++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      size_t at = (size_t)off + (size_t)((rng >> 33) % len);
      mut[at] ^= (uint8_t)(1u << ((rng >> 20) & 7));
    }
    uint32_t crc = naive_crc32(mut + off, (size_t)len);
    for (int i = 0; i < 4; i++) mut[size - 16 + (size_t)i] = (uint8_t)(crc >> (8 * i));
    CU_ASSERT_FATAL(write_file(bad, mut, size));
    tsl_graph_plan *p = NULL;
    if (tsl_model_file_load(bad, &p, NULL) == TSL_OK) loaded++;
    else {
      refused++;
      CU_ASSERT_PTR_NULL(p);
      CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), bad));
    }
    tsl_graph_plan_free(p);
  }
  printf("\n  300 mutated plans: %d refused, %d loaded (a change in data or a name's letters)", refused, loaded);
  CU_ASSERT(refused > 100);
  free(good);
  free(mut);
  unlink(so);
  unlink(bad);
  cross_op_free(&op);
}

/* The binary bitserial convolution for armv8 counts bits with NEON cnt on .8b/.16b. */
static void test_armv8_bitserial_conv_object_uses_cnt(void) {
  const tsl_op_info *info = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("bitserial_conv2d_bipolar64", &info), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(info, 4, &op));
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(cross_lower(&op, &t, "bitserial_conv", &f), TSL_OK);
  char so[512];
  cross_path(so, sizeof so, "bitserial.so");
  const tsl_func *fs[1] = {f};
  CU_ASSERT_EQUAL_FATAL(tsl_aot_compile(fs, 1, &t, so), TSL_OK);
  char *dis = disassemble(so);
  if (dis) {
    int with8 = 0, with16 = 0;
    CU_ASSERT(functions_with(dis, "bitserial_conv", "cnt\tv", ".8b", &with8) > 0);
    functions_with(dis, "bitserial_conv", "cnt\tv", ".16b", &with16);
    printf("\n  bitserial conv functions with cnt v.8b: %d, v.16b: %d", with8, with16);
    CU_ASSERT(with8 + with16 > 0);
    free(dis);
  }
  unlink(so);
  cross_op_free(&op);
}

/* tunecli compile MODEL: usage errors exit 2, a bad target exits 1 naming it, no file. */
static void test_tunecli_compile_model_errors(void) {
  char so[512], logpath[512];
  cross_path(so, sizeof so, "never.so");
  cross_path(logpath, sizeof logpath, "compile_model_err.log");
  char *no_out[] = {TSL_TUNECLI_PATH, "compile", MODEL, "--target", "armv8", NULL};
  CU_ASSERT_EQUAL(cross_spawn(no_out, logpath), 2);
  char *unknown[] = {TSL_TUNECLI_PATH, "compile", MODEL, "--shape", "x=1", "-o", so, NULL};
  CU_ASSERT_EQUAL(cross_spawn(unknown, logpath), 2);
  char *bad_target[] = {TSL_TUNECLI_PATH, "compile", MODEL, "--target", "mips64", "-o", so, NULL};
  CU_ASSERT_EQUAL(cross_spawn(bad_target, logpath), 1);
  char *log = read_all(logpath);
  CU_ASSERT(log != NULL && strstr(log, "mips64") != NULL);
  free(log);
  char *bad_model[] = {TSL_TUNECLI_PATH, "compile", "no/such/model.onnx", "-o", so, NULL};
  CU_ASSERT_EQUAL(cross_spawn(bad_model, logpath), 1);
  CU_ASSERT_EQUAL(access(so, F_OK), -1);
}

void tsl_tests_cross_model(void);
void tsl_tests_cross_model(void) {
  CU_pSuite s = CU_add_suite("cross_model", suite_init, suite_clean);
  CU_add_test(s, "aot_model_armv8_squeezenet_under_qemu_matches_jit",
              test_aot_model_armv8_squeezenet_under_qemu_matches_jit);
  CU_add_test(s, "aot_model_armv8_binary_squeezenet_under_qemu_matches_jit",
              test_aot_model_armv8_binary_squeezenet_under_qemu_matches_jit);
  CU_add_test(s, "aot_model_armv8_convnext_block_under_qemu_matches_reference",
              test_aot_model_armv8_convnext_block_under_qemu_matches_reference);
  CU_add_test(s, "aot_model_host_file_loads_and_matches_jit", test_aot_model_host_file_loads_and_matches_jit);
  CU_add_test(s, "model_file_round_trip_and_damaged_files", test_model_file_round_trip_and_damaged_files);
  CU_add_test(s, "model_file_mutated_plans_fail_cleanly", test_model_file_mutated_plans_fail_cleanly);
  CU_add_test(s, "armv8_bitserial_conv_object_uses_cnt", test_armv8_bitserial_conv_object_uses_cnt);
  CU_add_test(s, "tunecli_compile_model_errors", test_tunecli_compile_model_errors);
}
