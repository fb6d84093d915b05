/* Cross compilation (module `cross`): ahead-of-time kernel objects for the host loaded
 * in-process, and for armv8 run by the aarch64 tessel-device-run under qemu-aarch64,
 * checked against the host JIT's result and the naive references of tests/ref.
 * The qemu tests skip (saying so) when qemu-aarch64 or the cross compiler is missing. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/aot.h"
#include "cross_util.h"
#include "ir/arena.h"
#include "ref/ref_ops.h"
#include "runtime/module.h"
#include "schedule/lower.h"
#include "schedule/template.h"
#include "ops/algorithm.h"

static tsl_jit *host_jit;
static tsl_arena *arena;
static tsl_arena *prev_arena;

static int suite_init(void) {
  tsl_target t;
  if (tsl_target_parse("host", &t) != TSL_OK || tsl_jit_new(&t, &host_jit) != TSL_OK) return 1;
  arena = tsl_arena_new();
  prev_arena = tsl_arena_set_current(arena);
  return 0;
}

static int suite_clean(void) {
  tsl_jit_free(host_jit);
  host_jit = NULL;
  tsl_arena_set_current(prev_arena);
  tsl_arena_free(arena);
  cross_scratch_cleanup();
  return 0;
}

static bool qemu_ready(const char *test) {
  if (cross_qemu() && cross_device_run()) return true;
  printf("\n  %s skipped: %s missing\n", test,
         !cross_qemu() ? "qemu-aarch64 (Debian qemu-user)" : "the aarch64 tessel-device-run (gcc-aarch64-linux-gnu)");
  return false;
}

/* Output i of `got` against `want`: f32 within 1e-5 of the output's magnitude, other
 * types bit-exact. */
static bool outputs_match(const cross_op *op, void **got, void **want, const char *what) {
  bool ok = true;
  for (int i = op->ninputs; i < op->nbufs; i++) {
    void *g = got[i - op->ninputs], *w = want[i - op->ninputs];
    if (tsl_type_is_float(op->dtype[i]) && op->dtype[i].bits == 32) {
      int64_t n = (int64_t)(op->bytes[i] / 4);
      double err = ref_max_rel_error(g, w, n);
      if (!(err < 1e-5)) {
        printf("\n  %s %s: output %d differs, error %g\n", op->info->name, what, i - op->ninputs, err);
        ok = false;
      }
    } else if (memcmp(g, w, op->bytes[i]) != 0) {
      printf("\n  %s %s: output %d differs\n", op->info->name, what, i - op->ninputs);
      ok = false;
    }
  }
  return ok;
}

static void **alloc_outputs(const cross_op *op) {
  void **outs = calloc(CROSS_MAX_BUFS, sizeof *outs);
  if (!outs) abort();
  for (int i = op->ninputs; i < op->nbufs; i++) {
    size_t r = (op->bytes[i] + 63) & ~(size_t)63;
    outs[i - op->ninputs] = aligned_alloc(64, r ? r : 64);
    if (!outs[i - op->ninputs]) abort();
    memset(outs[i - op->ninputs], 0xff, r ? r : 64); /* NaN pattern: every element must be written */
  }
  return outs;
}

static void free_outputs(const cross_op *op, void **outs) {
  for (int i = 0; i < op->nbufs - op->ninputs; i++) free(outs[i]);
  free(outs);
}

/* Every registry operator (default schedule) with seeded inputs and its host JIT result. */
typedef struct op_set {
  int n;
  cross_op ops[64];
  void **host_out[64];
} op_set;

static op_set *load_ops(void) {
  op_set *s = calloc(1, sizeof *s);
  if (!s) abort();
  int nops = 0;
  const tsl_op_info *const *list = tsl_op_list(&nops);
  for (int i = 0; i < nops && s->n < 64; i++) {
    cross_op *op = &s->ops[s->n];
    if (!cross_op_init(list[i], 1000 + (uint64_t)i, op)) {
      CU_FAIL("a registry operator does not instantiate on its example");
      continue;
    }
    s->host_out[s->n] = alloc_outputs(op);
    if (cross_run_host(op, host_jit, s->host_out[s->n]) != TSL_OK) {
      printf("\n  %s: host JIT: %s\n", op->info->name, tsl_last_error());
      CU_FAIL("host JIT of a registry operator failed");
      free_outputs(op, s->host_out[s->n]);
      cross_op_free(op);
      continue;
    }
    s->n++;
  }
  return s;
}

