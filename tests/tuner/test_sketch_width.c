/* The auto-scheduler's vector_width knob (tuner/autosched.h): present only on targets
 * with more than one vector width (AVX-512: 512 and 256; none on AVX2 or NEON), the
 * target's own width by default, a narrower pick ending the schedule with
 * vector_width(bits); and seeded configs at the narrowest width the host offers build and
 * give the TE interpreter's result (dsl/te_interp.h), a reference independent of the
 * schedule. On an AVX2 host (TSL_HOST_TARGET=x86-64-avx2) there is no knob and the same
 * configs run at 8 lanes. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/jit.h"
#include "dsl/parser.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "runtime/module.h"
#include "tessel/tensor.h"
#include "tuner/autosched.h"
#include "tuner_tests.h"

#define WIDTH_SAMPLES 16

static const char width_ops[] =
    "op vw_maxpool(data: f32[N, C, H, W])\n"
    "  out[n, c, y, x] = max(r, s: data[n, c, y * 2 + r, x * 2 + s])\n"
    "    where y < (H - 3) / 2 + 1, x < (W - 3) / 2 + 1, r < 3, s < 3\n"
    "op vw_chsum(X: f32[N, C, H, W])\n"
    "  out[c] = sum(n, h, w: X[n, c, h, w])\n"
    "op vw_matmul(A: f32[M, K], B: f32[K, N])\n"
    "  C[i, j] = sum(k: A[i, k] * B[k, j])\n"
    "op vw_scale(X: f32[N, C, H, W])\n"
    "  out[n, c, h, w] = 0.5 * X[n, c, h, w] * (1.0 + erf(X[n, c, h, w] * 0.70710678))\n";

typedef struct width_case {
  const char *op;
  int ninputs;
  int64_t shapes[2][4];
  int ndims[2];
} width_case;

static const width_case width_cases[] = {
    {"vw_maxpool", 1, {{1, 4, 13, 13}}, {4}},
    {"vw_chsum", 1, {{2, 8, 10, 10}}, {4}},
    {"vw_matmul", 2, {{24, 20}, {20, 40}}, {2, 2}},
    {"vw_scale", 1, {{1, 3, 7, 9}}, {4}},
};

/* The auto-scheduler's template serves any program (tuner/autosched.h); the process's
 * template registry is small and the tuner suites fill it, so these tests share the one
 * the sketch suite registers (test_sketch.c) rather than add their own. */
static const tsl_template *width_template(void) {
  const tsl_template *tpl = NULL;
  tsl_status st = tsl_autosched_template("sk_matmul", &tpl);
  if (st != TSL_OK) printf("\n  %s\n", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  return tpl;
}

static tsl_te_program *width_program(const tsl_dsl_module *mod, const width_case *c) {
  const int64_t *sh[2] = {c->shapes[0], c->shapes[1]};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(tsl_dsl_module_find(mod, c->op), c->ninputs, sh, c->ndims, 0, NULL, &p),
                        TSL_OK);
  return p;
}

/* Config `index` of tpl's space on t with the vector_width knob (when there is one) set
 * to `bits`, applied into *s; returns the schedule's vector_bits (-1 on error). */
static int width_config(const tsl_template *tpl, const tsl_te_program *p, const tsl_target *t, int64_t index,
                        int bits, tsl_schedule **s) {
  tsl_config_space sp;
  tsl_config cfg;
  *s = NULL;
  if (tpl->space(p, t, &sp) != TSL_OK) return -1;
  if (tsl_config_from_index(&sp, index % tsl_space_size(&sp), &cfg) != TSL_OK) return -1;
  int w = tsl_space_knob_index(&sp, "vector_width");
  if (w >= 0) cfg.values[w] = bits;
  if (tpl->apply(p, t, &sp, &cfg, s) != TSL_OK) return -1;
  return (*s)->vector_bits;
}

static void test_autosched_width_knob_per_target(void) {
  tsl_dsl_module *mod = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(width_ops, "width_ops.tsl", &mod), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = width_program(mod, &width_cases[0]);
  const tsl_template *tpl = width_template();
  static const char *const targets[] = {"x86-64-avx512", "x86-64-avx2", "armv8"};
  for (int i = 0; i < 3; i++) {
    tsl_target t;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[i], &t), TSL_OK);
    tsl_config_space sp;
    tsl_config def;
    CU_ASSERT_EQUAL_FATAL(tpl->space(p, &t, &sp), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tpl->default_config(p, &t, &sp, &def), TSL_OK);
    int w = tsl_space_knob_index(&sp, "vector_width");
    if (i > 0) {
      CU_ASSERT_EQUAL(w, -1); /* one width: no knob, nothing changes */
      continue;
    }
    CU_ASSERT_FATAL(w >= 0);
    CU_ASSERT_EQUAL(sp.knobs[w].nvalues, 2);
    CU_ASSERT_EQUAL(sp.knobs[w].values[0], 256);
    CU_ASSERT_EQUAL(sp.knobs[w].values[1], 512);
    CU_ASSERT_EQUAL(def.values[w], 512);
    for (int64_t k = 0; k < 8; k++) {
      tsl_schedule *s = NULL;
      CU_ASSERT_EQUAL(width_config(tpl, p, &t, k * 7919, 256, &s), 256);
      char *text = s ? tsl_schedule_to_string(s) : NULL;
      size_t n = text ? strlen(text) : 0;
      CU_ASSERT_TRUE(n >= 18 && strcmp(text + n - 18, "vector_width(256)\n") == 0);
      free(text);
      tsl_schedule_free(s);
      CU_ASSERT_EQUAL(width_config(tpl, p, &t, k * 7919, 512, &s), 0);
      text = s ? tsl_schedule_to_string(s) : NULL;
      CU_ASSERT_PTR_NULL(text ? strstr(text, "vector_width") : "");
      free(text);
      tsl_schedule_free(s);
    }
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_dsl_module_free(mod);
}

