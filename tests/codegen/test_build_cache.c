/* The level-1 build cache (codegen/build.h, codegen/build_key.h, codegen/jit_cache.h):
 * kernels found by their schedule before lowering. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cg_util.h"
#include "codegen/build.h"
#include "codegen/build_key.h"
#include "codegen/jit_cache.h"
#include "ir/arena.h"
#include "schedule/schedule.h"
#include "tessel/runtime.h"
#include "test_cache_dir.h"

#define N_MAX 64

static tsl_test_cache_dir cache;
#define cache_dir (cache.dir)

/* A private cache directory, so the tests see only their own entries. */
static int bc_suite_init(void) {
  if (tsl_test_cache_dir_enter(&cache, "tessel-build-cache-test") != 0) return 1;
  unsetenv("TSL_CACHE");
  tsl_jit_cache_set_enabled(true);
  return 0;
}

static int bc_suite_clean(void) {
  tsl_test_cache_dir_leave(&cache);
  return 0;
}

/* Files of subdirectory sub of the cache directory; the first one's path into first. */
static int count_files(const char *sub, char *first, size_t n) {
  char p[300];
  snprintf(p, sizeof p, "%s/%s", cache_dir, sub);
  DIR *d = opendir(p);
  if (!d) return 0;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp")) continue;
    if (count++ == 0 && first) snprintf(first, n, "%s/%s", p, e->d_name);
  }
  closedir(d);
  return count;
}

/* out[i] = A[i] * c + B[i] over n elements, scheduled split(out, i, factor) then
 * vectorize(out, i.inner) when factor > 0 (default schedule otherwise). */
typedef struct scaled_add {
  tsl_te_program *p;
  tsl_schedule *s;
} scaled_add;

static bool make_scaled_add(int64_t n, double c, int64_t factor, scaled_add *out) {
  out->p = NULL;
  out->s = NULL;
  const int64_t shape[] = {n};
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, shape);
  tsl_te_tensor *B = tsl_te_placeholder("B", TSL_F32, 1, shape);
  tsl_iter_var *ax = tsl_te_axes(1, shape, NULL);
  tsl_expr *i = ax[0].var;
  tsl_expr *body = tsl_add(tsl_mul(tsl_te_read(A, 1, &i), tsl_float(TSL_F32, c)), tsl_te_read(B, 1, &i));
  tsl_te_tensor *O = tsl_te_compute("out", 1, ax, body, NULL);
  if (!O) return false;
  tsl_te_tensor *ins[] = {A, B};
  out->p = tsl_te_program_new("scaled_add", 2, ins, 1, &O);
  if (!out->p || tsl_schedule_create(out->p, &out->s) != TSL_OK) return false;
  if (factor > 0) {
    char inner[64];
    snprintf(inner, sizeof inner, "%s.inner", ax[0].var->var.name);
    if (tsl_schedule_split(out->s, "out", ax[0].var->var.name, factor) != TSL_OK ||
        tsl_schedule_vectorize(out->s, "out", inner) != TSL_OK)
      return false;
  }
  return true;
}

/* Builds scaled_add (n <= N_MAX) in jit (a fresh host JIT when NULL), runs it on seeded
 * inputs and returns the max relative error against a naive loop (inf on failure). */
