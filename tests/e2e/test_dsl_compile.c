/* Every operator text we ship or document compiles and runs: the docs/dsl.md examples,
 * the grammar kitchen sink and the built-in registry, each instantiated, default-
 * scheduled, JIT-compiled, run on seeded random data and compared element by element
 * with the direct interpretation of the TE (dsl/te_interp.h). Plus the semantics both
 * sides must share, checked against values written by hand: saturating float->int
 * casts, integer division by a zero found in the data, 64-bit integers kept exact.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "ops/registry.h"
#include "dsl/te_interp.h"
#include "dsl/dsl_tests.h"
#include "ir/arena.h"
#include "runtime/module.h"
#include "target/target.h"

static tsl_jit *jit;

static int suite_init(void) {
  tsl_target t;
  if (tsl_target_parse("host", &t) != TSL_OK) return 1;
  return tsl_jit_new(&t, &jit) != TSL_OK;
}

static int suite_clean(void) {
  tsl_jit_free(jit);
  jit = NULL;
  return 0;
}

static tsl_dtype dtype_of(tsl_type t) {
  if (t.code == TSL_TYPE_BOOL) return TSL_DTYPE_BOOL;
  tsl_dtype d = {t.code == TSL_TYPE_INT ? TSL_DT_INT : t.code == TSL_TYPE_UINT ? TSL_DT_UINT : TSL_DT_FLOAT,
                 (uint8_t)t.bits};
  return d;
}

/* Compiles p (default schedule), runs it on the given inputs (random when fill) and
 * compares every output with the interpreter: floats within 1e-5 relative to the
 * output's magnitude (NaN where the interpreter has NaN), integers exactly.
 * Returns false, printing what differs, otherwise. */
static bool compile_run_compare(const tsl_te_program *p, const char *what, tsl_tensor **in, bool fill) {
  int n = p->ninputs + p->noutputs;
  tsl_tensor *t[16] = {0}, *ref[16] = {0};
  tsl_schedule *s = NULL;
  tsl_module *m = NULL;
  bool ok = false;
  if (n > 16) return false;
  tsl_status st = tsl_schedule_create(p, &s);
  if (st == TSL_OK) st = tsl_module_new(&m);
  if (st == TSL_OK) st = tsl_build(s, "dsl_compile", jit, m, NULL, NULL);
  for (int i = 0; i < n && st == TSL_OK; i++) {
    const tsl_buffer *b = i < p->ninputs ? p->inputs[i]->buf : p->outputs[i - p->ninputs]->buf;
    if (i < p->ninputs && in) {
      t[i] = in[i];
      continue;
    }
    st = tsl_tensor_new(dtype_of(b->dtype), b->ndim, b->shape, &t[i]);
    if (st == TSL_OK && i >= p->ninputs) st = tsl_tensor_new(dtype_of(b->dtype), b->ndim, b->shape, &ref[i]);
    if (st == TSL_OK && i < p->ninputs && fill)
      st = tsl_tensor_fill_random(t[i], 1000 + (uint64_t)i, b->dtype.code == TSL_TYPE_FLOAT ? -2.0 : 0.0,
                                  b->dtype.code == TSL_TYPE_FLOAT ? 2.0 : 5.0);
  }
  const tsl_kernel *k = NULL;
  if (st == TSL_OK) st = tsl_module_get_kernel(m, "dsl_compile", &k);
  if (st == TSL_OK) st = tsl_kernel_call_tensors(k, t, n);
  if (st == TSL_OK) st = tsl_te_interpret(p, (const tsl_tensor *const *)t, ref + p->ninputs);
  if (st != TSL_OK) {
    printf("\n  %s: %s\n", what, tsl_last_error());
  } else {
    ok = true;
    for (int o = p->ninputs; o < n && ok; o++) {
      bool is_float = t[o]->dtype.code == TSL_DT_FLOAT;
      int64_t count = tsl_tensor_numel(t[o]);
      double scale = 1.0;
      for (int64_t e = 0; e < count; e++)
        if (isfinite(tsl_tensor_get_f64(ref[o], e))) scale = fmax(scale, fabs(tsl_tensor_get_f64(ref[o], e)));
      for (int64_t e = 0; e < count && ok; e++) {
        double want = tsl_tensor_get_f64(ref[o], e), got = tsl_tensor_get_f64(t[o], e);
        bool same = is_float ? (isnan(want) ? isnan(got)
                                            : isinf(want) ? got == want : fabs(got - want) <= 1e-5 * scale)
                             : got == want;
        if (!same) {
          printf("\n  %s: output %d element %lld: JIT %.9g, interpreter %.9g\n", what, o - p->ninputs,
                 (long long)e, got, want);
          ok = false;
        }
      }
    }
  }
  for (int i = 0; i < n; i++) {
    if (!(in && i < p->ninputs)) tsl_tensor_free(t[i]);
    tsl_tensor_free(ref[i]);
  }
  tsl_module_free(m);
  tsl_schedule_free(s);
  return ok;
}