static void free_ops(op_set *s) {
  for (int i = 0; i < s->n; i++) {
    free_outputs(&s->ops[i], s->host_out[i]);
    cross_op_free(&s->ops[i]);
  }
  free(s);
}

/* Lowers every op of s for t (kernel name = op name) and AOT-compiles them into so. */
static tsl_status compile_all(const op_set *s, const tsl_target *t, const char *so) {
  const tsl_func *funcs[64];
  for (int i = 0; i < s->n; i++) {
    tsl_func *f = NULL;
    tsl_status st = cross_lower(&s->ops[i], t, s->ops[i].info->name, &f);
    if (st != TSL_OK) {
      printf("\n  %s: lower for %s: %s\n", s->ops[i].info->name, t->name, tsl_last_error());
      return st;
    }
    funcs[i] = f;
  }
  tsl_status st = tsl_aot_compile(funcs, s->n, t, so);
  if (st != TSL_OK) printf("\n  aot %s: %s\n", t->name, tsl_last_error());
  return st;
}

static void test_aot_host_every_op_loads_in_process_and_matches_jit(void) {
  op_set *s = load_ops();
  CU_ASSERT_FATAL(s->n >= 5); /* matmul, dense, conv2d_nchw, relu, add at least */
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  char so[512];
  cross_path(so, sizeof so, "host_ops.so");
  CU_ASSERT_EQUAL_FATAL(compile_all(s, &t, so), TSL_OK);
  tsl_module *m = NULL;
  tsl_status st = tsl_module_load_so(so, &m);
  if (st != TSL_OK) printf("\n  load: %s\n", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  CU_ASSERT_EQUAL(tsl_module_num_kernels(m), s->n);
  for (int i = 0; i < s->n; i++) {
    const cross_op *op = &s->ops[i];
    const tsl_kernel *k = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, op->info->name, &k), TSL_OK);
    void **outs = alloc_outputs(op);
    void *ptrs[CROSS_MAX_BUFS], *args[CROSS_MAX_BUFS];
    for (int a = 0; a < op->nbufs; a++) {
      ptrs[a] = a < op->ninputs ? op->bufs[a] : outs[a - op->ninputs];
      args[a] = &ptrs[a];
    }
    st = tsl_kernel_call(k, args, op->nbufs);
    if (st != TSL_OK) printf("\n  %s: call: %s\n", op->info->name, tsl_last_error());
    CU_ASSERT_EQUAL(st, TSL_OK);
    CU_ASSERT(outputs_match(op, outs, s->host_out[i], "host AOT vs JIT"));
    free_outputs(op, outs);
  }
  tsl_module_free(m);
  unlink(so);
  free_ops(s);
}

static void test_aot_rejects_bad_arguments(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  char so[512];
  cross_path(so, sizeof so, "bad.so");
  const tsl_func *none[1] = {NULL};
  CU_ASSERT_EQUAL(tsl_aot_compile(none, 0, &t, so), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_aot_compile(none, 1, &t, so), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_aot_compile(NULL, 1, &t, so), TSL_ERR_INVALID);
  const tsl_op_info *relu = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("relu", &relu), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(relu, 1, &op));
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(cross_lower(&op, &t, "twice", &f), TSL_OK);
  const tsl_func *two[2] = {f, f};
  CU_ASSERT_EQUAL(tsl_aot_compile(two, 2, &t, so), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "twice"));
  CU_ASSERT_EQUAL(access(so, F_OK), -1); /* nothing written on error */
  cross_op_free(&op);
}

/* An armv8 object is not loadable on x86-64: dlopen refuses the ELF machine and the
 * loader says so (never a crash). */
static void test_aot_armv8_object_refused_by_host_loader(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  const tsl_op_info *add = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("add", &add), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(add, 2, &op));
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(cross_lower(&op, &t, "add", &f), TSL_OK);
  char so[512];
  cross_path(so, sizeof so, "arm_add.so");
  const tsl_func *fs[1] = {f};
  CU_ASSERT_EQUAL_FATAL(tsl_aot_compile(fs, 1, &t, so), TSL_OK);
  tsl_module *m = NULL;