/* Builds s on jit, runs it on args (the output NaN-filled first) and returns the largest
 * difference from ref relative to the output's magnitude (INFINITY on failure). */
static double width_error(const tsl_schedule *s, const tsl_te_program *p, tsl_jit *jit, tsl_tensor **args,
                          tsl_tensor *ref) {
  int nargs = p->ninputs + p->noutputs;
  tsl_module *m = NULL;
  const tsl_kernel *k = NULL;
  tsl_status st = tsl_module_new(&m);
  if (st == TSL_OK) st = tsl_build(s, p->name, jit, m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(m, p->name, &k);
  int64_t nout = tsl_tensor_numel(ref);
  memset(args[nargs - 1]->data, 0xff, (size_t)nout * sizeof(float));
  if (st == TSL_OK) st = tsl_kernel_call_tensors(k, args, nargs);
  if (st != TSL_OK) printf("\n  %s: %s\n", p->name, tsl_last_error());
  double scale = 1.0, worst = st == TSL_OK ? 0.0 : INFINITY;
  for (int64_t e = 0; e < nout; e++) scale = fmax(scale, fabs(tsl_tensor_get_f64(ref, e)));
  for (int64_t e = 0; st == TSL_OK && e < nout; e++) {
    double d = fabs(tsl_tensor_get_f64(args[nargs - 1], e) - tsl_tensor_get_f64(ref, e)) / scale;
    worst = isnan(d) ? INFINITY : fmax(worst, d);
  }
  tsl_module_free(m);
  return worst;
}

static void test_autosched_narrow_candidates_match_interpreter(void) {
  tsl_dsl_module *mod = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(width_ops, "width_ops.tsl", &mod), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_target host;
  tsl_jit *jit = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&host, &jit), TSL_OK);
  int widths[TSL_TARGET_MAX_VECTOR_WIDTHS];
  int narrowest = widths[tsl_target_vector_widths(&host, widths) - 1];
  for (size_t c = 0; c < sizeof width_cases / sizeof width_cases[0]; c++) {
    tsl_te_program *p = width_program(mod, &width_cases[c]);
    const tsl_template *tpl = width_template();
    int nargs = p->ninputs + p->noutputs;
    tsl_tensor *args[3] = {0}, *ref[3] = {0};
    for (int i = 0; i < nargs; i++) {
      const tsl_buffer *b = i < p->ninputs ? p->inputs[i]->buf : p->outputs[i - p->ninputs]->buf;
      CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, b->ndim, b->shape, &args[i]), TSL_OK);
      tsl_status st = i < p->ninputs ? tsl_tensor_fill_random(args[i], 17 + (uint64_t)i, -1.0, 1.0)
                                     : tsl_tensor_new(TSL_DTYPE_F32, b->ndim, b->shape, &ref[i]);
      CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    }
    CU_ASSERT_EQUAL_FATAL(tsl_te_interpret(p, (const tsl_tensor *const *)args, ref + p->ninputs), TSL_OK);
    int good = 0;
    for (int k = 0; k < WIDTH_SAMPLES; k++) {
      tsl_schedule *s = NULL;
      int bits = width_config(tpl, p, &host, (int64_t)k * 104729 + 3, narrowest, &s);
      bool narrowed = narrowest == host.vector_bits ? bits == 0 : bits == narrowest;
      double err = s ? width_error(s, p, jit, args, ref[nargs - 1]) : INFINITY;
      if (!(narrowed && err <= 1e-5)) {
        char *text = s ? tsl_schedule_to_string(s) : NULL;
        printf("\n  %s config %d: width %d, error %g; schedule:\n%s", p->name, k, bits, err, text ? text : "(none)");
        free(text);
      }
      good += narrowed && err <= 1e-5;
      tsl_schedule_free(s);
    }
    CU_ASSERT_EQUAL(good, WIDTH_SAMPLES);
    for (int i = 0; i < nargs; i++) {
      tsl_tensor_free(args[i]);
      tsl_tensor_free(ref[i]);
    }
  }
  tsl_jit_free(jit);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_dsl_module_free(mod);
}

void tsl_tests_tuner_sketch_width(void) {
  CU_pSuite s = CU_add_suite("tuner/sketch_width", NULL, NULL);
  CU_add_test(s, "test_autosched_width_knob_per_target", test_autosched_width_knob_per_target);
  CU_add_test(s, "test_autosched_narrow_candidates_match_interpreter",
              test_autosched_narrow_candidates_match_interpreter);
}