static double build_and_check(int64_t n, double c, int64_t factor, tsl_jit *jit, bool want_ir) {
  tsl_arena *a = tsl_arena_new(), *prev = tsl_arena_set_current(a);
  scaled_add k = {NULL, NULL};
  tsl_target host;
  tsl_jit *own = NULL;
  tsl_module *m = NULL;
  tsl_func *lowered = NULL;
  double err = INFINITY;
  float *A = aligned_alloc(64, N_MAX * sizeof(float)), *B = aligned_alloc(64, N_MAX * sizeof(float));
  float *O = aligned_alloc(64, N_MAX * sizeof(float));
  if (!jit && tsl_target_parse("host", &host) == TSL_OK && tsl_jit_new(&host, &own) == TSL_OK) jit = own;
  if (A && B && O && jit && n <= N_MAX && make_scaled_add(n, c, factor, &k) && tsl_module_new(&m) == TSL_OK &&
      tsl_build(k.s, "bc_scaled_add", jit, m, want_ir ? &lowered : NULL, NULL) == TSL_OK) {
    for (int64_t i = 0; i < n; i++) {
      A[i] = (float)(i % 7) - 3.25f;
      B[i] = 0.5f * (float)(i % 5) + 1.0f;
      O[i] = NAN;
    }
    void *ptrs[] = {A, B, O};
    void *args[] = {&ptrs[0], &ptrs[1], &ptrs[2]};
    if (tsl_kernel_call(tsl_module_kernel_at(m, 0), args, 3) == TSL_OK) {
      err = 0.0;
      for (int64_t i = 0; i < n; i++) {
        double ref = (double)A[i] * (double)(float)c + (double)B[i];
        double e = fabs(O[i] - ref) / fmax(fabs(ref), 1e-6);
        err = isnan(O[i]) ? INFINITY : fmax(err, e);
      }
    }
    if (want_ir && !lowered) err = INFINITY;
  }
  tsl_module_free(m);
  tsl_jit_free(own);
  if (k.s) tsl_schedule_free(k.s);
  free(A);
  free(B);
  free(O);
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
  return err;
}

static tsl_jit_cache_stats stats(void) {
  tsl_jit_cache_stats st;
  tsl_jit_cache_get_stats(&st);
  return st;
}

/* A second build of the same schedule (fresh JIT, as in a second process) is a level-1
 * hit: nothing is lowered or compiled (level 2 is not even asked) and the kernel still
 * computes what the naive loop does. */
static void test_build_cache_second_build_is_level1_hit(void) {
  CU_ASSERT_PTR_NOT_NULL(tsl_build_code_id());
  tsl_jit_cache_reset_stats();
  CU_ASSERT(build_and_check(37, 1.75, 8, NULL, false) < 1e-6);
  tsl_jit_cache_stats st = stats();
  CU_ASSERT_EQUAL(st.kernel_hits, 0);
  CU_ASSERT_EQUAL(st.kernel_misses, 1);
  CU_ASSERT_EQUAL(st.kernel_stores, 1);
  CU_ASSERT_EQUAL(st.misses, 1); /* lowered and compiled through level 2 */
  CU_ASSERT_EQUAL(count_files("kernel-v1", NULL, 0), 1);
  tsl_jit_cache_reset_stats();
  CU_ASSERT(build_and_check(37, 1.75, 8, NULL, false) < 1e-6);
  st = stats();
  CU_ASSERT_EQUAL(st.kernel_hits, 1);
  CU_ASSERT_EQUAL(st.kernel_misses, 0);
  CU_ASSERT_EQUAL(st.hits + st.misses, 0);
  CU_ASSERT_EQUAL(count_files("kernel-v1", NULL, 0), 1);
}

/* In a JIT that already holds the entry's symbol the object cannot be linked again:
 * the build lowers and compiles instead (a level-1 miss) and still computes right. */
static void test_build_cache_symbol_taken_in_same_jit_compiles(void) {
  tsl_target host;
  tsl_jit *jit = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&host, &jit), TSL_OK);
  CU_ASSERT(build_and_check(21, -0.5, 4, jit, false) < 1e-6);
  tsl_jit_cache_reset_stats();
  CU_ASSERT(build_and_check(21, -0.5, 4, jit, false) < 1e-6);
  tsl_jit_cache_stats st = stats();
  CU_ASSERT_EQUAL(st.kernel_hits, 0);
  CU_ASSERT_EQUAL(st.kernel_misses, 1);
  tsl_jit_free(jit);
}