#if defined(__x86_64__)
  /* the message names the object's architecture and this machine's, not dlopen's "cannot
   * open shared object file" */
  CU_ASSERT_EQUAL(tsl_module_load_so(so, &m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), so));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "for AArch64 (armv8), and this machine is x86_64"));
  CU_ASSERT_PTR_NULL(m);
#endif
  tsl_module_free(m);
  unlink(so);
  cross_op_free(&op);
}

/* shared/cases C12 on the host: an object compiled for a feature this CPU lacks is
 * refused at load with the feature named. */
static void test_C12_host_loader_refuses_missing_feature(void) {
  static const char *const candidates[] = {"xop", "fma4", "avx512vp2intersect", "avx512bf16", "avx512vnni"};
  const char *missing = NULL;
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !missing; i++) {
    int known = 0;
    if (!tsl_cpu_has_feature(candidates[i], &known) && known) missing = candidates[i];
  }
  if (!missing) {
    printf("\n  C12 host refusal skipped: this CPU has every candidate feature\n");
    return;
  }
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  size_t len = strlen(t.features);
  snprintf(t.features + len, sizeof t.features - len, "%s+%s", len ? "," : "", missing);
  const tsl_op_info *relu = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("relu", &relu), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(relu, 3, &op));
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(cross_lower(&op, &t, "relu", &f), TSL_OK);
  char so[512];
  cross_path(so, sizeof so, "featured.so");
  const tsl_func *fs[1] = {f};
  CU_ASSERT_EQUAL_FATAL(tsl_aot_compile(fs, 1, &t, so), TSL_OK);
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL(tsl_module_load_so(so, &m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), missing));
  CU_ASSERT_PTR_NULL(m);
  unlink(so);
  cross_op_free(&op);
}

static int64_t example_param(const tsl_op_example *ex, const char *name, int64_t dflt) {
  for (int i = 0; i < ex->nparams; i++)
    if (strcmp(ex->params[i].name, name) == 0) return ex->params[i].i;
  return dflt;
}

static int naive_checked; /* how many outputs check_naive compared */

/* Naive references for the operators that have one in tests/ref. */
static void check_naive(const cross_op *op, void **outs) {
  const tsl_op_example *ex = &op->info->example;
  if (strcmp(op->info->name, "matmul") == 0) {
    int64_t M = ex->shapes[0][0], K = ex->shapes[0][1], N = ex->shapes[1][1];
    float *ref = malloc((size_t)(M * N) * sizeof *ref);
    ref_matmul(M, N, K, op->bufs[0], op->bufs[1], ref);
    naive_checked++;
    CU_ASSERT(ref_max_rel_error(outs[0], ref, M * N) < 1e-5);
    free(ref);
  } else if (strcmp(op->info->name, "conv2d_nchw") == 0) {
    const int64_t *d = ex->shapes[0], *w = ex->shapes[1];
    ref_conv2d_params p = {d[0], d[1], d[2], d[3], w[0], w[2], w[3], example_param(ex, "stride_h", 1),
                           example_param(ex, "stride_w", 1), example_param(ex, "pad_top", 0),
                           example_param(ex, "pad_left", 0), example_param(ex, "pad_bottom", 0),
                           example_param(ex, "pad_right", 0), example_param(ex, "dilation_h", 1),
                           example_param(ex, "dilation_w", 1), 1};
    naive_checked++;
    int64_t n = p.N * p.K * ref_conv2d_out_h(&p) * ref_conv2d_out_w(&p);
    CU_ASSERT_EQUAL_FATAL((size_t)n * 4, op->bytes[2]);
    float *ref = malloc((size_t)n * sizeof *ref);
    ref_conv2d_nchw(&p, op->bufs[0], op->bufs[1], NULL, ref);
    CU_ASSERT(ref_max_rel_error(outs[0], ref, n) < 1e-5);
    free(ref);
  }
}