/* Instantiates every op of module text with each input dimension = dim and params
 * without default = 1 / 0.5, then compile_run_compare. */
static int compile_module(const char *text, const char *what, int64_t dim) {
  int compiled = 0;
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_dsl_module *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(text, what, &m), TSL_OK);
  for (int i = 0; i < tsl_dsl_module_count(m); i++) {
    const tsl_dsl_op *def = tsl_dsl_module_op(m, i);
    int n = tsl_dsl_op_ninputs(def);
    int64_t dims[16][8];
    const int64_t *shapes[16];
    int ndims[16];
    CU_ASSERT_FATAL(n <= 16);
    for (int k = 0; k < n; k++) {
      ndims[k] = tsl_dsl_op_input(def, k)->ndim;
      for (int d = 0; d < 8; d++) dims[k][d] = dim;
      shapes[k] = dims[k];
    }
    tsl_dsl_param_value pv[16];
    int np = 0;
    for (int k = 0; k < tsl_dsl_op_nparams(def) && np < 16; k++) {
      const tsl_dsl_param_info *pi = tsl_dsl_op_param(def, k);
      if (!pi->has_default)
        pv[np++] = pi->kind == TSL_DSL_PARAM_INT ? tsl_dsl_int_param(pi->name, 1) : tsl_dsl_float_param(pi->name, 0.5);
    }
    tsl_te_program *p = NULL;
    if (tsl_dsl_instantiate(def, n, shapes, ndims, np, pv, &p) != TSL_OK) continue; /* shape-specific ops */
    char label[160];
    snprintf(label, sizeof label, "%s: op %s", what, tsl_dsl_op_name(def));
    CU_ASSERT(compile_run_compare(p, label, NULL, true));
    compiled++;
  }
  tsl_dsl_module_free(m);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return compiled;
}

static void test_every_docs_example_compiles_and_matches_interpreter(void) {
  int n = 0;
  char **ex = dsl_doc_examples(&n);
  if (!ex) {
    printf("\n  (skipped: docs/dsl.md not found)\n");
    return;
  }
  CU_ASSERT(n >= 6);
  int compiled = 0;
  for (int i = 0; i < n - 1; i++) { /* the last example is printed text with fixed shapes */
    char what[32];
    snprintf(what, sizeof what, "docs example %d", i);
    compiled += compile_module(ex[i], what, 6);
  }
  CU_ASSERT(compiled >= n - 1); /* at least one op of every example ran */
  dsl_free_strings(ex, n);
}

static void test_kitchen_sink_compiles_and_matches_interpreter(void) {
  CU_ASSERT(compile_module(dsl_kitchen_sink, "kitchen sink", 5) >= 1);
}

