/* The vector_width step (schedule/schedule.h): its text form and refusals, the widths each
 * target offers and the narrowed target (target/target.h), the lowering's refusal of a
 * width above the target's, and the width reaching LLVM: the function attributes of the
 * emitted IR and the registers of the assembly (codegen/machine.h), on named targets, so
 * the checks hold on any host. Results of kernels built at a narrower width against the
 * TE interpreter: tests/tuner/test_sketch_width.c. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/machine.h"
#include "schedule/lower.h"
#include "sched_tests.h"
#include "target/arch.h"
#include "target/target.h"

static void test_vector_width_text_round_trips(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_row_max(6, 40);
  const char *text = "split(rmax, i, 2)\nvector_width(256)\n";
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(p, text, &s), TSL_OK);
  CU_ASSERT_EQUAL(s->vector_bits, 256);
  char *back = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(back, text);
  tsl_schedule *again = NULL;
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, back, &again), TSL_OK);
  if (again) CU_ASSERT_EQUAL(again->vector_bits, 256);
  free(back);
  tsl_schedule_free(again);
  tsl_schedule_free(s);
  /* the call form makes the same step */
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_new(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_vector_width(s, 128), TSL_OK);
  back = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(back, "vector_width(128)\n");
  free(back);
  tsl_schedule_free(s);
  st_arena_end(a);
}

/* text refused with status want, the message containing `part` */
static void refused(const tsl_te_program *p, const char *text, const char *file, tsl_status want, const char *part) {
  tsl_schedule *s = NULL;
  tsl_status st = tsl_schedule_from_text_file(p, text, file, &s);
  CU_ASSERT_EQUAL(st, want);
  CU_ASSERT_PTR_NULL(s);
  if (!strstr(tsl_last_error(), part)) printf("\n  '%s': message '%s' lacks '%s'\n", text, tsl_last_error(), part);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), part));
  tsl_schedule_free(s);
}

static void test_vector_width_refusals_are_located(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_row_max(6, 40);
  refused(p, "split(rmax, i, 2)\n  vector_width(384)\n", NULL, TSL_ERR_SCHEDULE, "schedule:2:3: vector_width: 384 bits");
  refused(p, "vector_width(384)\n", "w.sched", TSL_ERR_SCHEDULE, "w.sched:1:1: error: step vector_width(384) does not apply");
  refused(p, "vector_width(256)\nvector_width(256)\n", NULL, TSL_ERR_SCHEDULE, "schedule:2:1: vector_width: the kernel's width is already 256");
  refused(p, "vector_width(out, 256)\n", NULL, TSL_ERR_INVALID, "vector_width: argument 1 must be an integer");
  refused(p, "vector_width(0)\n", NULL, TSL_ERR_SCHEDULE, "0 bits is not a vector register width");
  refused(p, "vector_width()\n", NULL, TSL_ERR_PARSE, "schedule:1:14");
  /* a refused step leaves the width as it was */
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_new(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_vector_width(s, 64), TSL_ERR_SCHEDULE);
  CU_ASSERT_EQUAL(s->vector_bits, 0);
  CU_ASSERT_EQUAL(s->nsteps, 0);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_target_vector_widths(void) {
  static const struct {
    const char *target;
    int n, widths[2];
  } cases[] = {{"x86-64-avx512", 2, {512, 256}}, {"x86-64-avx2", 1, {256}}, {"armv8", 1, {128}},
               {"armv8.2-a+dotprod", 1, {128}}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tsl_target t, n;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(cases[i].target, &t), TSL_OK);
    int w[TSL_TARGET_MAX_VECTOR_WIDTHS];
    CU_ASSERT_EQUAL(tsl_target_vector_widths(&t, w), cases[i].n);
    for (int k = 0; k < cases[i].n; k++) CU_ASSERT_EQUAL(w[k], cases[i].widths[k]);
    CU_ASSERT_EQUAL(tsl_target_with_vector_bits(&t, t.vector_bits, &n), TSL_OK);
    CU_ASSERT_STRING_EQUAL(n.features, t.features);
    CU_ASSERT_EQUAL(tsl_target_with_vector_bits(&t, t.vector_bits * 2, &n), TSL_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "widths: "));
  }
  tsl_target t, n;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_with_vector_bits(&t, 256, &n), TSL_OK);
  CU_ASSERT_EQUAL(n.vector_bits, 256);
  CU_ASSERT_EQUAL(tsl_target_f32_lanes(&n), 8);
  CU_ASSERT_EQUAL(tsl_target_vector_registers(&n), 16);
  CU_ASSERT_FALSE(tsl_target_has_feature(&n, "avx512f"));
  CU_ASSERT_FALSE(tsl_target_has_feature(&n, "avx512vl"));
  CU_ASSERT_TRUE(tsl_target_has_feature(&n, "avx2"));
  CU_ASSERT_TRUE(tsl_target_has_feature(&n, "fma"));
  CU_ASSERT_TRUE(tsl_feature_string_disables(n.features, "avx512f"));
  CU_ASSERT_EQUAL(tsl_target_with_vector_bits(&t, 128, &n), TSL_ERR_UNSUPPORTED);
}

/* out = A * 2 + 1 on A[4, 64], its row vectorized, with `extra` steps, lowered for t
 * (vector_bits from t, as tsl_build does). NULL when lowering refuses (status in *st). */
