/* The on-disk JIT object cache (codegen/jit_cache.h) and the loop-IR features of the
 * cost model (tuner/ir_features.h). */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_stderr.h"
#include "codegen/build.h"
#include "codegen/jit_cache.h"
#include "ir/arena.h"
#include "ops/registry.h"
#include "ref/ref_ops.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"
#include "schedule/template.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "test_cache_dir.h"
#include "tuner/cost_model.h"
#include "tuner/ir_features.h"
#include "tuner/peak.h"
#include "tuner_tests.h"

/* ---- JIT cache ------------------------------------------------------------------ */

static tsl_test_cache_dir cache;
#define cache_dir (cache.dir)

/* A private cache directory, so the tests see only their own entries. */
static int cache_suite_init(void) {
  if (tsl_test_cache_dir_enter(&cache, "tessel-jit-cache-test") != 0) return 1;
  unsetenv("TSL_CACHE");
  tsl_jit_cache_set_enabled(true);
  return 0;
}

static int cache_suite_clean(void) {
  tsl_test_cache_dir_leave(&cache);
  return 0;
}

static int count_entries(void) {
  char p[300];
  snprintf(p, sizeof p, "%s/jit-v1", cache_dir);
  DIR *d = opendir(p);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) n += strstr(e->d_name, ".o") && !strstr(e->d_name, ".tmp");
  closedir(d);
  return n;
}

/* Compiles matmul M x K x K (default schedule) in a fresh JIT, runs it on seeded inputs
 * and returns the max relative error against the naive reference (inf on failure).
 * It asks tsl_build for the lowered IR, which the level-1 (kernel) cache cannot give,
 * so these tests see the level-2 (object) cache alone; tests/codegen/test_build_cache.c
 * tests level 1. */
static double compile_and_check_matmul(int64_t M, int64_t K) {
  tsl_arena *a = tsl_arena_new(), *prev = tsl_arena_set_current(a);
  const int64_t sa[] = {M, K}, sb[] = {K, K};
  const int64_t *shapes[] = {sa, sb};
  const int nd[] = {2, 2};
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  tsl_target host;
  tsl_jit *jit = NULL;
  tsl_module *m = NULL;
  tsl_func *lowered = NULL;
  double err = INFINITY;
  /* kernels take 64-byte aligned buffers (the runtime's tensors are) */
  float *A = aligned_alloc(64, 64 * 64 * sizeof(float)), *B = aligned_alloc(64, 64 * 64 * sizeof(float));
  float *C = aligned_alloc(64, 64 * 64 * sizeof(float)), *R = malloc(sizeof *R * (size_t)(M * K));
  if (M > 64 || K > 64) M = K = 0; /* the buffers hold 64 x 64 */
  if (A && B && C && R && tsl_op_instantiate("matmul", 2, shapes, nd, 0, NULL, &p) == TSL_OK &&
      tsl_schedule_create(p, &s) == TSL_OK && tsl_target_parse("host", &host) == TSL_OK &&
      tsl_jit_new(&host, &jit) == TSL_OK && tsl_module_new(&m) == TSL_OK &&
      tsl_build(s, "cache_matmul", jit, m, &lowered, NULL) == TSL_OK) {
    ref_fill_uniform(A, M * K, 11, -1, 1);
    ref_fill_uniform(B, K * K, 12, -1, 1);
    ref_matmul(M, K, K, A, B, R);
    void *ptrs[] = {A, B, C};
    void *args[] = {&ptrs[0], &ptrs[1], &ptrs[2]};
    if (tsl_kernel_call(tsl_module_kernel_at(m, 0), args, 3) == TSL_OK) err = ref_max_rel_error(C, R, M * K);
  }
  tsl_module_free(m);
  tsl_jit_free(jit);
  tsl_schedule_free(s);
  free(A);
  free(B);
  free(C);
  free(R);
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
  return err;
}