static void test_every_builtin_op_example_matches_interpreter(void) {
  int n = 0;
  const tsl_op_info *const *ops = tsl_op_list(&n);
  for (int i = 0; i < n; i++) {
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    const tsl_op_example *ex = &ops[i]->example;
    tsl_te_program *p = NULL;
    CU_ASSERT_EQUAL(tsl_op_instantiate(ops[i]->name, ex->ninputs, ex->shapes, ex->ndims, ex->nparams, ex->params, &p),
                    TSL_OK);
    if (p) CU_ASSERT(compile_run_compare(p, ops[i]->name, NULL, true));
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
}

/* Runs a one-input elementwise op text on the given input values (dtype in_dt) and
 * checks JIT and interpreter against `want` (as doubles, exact). */
static void check_elementwise(const char *text, tsl_dtype in_dt, const double *inputs, const uint64_t *raw_inputs,
                              int count, const double *want) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_dsl_module *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(text, "semantics", &m), TSL_OK);
  int64_t shape[1] = {count};
  const int64_t *shapes[1] = {shape};
  int ndims[1] = {1};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(tsl_dsl_module_op(m, 0), 1, shapes, ndims, 0, NULL, &p), TSL_OK);
  tsl_tensor *in = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(in_dt, 1, shape, &in), TSL_OK);
  for (int i = 0; i < count; i++) {
    if (raw_inputs) ((uint64_t *)in->data)[i] = raw_inputs[i];
    else if (in_dt.bits == 32 && in_dt.code == TSL_DT_FLOAT) ((float *)in->data)[i] = (float)inputs[i];
    else if (in_dt.code == TSL_DT_INT && in_dt.bits == 32) ((int32_t *)in->data)[i] = (int32_t)inputs[i];
  }
  CU_ASSERT(compile_run_compare(p, text, &in, false)); /* JIT == interpreter */
  /* and the interpreter == the values written here */
  const tsl_buffer *ob = p->outputs[0]->buf;
  tsl_tensor *out = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(dtype_of(ob->dtype), 1, shape, &out), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_te_interpret(p, (const tsl_tensor *const *)&in, &out), TSL_OK);
  for (int i = 0; i < count; i++) {
    double got = tsl_tensor_get_f64(out, i);
    if (got != want[i]) printf("\n  %s: element %d: %.17g, want %.17g\n", text, i, got, want[i]);
    CU_ASSERT_EQUAL(got, want[i]);
  }
  tsl_tensor_free(in);
  tsl_tensor_free(out);
  tsl_dsl_module_free(m);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

static void test_float_to_int_casts_saturate_everywhere(void) {
  const double in[8] = {-1.0, 300.0, 200.5, -200.5, NAN, INFINITY, -INFINITY, 254.9};
  const double u8w[8] = {0, 255, 200, 0, 0, 255, 0, 254};
  const double i8w[8] = {-1, 127, 127, -128, 0, 127, -128, 127};
  const double i32w[8] = {-1, 300, 200, -200, 0, 2147483647.0, -2147483648.0, 254};
  check_elementwise("op c(x: f32[N])\n  y[i] = u8(x[i])\n", TSL_DTYPE_F32, in, NULL, 8, u8w);
  check_elementwise("op c(x: f32[N])\n  y[i] = i8(x[i])\n", TSL_DTYPE_F32, in, NULL, 8, i8w);
  check_elementwise("op c(x: f32[N])\n  y[i] = i32(x[i])\n", TSL_DTYPE_F32, in, NULL, 8, i32w);
}

static void test_integer_division_by_zero_in_data_gives_zero(void) {
  const double in[5] = {0, 3, -3, 0, 7};
  const double divw[5] = {0, 33, -34, 0, 14};  /* 100 / x, floor; /0 -> 0 */
  const double modw[5] = {0, 1, -2, 0, 2};     /* 100 % x, floor; %0 -> 0 */
  check_elementwise("op d(x: i32[N])\n  y[i] = 100 / x[i]\n", TSL_DTYPE_I32, in, NULL, 5, divw);
  check_elementwise("op d(x: i32[N])\n  y[i] = 100 % x[i]\n", TSL_DTYPE_I32, in, NULL, 5, modw);
}