static void test_armv8_every_op_under_qemu_matches_host(void) {
  if (!qemu_ready("armv8 operators under qemu")) return;
  naive_checked = 0;
  op_set *s = load_ops();
  CU_ASSERT_FATAL(s->n >= 5);
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  char so[512];
  cross_path(so, sizeof so, "armv8_ops.so");
  CU_ASSERT_EQUAL_FATAL(compile_all(s, &t, so), TSL_OK);
  for (int i = 0; i < s->n; i++) {
    const cross_op *op = &s->ops[i];
    void **outs = alloc_outputs(op);
    char log[2048];
    int rc = cross_run_device(op, so, op->info->name, "cortex-a53", outs, log, sizeof log);
    if (rc != 0) printf("\n  %s under qemu: exit %d: %s\n", op->info->name, rc, log);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0) {
      CU_ASSERT(outputs_match(op, outs, s->host_out[i], "armv8 (qemu) vs host JIT"));
      check_naive(op, outs);
    }
    free_outputs(op, outs);
  }
  CU_ASSERT_EQUAL(naive_checked, 2); /* conv2d_nchw and matmul met their naive references */
  free_ops(s);
}

/* shared/cases C12 (class 18): the same kernels for armv8 and armv8.2-a+dotprod give
 * identical results on a dotprod CPU, and the dotprod object is refused on a CPU without
 * it (Cortex-A53) with the feature named, never run. */
static void test_C12_armv8_dotprod_identical_and_refused_without_feature(void) {
  if (!qemu_ready("C12 under qemu")) return;
  static const char *const names[] = {"conv2d_nchw", "matmul"};
  const char *targets[2] = {"armv8", "armv8.2-a+dotprod"};
  char so[2][512];
  cross_op ops[2];
  for (int o = 0; o < 2; o++) {
    const tsl_op_info *info = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_op_lookup(names[o], &info), TSL_OK);
    CU_ASSERT_FATAL(cross_op_init(info, 77 + (uint64_t)o, &ops[o]));
  }
  for (int v = 0; v < 2; v++) {
    tsl_target t;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[v], &t), TSL_OK);
    const tsl_func *fs[2];
    for (int o = 0; o < 2; o++) {
      tsl_func *f = NULL;
      CU_ASSERT_EQUAL_FATAL(cross_lower(&ops[o], &t, names[o], &f), TSL_OK);
      fs[o] = f;
    }
    cross_path(so[v], sizeof so[v], v ? "c12_v82.so" : "c12_v80.so"); /* names free of "dotprod" */
    CU_ASSERT_EQUAL_FATAL(tsl_aot_compile(fs, 2, &t, so[v]), TSL_OK);
  }
  for (int o = 0; o < 2; o++) {
    void **plain = alloc_outputs(&ops[o]), **dot = alloc_outputs(&ops[o]), **refused = alloc_outputs(&ops[o]);
    char log[2048];
    CU_ASSERT_EQUAL(cross_run_device(&ops[o], so[0], names[o], "cortex-a76", plain, log, sizeof log), 0);
    CU_ASSERT_EQUAL(cross_run_device(&ops[o], so[1], names[o], "cortex-a76", dot, log, sizeof log), 0);
    for (int i = 0; i < ops[o].nbufs - ops[o].ninputs; i++)
      CU_ASSERT_EQUAL(memcmp(plain[i], dot[i], ops[o].bytes[ops[o].ninputs + i]), 0);
    int rc = cross_run_device(&ops[o], so[1], names[o], "cortex-a53", refused, log, sizeof log);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "lacks ("));
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "dotprod"));
    CU_ASSERT_PTR_NULL(strstr(log, "Segmentation")); /* refused before any kernel ran */
    free_outputs(&ops[o], plain);
    free_outputs(&ops[o], dot);
    free_outputs(&ops[o], refused);
  }
  for (int o = 0; o < 2; o++) cross_op_free(&ops[o]);
}

/* C12 with an -mcpu override: "armv8 -mcpu=cortex-a76" has armv8's feature string but
 * LLVM may use the A76's dotprod, so the object records it and an A53 refuses it. */