static tsl_func *vector_kernel(const tsl_target *t, const char *extra, tsl_status *st) {
  tsl_te_program *p = st_elemwise_chain(4, 64);
  char text[256];
  snprintf(text, sizeof text, "vectorize(out, j)\n%s", extra);
  tsl_schedule *s = NULL;
  *st = tsl_schedule_from_text(p, text, &s);
  CU_ASSERT_EQUAL_FATAL(*st, TSL_OK);
  tsl_lower_options o = tsl_lower_options_default();
  o.vector_bits = t->vector_bits;
  tsl_func *f = NULL;
  *st = tsl_lower_with(s, "vw_kernel", &o, &f);
  tsl_schedule_free(s);
  return f;
}

static void test_vector_width_above_target_refused(void) {
  st_arena a = st_arena_begin();
  tsl_target avx2, arm;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &avx2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &arm), TSL_OK);
  tsl_status st;
  CU_ASSERT_PTR_NULL(vector_kernel(&avx2, "vector_width(512)\n", &st));
  CU_ASSERT_EQUAL(st, TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "vector_width(512) is wider than the target's 256-bit vectors"));
  CU_ASSERT_PTR_NULL(vector_kernel(&arm, "vector_width(256)\n", &st));
  CU_ASSERT_EQUAL(st, TSL_ERR_SCHEDULE);
  /* narrower than the target but not offered: codegen refuses (AVX2 has no 128 here) */
  tsl_func *f = vector_kernel(&avx2, "vector_width(128)\n", &st);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char *ir = NULL;
  CU_ASSERT_EQUAL(tsl_codegen_llvm_ir(f, &avx2, false, &ir), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "no 128-bit vectors (widths: 256)"));
  free(ir);
  /* NEON's own width is accepted */
  f = vector_kernel(&arm, "vector_width(128)\n", &st);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(tsl_codegen_llvm_ir(f, &arm, false, &ir), TSL_OK);
  free(ir);
  st_arena_end(a);
}

/* On x86-64-avx512 the kernel's functions get the narrowed features and a 256-bit
 * preferred width; its assembly uses ymm registers and no zmm or mask register, where the
 * same kernel without the step uses zmm. */
static void test_vector_width_reaches_llvm(void) {
  st_arena a = st_arena_begin();
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &t), TSL_OK);
  tsl_status st;
  tsl_func *wide = vector_kernel(&t, "", &st), *narrow = vector_kernel(&t, "vector_width(256)\n", &st);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wide);
  CU_ASSERT_PTR_NOT_NULL_FATAL(narrow);
  CU_ASSERT_EQUAL(narrow->vector_bits, 256);
  char *ir = NULL, *wide_asm = NULL, *narrow_asm = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_codegen_llvm_ir(narrow, &t, false, &ir), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, "\"prefer-vector-width\"=\"256\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, "\"min-legal-vector-width\"=\"256\""));
  const char *tf = strstr(ir, "\"target-features\"=\"");
  CU_ASSERT_PTR_NOT_NULL(tf);
  if (tf) {
    const char *end = strchr(tf + 19, '"');
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    size_t n = (size_t)(end - (tf + 19));
    char *fs = strndup(tf + 19, n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fs);
    CU_ASSERT(strstr(fs, "-avx512f,") != NULL || (n >= 8 && strcmp(fs + n - 8, "-avx512f") == 0));
    CU_ASSERT_PTR_NULL(strstr(fs, "+avx512"));
    /* a target other than the host keeps off what the host lacks, as the JIT does: the
     * attribute replaces the target machine's features, whose CPU could enable them */
    char *missing = tsl_codegen_host_missing_features();
    CU_ASSERT_PTR_NOT_NULL_FATAL(missing);
    for (char *save = NULL, *f = strtok_r(missing, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
      size_t k = strlen(f);
      bool found = false;
      for (const char *p = strstr(fs, f); p && !found; p = strstr(p + 1, f))
        found = (p == fs || p[-1] == ',') && (p[k] == ',' || p[k] == '\0');
      CU_ASSERT(found);
      if (!found) fprintf(stderr, "\n  host-missing feature %s not in the kernel's target-features\n", f);
    }
    free(missing);
    free(fs);
  }
  free(ir);
  CU_ASSERT_EQUAL_FATAL(tsl_codegen_asm(wide, &t, &wide_asm), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_codegen_asm(narrow, &t, &narrow_asm), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(wide_asm, "%zmm"));
  CU_ASSERT_PTR_NOT_NULL(strstr(narrow_asm, "%ymm"));
  CU_ASSERT_PTR_NULL(strstr(narrow_asm, "%zmm"));
  CU_ASSERT_PTR_NULL(strstr(narrow_asm, "%k1"));
  free(wide_asm);
  free(narrow_asm);
  st_arena_end(a);
}

void tsl_tests_schedule_vector_width(void) {
  CU_pSuite s = CU_add_suite("schedule/vector_width", NULL, NULL);
  CU_add_test(s, "test_vector_width_text_round_trips", test_vector_width_text_round_trips);
  CU_add_test(s, "test_vector_width_refusals_are_located", test_vector_width_refusals_are_located);
  CU_add_test(s, "test_target_vector_widths", test_target_vector_widths);
  CU_add_test(s, "test_vector_width_above_target_refused", test_vector_width_above_target_refused);
  CU_add_test(s, "test_vector_width_reaches_llvm", test_vector_width_reaches_llvm);
}