/* A second compile of the same kernel in a fresh JIT is a hit and still computes right. */
static void test_jit_cache_second_compile_hits(void) {
  tsl_jit_cache_reset_stats();
  CU_ASSERT(compile_and_check_matmul(8, 16) < 1e-5);
  tsl_jit_cache_stats st;
  tsl_jit_cache_get_stats(&st);
  CU_ASSERT_EQUAL(st.hits, 0);
  CU_ASSERT_EQUAL(st.misses, 1);
  CU_ASSERT_EQUAL(st.stores, 1);
  CU_ASSERT_EQUAL(count_entries(), 1);
  CU_ASSERT(compile_and_check_matmul(8, 16) < 1e-5);
  tsl_jit_cache_get_stats(&st);
  CU_ASSERT_EQUAL(st.hits, 1);
  CU_ASSERT_EQUAL(st.misses, 1);
  CU_ASSERT_EQUAL(count_entries(), 1);
}

/* Another shape (other constants in the IR) or another context is another key: the
 * entry of the old kernel is never used for it. */
static void test_jit_cache_stale_key_misses(void) {
  tsl_jit_cache_reset_stats();
  CU_ASSERT(compile_and_check_matmul(8, 24) < 1e-5);
  tsl_jit_cache_stats st;
  tsl_jit_cache_get_stats(&st);
  CU_ASSERT_EQUAL(st.hits, 0);
  CU_ASSERT_EQUAL(st.misses, 1);
  const char ir[] = "define void @k() { ret void }";
  tsl_jit_cache_key k1 = tsl_jit_cache_key_of(ir, sizeof ir, "tessel=0.1;llvm=19.1.7;cpu=znver3");
  tsl_jit_cache_key k2 = tsl_jit_cache_key_of(ir, sizeof ir, "tessel=0.2;llvm=19.1.7;cpu=znver3");
  tsl_jit_cache_key k3 = tsl_jit_cache_key_of(ir, sizeof ir, "tessel=0.1;llvm=19.1.7;cpu=znver4");
  tsl_jit_cache_key k4 = tsl_jit_cache_key_of(ir, sizeof ir - 2, "tessel=0.1;llvm=19.1.7;cpu=znver3");
  CU_ASSERT(k1.h[0] != k2.h[0] && k1.h[1] != k2.h[1]);
  CU_ASSERT(k1.h[0] != k3.h[0] && k1.h[1] != k3.h[1]);
  CU_ASSERT(k1.h[0] != k4.h[0] && k1.h[1] != k4.h[1]);
  /* an entry moved under another key's name is never used for that key */
  char dir[300], names[2][600];
  int n = 0;
  snprintf(dir, sizeof dir, "%s/jit-v1", cache_dir);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && n < 2 && (e = readdir(d)))
    if (strstr(e->d_name, ".o")) snprintf(names[n++], sizeof names[0], "%s/%s", dir, e->d_name);
  if (d) closedir(d);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  char tmp[620];
  snprintf(tmp, sizeof tmp, "%s/swap", dir);
  CU_ASSERT_EQUAL(rename(names[0], tmp), 0);
  CU_ASSERT_EQUAL(rename(names[1], names[0]), 0);
  CU_ASSERT_EQUAL(rename(tmp, names[1]), 0);
  tsl_jit_cache_reset_stats();
  CU_ASSERT(compile_and_check_matmul(8, 16) < 1e-5);
  CU_ASSERT(compile_and_check_matmul(8, 24) < 1e-5);
  tsl_jit_cache_get_stats(&st);
  CU_ASSERT_EQUAL(st.hits, 0);
  CU_ASSERT_EQUAL(st.corrupt, 2);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  char *ctx = tsl_jit_cache_context(&host);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
  CU_ASSERT_PTR_NOT_NULL(strstr(ctx, "llvm=19."));
  CU_ASSERT_PTR_NOT_NULL(strstr(ctx, "tessel="));
  CU_ASSERT_PTR_NOT_NULL(strstr(ctx, host.cpu));
  free(ctx);
}

/* Overwrites every entry with bytes from f (a garbage writer). */
static void spoil_entries(void (*f)(FILE *, long size)) {
  char p[300], q[600];
  snprintf(p, sizeof p, "%s/jit-v1", cache_dir);
  DIR *d = opendir(p);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strstr(e->d_name, ".o")) continue;
    snprintf(q, sizeof q, "%s/%s", p, e->d_name);
    FILE *fp = fopen(q, "r+b");
    if (!fp) continue;
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    f(fp, size);
    fclose(fp);
  }
  closedir(d);
}