static void test_C12_mcpu_override_records_implied_features(void) {
  if (!qemu_ready("C12 -mcpu under qemu")) return;
  const tsl_op_info *info = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("relu", &info), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(info, 12, &op));
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8 -mcpu=cortex-a76", &t), TSL_OK);
  CU_ASSERT_FALSE(tsl_target_has_feature(&t, "dotprod"));
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(cross_lower(&op, &t, "relu", &f), TSL_OK);
  char so[512], log[2048];
  cross_path(so, sizeof so, "a76_override.so");
  const tsl_func *fs[1] = {f};
  CU_ASSERT_EQUAL_FATAL(tsl_aot_compile(fs, 1, &t, so), TSL_OK);
  void **outs = alloc_outputs(&op);
  CU_ASSERT_EQUAL(cross_run_device(&op, so, "relu", "cortex-a76", outs, log, sizeof log), 0);
  const float *x = op.bufs[0], *y = outs[0];
  int64_t n = (int64_t)(op.bytes[0] / 4), wrong = 0;
  for (int64_t i = 0; i < n; i++) wrong += y[i] != (x[i] > 0.0f ? x[i] : 0.0f);
  CU_ASSERT_EQUAL(wrong, 0);
  CU_ASSERT_EQUAL(cross_run_device(&op, so, "relu", "cortex-a53", outs, log, sizeof log), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "dotprod"));
  free_outputs(&op, outs);
  cross_op_free(&op);
  unlink(so);
}

/* The tuned-template 3x3 conv for armv8 is NEON code: llvm-objdump-19 of the object
 * shows fmla on .4s vectors. */
static void test_armv8_conv3x3_object_uses_fmla(void) {
  tsl_tuner_register_templates();
  const tsl_template *tpl = tsl_template_find("conv2d_nchw.tile");
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
  const tsl_op_info *info = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("conv2d_nchw", &info), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(info, 5, &op));
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  tsl_config_space sp;
  tsl_config c;
  tsl_schedule *sch = NULL;
  CU_ASSERT_EQUAL_FATAL(tpl->space(op.prog, &t, &sp), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tpl->default_config(op.prog, &t, &sp, &c), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tpl->apply(op.prog, &t, &sp, &c, &sch), TSL_OK);
  tsl_lower_options o = tsl_lower_options_default();
  o.vector_bits = t.vector_bits;
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_lower_with(sch, "conv3x3_tile", &o, &f), TSL_OK);
  tsl_schedule_free(sch);
  char so[512], log[512];
  cross_path(so, sizeof so, "conv3x3.so");
  const tsl_func *fs[1] = {f};
  CU_ASSERT_EQUAL_FATAL(tsl_aot_compile(fs, 1, &t, so), TSL_OK);
  cross_path(log, sizeof log, "objdump.txt");
  char *argv[] = {"llvm-objdump-19", "-d", so, NULL};
  int rc = cross_spawn(argv, log);
  if (rc != 0) {
    printf("\n  fmla check skipped: llvm-objdump-19 not runnable (%d)\n", rc);
  } else {
    size_t cap = 1 << 22;
    char *text = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    cross_read_text(log, text, cap);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "<conv3x3_tile>:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "fmla\tv"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, ".4s"));
    free(text);
  }
  unlink(log);
  unlink(so);
  cross_op_free(&op);
}

/* `tunecli compile OP --target armv8 -o FILE` writes an object the device runs. */
static void test_tunecli_compile_armv8_runs_under_qemu(void) {
  if (!qemu_ready("tunecli compile under qemu")) return;
  const tsl_op_info *info = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("matmul", &info), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(info, 99, &op));
  char so[512], log[2048], logpath[512];
  cross_path(so, sizeof so, "tunecli_matmul.so");
  cross_path(logpath, sizeof logpath, "tunecli.log");
  char *argv[] = {TSL_TUNECLI_PATH, "compile", "matmul", "--target", "armv8", "-o", so, "--name", "mm", NULL};
  int rc = cross_spawn(argv, logpath);
  cross_read_text(logpath, log, sizeof log);
  if (rc != 0) printf("\n  tunecli compile: exit %d: %s\n", rc, log);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "kernel mm for armv8"));
  void **outs = alloc_outputs(&op);
  rc = cross_run_device(&op, so, "mm", "cortex-a72", outs, log, sizeof log);
  if (rc != 0) printf("\n  device: exit %d: %s\n", rc, log);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc == 0) check_naive(&op, outs);
  /* a kernel name the object lacks: a clear error, exit status 1 */
  rc = cross_run_device(&op, so, "no_such_kernel", "cortex-a72", outs, log, sizeof log);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "no_such_kernel"));
  free_outputs(&op, outs);
  cross_op_free(&op);
  unlink(so);
}

/* tunecli compile: usage errors exit 2, a bad target exits 1 naming it, and a host
 * object loads in-process with the operator's kernel and signature. */