static void test_isnan_negations_compile(void) {
  const double in[4] = {NAN, 1.0, -2.0, NAN};
  const double w[4] = {0, 1, 1, 0};
  check_elementwise("op n(x: f32[N])\n  y[i] = !isnan(x[i])\n", TSL_DTYPE_F32, in, NULL, 4, w);
  check_elementwise("op n(x: f32[N])\n  y[i] = isnan(x[i]) != true\n", TSL_DTYPE_F32, in, NULL, 4, w);
  check_elementwise("op n(x: f32[N])\n  y[i] = x[i] > -5.0 && !isnan(x[i])\n", TSL_DTYPE_F32, in, NULL, 4, w);
}

static void test_u64_values_stay_exact(void) {
  const uint64_t raw[4] = {~0ull, 1ull << 63, (1ull << 53) + 1, 0x5555555555555555ull};
  const double pop[4] = {64, 1, 2, 32};
  check_elementwise("op p(x: u64[N])\n  y[i] = popcount(x[i])\n", TSL_DTYPE_U64, NULL, raw, 4, pop);
  /* the low bit of 2^53 + 1 survives (a double would drop it) */
  const double low[4] = {1, 0, 1, 1};
  check_elementwise("op p(x: u64[N])\n  y[i] = bit_and(x[i], 1)\n", TSL_DTYPE_U64, NULL, raw, 4, low);
}

/* shared/cases class 21: sizes beyond i64 index arithmetic are refused at instantiation
 * (a shape of 2^32 x 2^32 would overflow a row-major offset), while a tensor of more
 * than 2^31 elements is accepted (it only needs i64 indices, which tessel uses). */
static void test_huge_shapes_refused_large_ones_accepted(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  int64_t big[2] = {(int64_t)1 << 32, (int64_t)1 << 32};
  const int64_t *shapes[2] = {big, big};
  int ndims[2] = {2, 2};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL(tsl_op_instantiate("matmul", 2, shapes, ndims, 0, NULL, &p), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "too large"));
  int64_t a[2] = {(int64_t)1 << 20, (int64_t)1 << 12}, b[2] = {(int64_t)1 << 12, 2};
  const int64_t *ok_shapes[2] = {a, b}; /* A has 2^32 elements */
  CU_ASSERT_EQUAL(tsl_op_instantiate("matmul", 2, ok_shapes, ndims, 0, NULL, &p), TSL_OK);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

void tsl_tests_e2e_dsl_compile(void) {
  CU_add_test(CU_add_suite("e2e_sizes", NULL, NULL), "test_huge_shapes_refused_large_ones_accepted",
              test_huge_shapes_refused_large_ones_accepted);
  CU_pSuite s = CU_add_suite("e2e_dsl_compile", suite_init, suite_clean);
  CU_add_test(s, "test_every_docs_example_compiles_and_matches_interpreter",
              test_every_docs_example_compiles_and_matches_interpreter);
  CU_add_test(s, "test_kitchen_sink_compiles_and_matches_interpreter", test_kitchen_sink_compiles_and_matches_interpreter);
  CU_add_test(s, "test_every_builtin_op_example_matches_interpreter", test_every_builtin_op_example_matches_interpreter);
  CU_add_test(s, "test_float_to_int_casts_saturate_everywhere", test_float_to_int_casts_saturate_everywhere);
  CU_add_test(s, "test_integer_division_by_zero_in_data_gives_zero", test_integer_division_by_zero_in_data_gives_zero);
  CU_add_test(s, "test_isnan_negations_compile", test_isnan_negations_compile);
  CU_add_test(s, "test_u64_values_stay_exact", test_u64_values_stay_exact);
}