static void truncate_half(FILE *fp, long size) { CU_ASSERT_EQUAL(ftruncate(fileno(fp), size / 2), 0); }

static void flip_object_byte(FILE *fp, long size) {
  fseek(fp, size - 9, SEEK_SET);
  int c = fgetc(fp);
  fseek(fp, size - 9, SEEK_SET);
  fputc(c ^ 0x5a, fp);
}

static void garbage(FILE *fp, long size) {
  for (long i = 0; i < size; i++) fputc((int)(i * 7 + 3) & 0xff, fp);
}

/* A truncated, bit-flipped or garbage entry is reported, removed and recompiled (the
 * kernel still computes right) and the entry is stored again. */
static void test_jit_cache_corrupt_entry_recompiles(void) {
  void (*spoilers[])(FILE *, long) = {truncate_half, flip_object_byte, garbage};
  CU_ASSERT(compile_and_check_matmul(4, 8) < 1e-5); /* make sure the entry exists */
  for (size_t i = 0; i < sizeof spoilers / sizeof spoilers[0]; i++) {
    spoil_entries(spoilers[i]);
    tsl_jit_cache_reset_stats();
    CU_ASSERT(compile_and_check_matmul(4, 8) < 1e-5);
    tsl_jit_cache_stats st;
    tsl_jit_cache_get_stats(&st);
    CU_ASSERT_EQUAL(st.hits, 0);
    CU_ASSERT_EQUAL(st.corrupt, 1);
    CU_ASSERT_EQUAL(st.stores, 1);
    /* spoil_entries spoils every entry: the other kernels' entries are now corrupt
     * too, which the next round finds for this one only */
    tsl_jit_cache_reset_stats();
    CU_ASSERT(compile_and_check_matmul(4, 8) < 1e-5);
    tsl_jit_cache_get_stats(&st);
    CU_ASSERT_EQUAL(st.hits, 1);
    CU_ASSERT_EQUAL(st.corrupt, 0);
  }
}

/* TSL_CACHE=0 and tsl_jit_cache_set_enabled(false) bypass the cache entirely. */
static void test_jit_cache_disabled_writes_nothing(void) {
  int before = count_entries();
  setenv("TSL_CACHE", "0", 1);
  CU_ASSERT_FALSE(tsl_jit_cache_enabled());
  tsl_jit_cache_reset_stats();
  CU_ASSERT(compile_and_check_matmul(3, 40) < 1e-5);
  unsetenv("TSL_CACHE");
  tsl_jit_cache_set_enabled(false);
  CU_ASSERT(compile_and_check_matmul(5, 40) < 1e-5);
  tsl_jit_cache_set_enabled(true);
  tsl_jit_cache_stats st;
  tsl_jit_cache_get_stats(&st);
  CU_ASSERT_EQUAL(st.hits + st.misses + st.stores, 0);
  CU_ASSERT_EQUAL(count_entries(), before);
  CU_ASSERT_TRUE(tsl_jit_cache_enabled());
}

/* The peak file keeps the largest peak per machine and thread count; a malformed line
 * is ignored. */
static void test_peak_file_keeps_max_of_measurements(void) {
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  double g = 0;
  CU_ASSERT_EQUAL(tsl_peak_lookup(&host, 1, &g), TSL_ERR_NOT_FOUND);
  CU_ASSERT_EQUAL(tsl_peak_store(&host, 1, 40.0), TSL_OK);
  CU_ASSERT_EQUAL(tsl_peak_store(&host, 1, 90.5), TSL_OK);
  CU_ASSERT_EQUAL(tsl_peak_store(&host, 1, 60.0), TSL_OK); /* a loaded run: lower */
  CU_ASSERT_EQUAL(tsl_peak_store(&host, 2, 150.0), TSL_OK);
  CU_ASSERT_EQUAL(tsl_peak_store(&host, 2, NAN), TSL_ERR_INVALID);
  char path[300];
  snprintf(path, sizeof path, "%s/peak-v1.txt", cache_dir);
  FILE *f = fopen(path, "a");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("garbage line\nkey -3 nan\n", f);
  fclose(f);
  CU_ASSERT_EQUAL(tsl_peak_lookup(&host, 1, &g), TSL_OK);
  CU_ASSERT_DOUBLE_EQUAL(g, 90.5, 1e-9);
  CU_ASSERT_EQUAL(tsl_peak_lookup(&host, 2, &g), TSL_OK);
  CU_ASSERT_DOUBLE_EQUAL(g, 150.0, 1e-9);
  CU_ASSERT_EQUAL(tsl_peak_lookup(&host, 3, &g), TSL_ERR_NOT_FOUND);
}