static void test_tunecli_compile_errors_and_host_object(void) {
  char so[512], log[2048], logpath[512];
  cross_path(so, sizeof so, "tunecli_relu.so");
  cross_path(logpath, sizeof logpath, "tunecli2.log");
  char *no_out[] = {TSL_TUNECLI_PATH, "compile", "relu", NULL};
  CU_ASSERT_EQUAL(cross_spawn(no_out, logpath), 2);
  cross_read_text(logpath, log, sizeof log);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "-o FILE.so"));
  char *bad_target[] = {TSL_TUNECLI_PATH, "compile", "relu", "--target", "mips64", "-o", so, NULL};
  CU_ASSERT_EQUAL(cross_spawn(bad_target, logpath), 1);
  cross_read_text(logpath, log, sizeof log);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "mips64"));
  CU_ASSERT_EQUAL(access(so, F_OK), -1);
  char *host[] = {TSL_TUNECLI_PATH, "compile", "relu", "--target", "host", "-o", so, NULL};
  CU_ASSERT_EQUAL_FATAL(cross_spawn(host, logpath), 0);
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_load_so(so, &m), TSL_OK);
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL(tsl_module_get_kernel(m, "relu", &k), TSL_OK);
  if (k) {
    CU_ASSERT_EQUAL(tsl_kernel_signature(k)->nargs, 2);
    CU_ASSERT_EQUAL(tsl_kernel_signature(k)->args[0], TSL_ARG_PTR);
  }
  tsl_module_free(m);
  unlink(so);
}

/* A linker that cannot be started is an IO error naming it, and no object is left. */
static void test_aot_missing_linker_is_io_error(void) {
  const tsl_op_info *relu = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("relu", &relu), TSL_OK);
  cross_op op;
  CU_ASSERT_FATAL(cross_op_init(relu, 1, &op));
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(cross_lower(&op, &t, "relu", &f), TSL_OK);
  char so[512];
  cross_path(so, sizeof so, "nolinker.so");
  const tsl_func *fs[1] = {f};
  setenv("TSL_LLD", "tessel-no-such-linker", 1);
  CU_ASSERT_EQUAL(tsl_aot_compile(fs, 1, &t, so), TSL_ERR_IO);
  unsetenv("TSL_LLD");
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "tessel-no-such-linker"));
  CU_ASSERT_EQUAL(access(so, F_OK), -1);
  cross_op_free(&op);
}

void tsl_tests_cross_model(void); /* test_aot_model.c */
void tsl_tests_cross_se(void);    /* test_aot_se.c */
void tsl_tests_cross_math(void);  /* test_aot_math.c */
void tsl_tests_cross(void);
void tsl_tests_cross(void) {
  CU_pSuite s = CU_add_suite("cross", suite_init, suite_clean);
  CU_add_test(s, "aot_host_every_op_loads_in_process_and_matches_jit",
              test_aot_host_every_op_loads_in_process_and_matches_jit);
  CU_add_test(s, "aot_rejects_bad_arguments", test_aot_rejects_bad_arguments);
  CU_add_test(s, "aot_armv8_object_refused_by_host_loader", test_aot_armv8_object_refused_by_host_loader);
  CU_add_test(s, "C12_host_loader_refuses_missing_feature", test_C12_host_loader_refuses_missing_feature);
  CU_add_test(s, "armv8_every_op_under_qemu_matches_host", test_armv8_every_op_under_qemu_matches_host);
  CU_add_test(s, "C12_armv8_dotprod_identical_and_refused_without_feature",
              test_C12_armv8_dotprod_identical_and_refused_without_feature);
  CU_add_test(s, "C12_mcpu_override_records_implied_features", test_C12_mcpu_override_records_implied_features);
  CU_add_test(s, "armv8_conv3x3_object_uses_fmla", test_armv8_conv3x3_object_uses_fmla);
  CU_add_test(s, "tunecli_compile_armv8_runs_under_qemu", test_tunecli_compile_armv8_runs_under_qemu);
  CU_add_test(s, "tunecli_compile_errors_and_host_object", test_tunecli_compile_errors_and_host_object);
  CU_add_test(s, "aot_missing_linker_is_io_error", test_aot_missing_linker_is_io_error);
  tsl_tests_cross_model();
  tsl_tests_cross_se();
  tsl_tests_cross_math();
}