/* Asking for the lowered IR bypasses level 1 (it has no IR to give). */
static void test_build_cache_lowered_ir_request_skips_level1(void) {
  CU_ASSERT(build_and_check(37, 1.75, 8, NULL, false) < 1e-6); /* entry exists */
  tsl_jit_cache_reset_stats();
  CU_ASSERT(build_and_check(37, 1.75, 8, NULL, true) < 1e-6);
  tsl_jit_cache_stats st = stats();
  CU_ASSERT_EQUAL(st.kernel_hits + st.kernel_misses, 0);
  CU_ASSERT_EQUAL(st.hits + st.misses, 1);
}

/* The key of scaled_add(n, c, factor) named name, under context ctx. */
static tsl_jit_cache_key key_of(int64_t n, double c, int64_t factor, const char *name, const char *ctx,
                                char **text) {
  tsl_jit_cache_key k = {{0, 0}};
  tsl_arena *a = tsl_arena_new(), *prev = tsl_arena_set_current(a);
  scaled_add sa;
  tsl_lower_options opts = tsl_lower_options_default();
  opts.vector_bits = 256;
  CU_ASSERT_FATAL(make_scaled_add(n, c, factor, &sa));
  CU_ASSERT_EQUAL(tsl_build_cache_key(sa.s, name, &opts, ctx, &k), TSL_OK);
  if (text) CU_ASSERT_EQUAL(tsl_build_key_text(sa.s, name, &opts, ctx, text), TSL_OK);
  tsl_schedule_free(sa.s);
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
  return k;
}

static bool same_key(tsl_jit_cache_key a, tsl_jit_cache_key b) { return a.h[0] == b.h[0] && a.h[1] == b.h[1]; }

/* Programs differing in one float parameter (in its last bit; f32 constants hold f32
 * values), its sign (even of zero), one shape, one schedule step, the kernel name or the context get
 * different keys; the same program built twice (other nodes, other arena) the same. */
static void test_build_key_differs_in_float_shape_step_name_context(void) {
  char *text = NULL;
  tsl_jit_cache_key base = key_of(40, 0.1, 8, "k", "ctx", &text);
  CU_ASSERT(same_key(base, key_of(40, 0.1, 8, "k", "ctx", NULL)));
  CU_ASSERT_FALSE(same_key(base, key_of(40, nextafterf(0.1f, 1.0f), 8, "k", "ctx", NULL)));
  CU_ASSERT_FALSE(same_key(base, key_of(40, nextafterf(0.1f, 0.0f), 8, "k", "ctx", NULL)));
  CU_ASSERT_FALSE(same_key(base, key_of(40, -0.1, 8, "k", "ctx", NULL)));
  CU_ASSERT_FALSE(same_key(key_of(40, 0.0, 8, "k", "ctx", NULL), key_of(40, -0.0, 8, "k", "ctx", NULL)));
  CU_ASSERT_FALSE(same_key(base, key_of(41, 0.1, 8, "k", "ctx", NULL)));
  CU_ASSERT_FALSE(same_key(base, key_of(40, 0.1, 4, "k", "ctx", NULL)));
  CU_ASSERT_FALSE(same_key(base, key_of(40, 0.1, 0, "k", "ctx", NULL)));
  CU_ASSERT_FALSE(same_key(base, key_of(40, 0.1, 8, "k2", "ctx", NULL)));
  CU_ASSERT_FALSE(same_key(base, key_of(40, 0.1, 8, "k", "ctx2", NULL)));
  /* the text carries the float exactly ((double)0.1f's bits), the code identity and the steps */
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "0x3fb99999a0000000"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, tsl_build_code_id()));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "steps2"));
  free(text);
}

/* A corrupt level-1 entry is reported (counted), removed, the kernel lowered and
 * compiled again (computing right) and the entry stored again, which then hits. */