/* ---- IR features ---------------------------------------------------------------- */

static float l2(double x) { return (float)log2(1.0 + x); }

/* for i in 0..4 (parallel): for k in 0..16: C[i] = C[i] + A[i*16 + k] * B[k], f32.
 * By hand: one nest, depth 2, trip 64, 2 flops and 3 load lanes per iteration; over the
 * k loop C touches 1 element (its load and store are the same element), A and B 16
 * each: 33 floats = 132 bytes, accessed 4 x 4 x 16 = 256 bytes, 32 flops; over i and
 * k: C 4, A 64 (span 1 + 16*3 + 15), B 16 = 84 floats = 336 bytes, accessed 1024
 * bytes, 128 flops. Of the 3 loads, C[i] does not move with k, A and B have stride 1. */
static void test_ir_features_of_hand_loop_nest(void) {
  tsl_arena *a = tsl_arena_new(), *prev = tsl_arena_set_current(a);
  const int64_t s64[] = {64}, s16[] = {16}, s4[] = {4};
  tsl_buffer *A = tsl_buffer_new("A", TSL_F32, 1, s64, TSL_BUF_ARG), *B = tsl_buffer_new("B", TSL_F32, 1, s16, TSL_BUF_ARG),
             *C = tsl_buffer_new("C", TSL_F32, 1, s4, TSL_BUF_ARG);
  tsl_expr *i = tsl_var("i", TSL_I64), *k = tsl_var("k", TSL_I64);
  tsl_expr *ai = tsl_add(tsl_mul(i, tsl_i64(16)), k);
  tsl_expr *val = tsl_add(tsl_load(C, 1, &i, NULL), tsl_mul(tsl_load(A, 1, &ai, NULL), tsl_load(B, 1, &k, NULL)));
  tsl_stmt *st = tsl_store(C, 1, &i, val, NULL);
  tsl_stmt *body = tsl_for(i, tsl_i64(0), tsl_i64(4), TSL_FOR_PARALLEL, tsl_for(k, tsl_i64(0), tsl_i64(16), TSL_FOR_SERIAL, st));
  tsl_arg args[3] = {{true, A, NULL}, {true, B, NULL}, {true, C, NULL}};
  tsl_func *f = tsl_func_new("matvec", 3, args, body);
  float x[TSL_IR_NFEATURES];
  CU_ASSERT_EQUAL_FATAL(tsl_ir_features(f, x), TSL_OK);
  const float want[TSL_IR_NFEATURES] = {
      l2(128), 1, l2(64), 2, 1, 1, 2, 3, l2(4),                     /* 0..8 */
      l2(16), l2(4), 0, 0, 0, 0,                                    /* 9..14 loop extents */
      l2(132), l2(336), l2(336), l2(336),                           /* 15..18 bytes(L) */
      l2(256.0 / 132), l2(1024.0 / 336), l2(1024.0 / 336), l2(1024.0 / 336), /* reuse */
      l2(32.0 / 132), l2(128.0 / 336), l2(128.0 / 336), l2(128.0 / 336),     /* AI */
      1.0f / 3, 2.0f / 3, l2(1), 0, l2(16)};
  for (int j = 0; j < TSL_IR_NFEATURES; j++) {
    if (fabsf(x[j] - want[j]) > 1e-5f) printf("\n    feature %d: %g, by hand %g", j, x[j], want[j]);
    CU_ASSERT_DOUBLE_EQUAL(x[j], want[j], 1e-5);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
}

/* for i in 0..4: Y[ramp(i*8, 1, 8)] = X[ramp(i*8, 1, 8)] * 2 (8 lanes), next to a
 * cheaper nest (a scalar copy of 4 elements) that must not be the dominant one. By
 * hand: lanes 8, 8 flops and 8 load lanes per iteration; over i: X and Y 32 floats each
 * = 256 bytes (dense 8 x 4 = span 8 + 8 x 3), accessed 2 x 32 x 4 = 256 bytes; the load
 * moves by 8 elements per iteration, as wide as its vector: unit stride. */
static void test_ir_features_vector_nest_dominates(void) {
  tsl_arena *a = tsl_arena_new(), *prev = tsl_arena_set_current(a);
  const int64_t s32[] = {32}, s4[] = {4};
  tsl_buffer *X = tsl_buffer_new("X", TSL_F32, 1, s32, TSL_BUF_ARG), *Y = tsl_buffer_new("Y", TSL_F32, 1, s32, TSL_BUF_ARG),
             *Z = tsl_buffer_new("Z", TSL_F32, 1, s4, TSL_BUF_ARG);
  tsl_expr *i = tsl_var("i", TSL_I64), *j = tsl_var("j", TSL_I64);
  tsl_expr *idx = tsl_ramp(tsl_mul(i, tsl_i64(8)), tsl_i64(1), 8);
  tsl_expr *val = tsl_mul(tsl_load(X, 1, &idx, NULL), tsl_broadcast(tsl_f32(2.0f), 8));
  tsl_stmt *vec = tsl_for(i, tsl_i64(0), tsl_i64(4), TSL_FOR_SERIAL, tsl_store(Y, 1, &idx, val, NULL));
  tsl_stmt *copy = tsl_for(j, tsl_i64(0), tsl_i64(4), TSL_FOR_SERIAL, tsl_store(Z, 1, &j, tsl_load(X, 1, &j, NULL), NULL));
  tsl_arg args[3] = {{true, X, NULL}, {true, Y, NULL}, {true, Z, NULL}};
  tsl_func *f = tsl_func_new("scale", 3, args, tsl_seq2(copy, vec));
  float x[TSL_IR_NFEATURES];
  CU_ASSERT_EQUAL_FATAL(tsl_ir_features(f, x), TSL_OK);
  CU_ASSERT_DOUBLE_EQUAL(x[0], l2(32), 1e-5);  /* 8 flops x 4 iterations */
  CU_ASSERT_DOUBLE_EQUAL(x[1], 2, 1e-6);       /* two nests */
  CU_ASSERT_DOUBLE_EQUAL(x[2], l2(4), 1e-5);
  CU_ASSERT_DOUBLE_EQUAL(x[4], 8, 1e-6);       /* lanes */
  CU_ASSERT_DOUBLE_EQUAL(x[6], 8, 1e-6);       /* flops per iteration */
  CU_ASSERT_DOUBLE_EQUAL(x[7], 8, 1e-6);       /* load lanes per iteration */
  CU_ASSERT_DOUBLE_EQUAL(x[8], 0, 1e-6);       /* no parallel loop */
  CU_ASSERT_DOUBLE_EQUAL(x[15], l2(256), 1e-5); /* bytes over i */
  CU_ASSERT_DOUBLE_EQUAL(x[19], l2(1), 1e-5);   /* reuse 256 / 256 */
  CU_ASSERT_DOUBLE_EQUAL(x[23], l2(32.0 / 256), 1e-5);
  CU_ASSERT_DOUBLE_EQUAL(x[27], 0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(x[28], 1, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(x[29], l2(8), 1e-5);
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
}

typedef struct features_call {
  tsl_cost_model *model;
  const tsl_config *config;
  float *features;
  tsl_status st;
  const tsl_template *tpl;
  const tsl_te_program *program;
  const tsl_target *target;
  const tsl_config_space *space;
} features_call;

static void call_features(void *arg) {
  features_call *c = arg;
  c->st = tsl_cost_model_features(c->model, c->config, c->features);
}

/* the control: the same config applied and lowered the way a kernel is built (traced) */
static void call_lower(void *arg) {
  features_call *c = arg;
  tsl_schedule *s = NULL;
  tsl_func *f = NULL;
  c->st = c->tpl->apply(c->program, c->target, c->space, c->config, &s);
  if (c->st == TSL_OK) c->st = tsl_lower_with(s, "traced", NULL, &f);
  tsl_schedule_free(s);
}

/* The cost model's IR features lower each candidate to read its loop nest; under
 * TSL_DEBUG=lower that lowering prints nothing (the trace shows the kernels that are
 * built), while the same config lowered as a build is traced. */
static void test_cost_model_ir_features_lower_without_trace(void) {
  tsl_arena *a = tsl_arena_new(), *prev = tsl_arena_set_current(a);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  const tsl_template *tpl = tsl_template_find("conv2d_nchw.tile");
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
  const int64_t d[] = {1, 8, 10, 10}, wt[] = {8, 8, 3, 3};
  const int64_t *shapes[] = {d, wt};
  const int nd[] = {4, 4};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("conv2d_nchw", 2, shapes, nd, 0, NULL, &p), TSL_OK);
  tsl_config_space s;
  CU_ASSERT_EQUAL_FATAL(tpl->space(p, &host, &s), TSL_OK);
  tsl_config c;
  CU_ASSERT_EQUAL_FATAL(tpl->default_config(p, &host, &s, &c), TSL_OK);
  tsl_cost_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_cost_model_new(&s, &m), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_cost_model_set_program(m, p, tpl, &host), TSL_OK);
  int nf = tsl_cost_model_nfeatures(m);
  CU_ASSERT_EQUAL_FATAL(nf, tsl_config_nfeatures(&s) + TSL_IR_NFEATURES);
  float *f = calloc((size_t)nf, sizeof *f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  features_call call = {m, &c, f, TSL_ERR_INVALID, tpl, p, &host, &s};
  char *quiet = tsl_test_capture_stderr("lower", call_features, &call);
  CU_ASSERT_PTR_NOT_NULL_FATAL(quiet);
  CU_ASSERT_EQUAL(call.st, TSL_OK);
  CU_ASSERT_STRING_EQUAL(quiet, "");
  /* it did lower: the loop nest's flop count (the first IR feature) is known */
  CU_ASSERT(isfinite(f[tsl_config_nfeatures(&s)]) && f[tsl_config_nfeatures(&s)] > 0);
  char *traced = tsl_test_capture_stderr("lower", call_lower, &call);
  CU_ASSERT_PTR_NOT_NULL_FATAL(traced);
  CU_ASSERT_EQUAL(call.st, TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(traced, "--- lower traced"));
  free(quiet);
  free(traced);
  free(f);
  tsl_cost_model_free(m);
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
}

void tsl_tests_tuner_cache_features(void) {
  CU_pSuite s = CU_add_suite("tuner_jit_cache", cache_suite_init, cache_suite_clean);
  CU_add_test(s, "test_jit_cache_second_compile_hits", test_jit_cache_second_compile_hits);
  CU_add_test(s, "test_jit_cache_stale_key_misses", test_jit_cache_stale_key_misses);
  CU_add_test(s, "test_jit_cache_corrupt_entry_recompiles", test_jit_cache_corrupt_entry_recompiles);
  CU_add_test(s, "test_jit_cache_disabled_writes_nothing", test_jit_cache_disabled_writes_nothing);
  CU_add_test(s, "test_peak_file_keeps_max_of_measurements", test_peak_file_keeps_max_of_measurements);
  CU_pSuite f = CU_add_suite("tuner_ir_features", NULL, NULL);
  CU_add_test(f, "test_ir_features_of_hand_loop_nest", test_ir_features_of_hand_loop_nest);
  CU_add_test(f, "test_ir_features_vector_nest_dominates", test_ir_features_vector_nest_dominates);
  CU_add_test(f, "test_cost_model_ir_features_lower_without_trace", test_cost_model_ir_features_lower_without_trace);
}