static void test_build_cache_corrupt_kernel_entry_recompiles(void) {
  CU_ASSERT(build_and_check(29, 3.0, 4, NULL, false) < 1e-6);
  for (int round = 0; round < 2; round++) {
    char path[600] = "";
    tsl_jit_cache_reset_stats();
    CU_ASSERT(build_and_check(29, 3.0, 4, NULL, false) < 1e-6);
    CU_ASSERT_EQUAL(stats().kernel_hits, 1);
    /* spoil every kernel entry: flip a byte of the object, or truncate */
    char dir[300];
    snprintf(dir, sizeof dir, "%s/kernel-v1", cache_dir);
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      FILE *fp = fopen(path, "r+b");
      CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
      fseek(fp, 0, SEEK_END);
      long size = ftell(fp);
      if (round == 0) {
        fseek(fp, size - 5, SEEK_SET);
        int c = fgetc(fp);
        fseek(fp, size - 5, SEEK_SET);
        fputc(c ^ 0x33, fp);
      } else {
        CU_ASSERT_EQUAL(ftruncate(fileno(fp), size / 3), 0);
      }
      fclose(fp);
    }
    closedir(d);
    tsl_jit_cache_reset_stats();
    CU_ASSERT(build_and_check(29, 3.0, 4, NULL, false) < 1e-6);
    tsl_jit_cache_stats st = stats();
    CU_ASSERT(st.kernel_corrupt >= 1);
    CU_ASSERT_EQUAL(st.kernel_hits, 0);
    CU_ASSERT_EQUAL(st.kernel_misses, 1);
    CU_ASSERT_EQUAL(st.kernel_stores, 1);
    tsl_jit_cache_reset_stats();
    CU_ASSERT(build_and_check(29, 3.0, 4, NULL, false) < 1e-6);
    st = stats();
    CU_ASSERT_EQUAL(st.kernel_hits, 1);
    CU_ASSERT_EQUAL(st.kernel_corrupt, 0);
  }
}

/* TSL_CACHE=0 disables both levels: nothing is looked up or written. */
static void test_build_cache_disabled_by_env_uses_neither_level(void) {
  int kernels = count_files("kernel-v1", NULL, 0), objects = count_files("jit-v1", NULL, 0);
  setenv("TSL_CACHE", "0", 1);
  tsl_jit_cache_reset_stats();
  CU_ASSERT(build_and_check(37, 1.75, 8, NULL, false) < 1e-6); /* would hit */
  CU_ASSERT(build_and_check(19, 2.5, 2, NULL, false) < 1e-6);  /* would be stored */
  unsetenv("TSL_CACHE");
  tsl_jit_cache_stats st = stats();
  CU_ASSERT_EQUAL(st.kernel_hits + st.kernel_misses + st.kernel_stores + st.kernel_corrupt, 0);
  CU_ASSERT_EQUAL(st.hits + st.misses + st.stores + st.corrupt, 0);
  CU_ASSERT_EQUAL(count_files("kernel-v1", NULL, 0), kernels);
  CU_ASSERT_EQUAL(count_files("jit-v1", NULL, 0), objects);
}

void cg_add_build_cache_tests(void) {
  CU_pSuite s = CU_add_suite("codegen_build_cache", bc_suite_init, bc_suite_clean);
  CU_add_test(s, "test_build_cache_second_build_is_level1_hit", test_build_cache_second_build_is_level1_hit);
  CU_add_test(s, "test_build_cache_symbol_taken_in_same_jit_compiles",
              test_build_cache_symbol_taken_in_same_jit_compiles);
  CU_add_test(s, "test_build_cache_lowered_ir_request_skips_level1", test_build_cache_lowered_ir_request_skips_level1);
  CU_add_test(s, "test_build_key_differs_in_float_shape_step_name_context",
              test_build_key_differs_in_float_shape_step_name_context);
  CU_add_test(s, "test_build_cache_corrupt_kernel_entry_recompiles", test_build_cache_corrupt_kernel_entry_recompiles);
  CU_add_test(s, "test_build_cache_disabled_by_env_uses_neither_level",
              test_build_cache_disabled_by_env_uses_neither_level);
}
