/* Loops that transpose (codegen/llvm_transpose.c): loops built directly in IR, run by the
 * JIT and compared with a reference written here from the loop's meaning (lane c of
 * iteration w stores data[i(w) + c * S], or 0 where the lane is off), with the emitted
 * module checked for whether the transposed form was taken. The graph test
 * (tests/graph/test_transpose.c) reaches the form only through layout transforms, whose
 * padding lanes it cannot see; this one covers what the transforms do not produce:
 * loops not starting at 0, i32 loop variables, negative and overlapping row strides,
 * conditions and load predicates with OR / NOT, fixed or set at run time, output
 * iterations that do not abut, and the loops that must keep the per-lane loads. */
#include <llvm-c/Core.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/llvm.h"
#include "tests/codegen/cg_util.h"

/* Which lanes are off, and how the loop says so. */
typedef enum tp_mask {
  TP_NONE,          /* every lane reads */
  TP_SEL_CONST,     /* select(c < 3, load, 0) */
  TP_SEL_OR_CONST,  /* select(c < 2 || c == L - 1, load, 0) */
  TP_SEL_NOT_CONST, /* select(!(c >= 3), load, 0) */
  TP_SEL_RUNTIME,   /* select(c < n, load, 0), n a kernel argument */
  TP_SEL_OR_RUNTIME,  /* select(c < n || c == m, load, 0) */
  TP_SEL_NOT_RUNTIME, /* select(!(c >= n), load, 0) */
  TP_PRED_CONST,    /* load predicated on c >= 1 (off lanes read 0) */
  TP_PRED_RUNTIME,  /* load predicated on c < n */
  TP_SEL_AND_PRED,  /* select(c < n, load predicated on c >= 1, 0) */
  /* loops that must not be transposed */
  TP_SEL_USES_W,    /* select(c < w - min + 1, load, 0): changes with the loop */
  TP_SEL_NEG_ZERO,  /* select(c < 3, load, -0.0): the zero rows would be +0.0 */
} tp_mask;

typedef struct tp_case {
  const char *what;
  int lanes;
  bool i32;               /* the loop variable's type (else i64) */
  int64_t min, extent;    /* the loop */
  int64_t step, stride;   /* i(w) = (w - min) * step + off + (index_reads ? ib[0] : 0); row stride S */
  int64_t off;
  int64_t out_step;       /* o(w) = (w - min) * out_step + 1 */
  tp_mask mask;
  bool index_reads;       /* the load's index reads memory */
  bool transposable;      /* the form applies (given lanes that fit the target) */
} tp_case;

static bool lane_on(const tp_case *k, int c, int64_t w, int64_t n, int64_t m) {
  int L = k->lanes;
  switch (k->mask) {
  case TP_NONE: return true;
  case TP_SEL_CONST: case TP_SEL_NOT_CONST: case TP_SEL_NEG_ZERO: return c < 3;
  case TP_SEL_OR_CONST: return c < 2 || c == L - 1;
  case TP_SEL_RUNTIME: case TP_SEL_NOT_RUNTIME: case TP_PRED_RUNTIME: return c < n;
  case TP_SEL_OR_RUNTIME: return c < n || c == m;
  case TP_PRED_CONST: return c >= 1;
  case TP_SEL_AND_PRED: return c < n && c >= 1;
  case TP_SEL_USES_W: return c < w - k->min + 1;
  }
  return false;
}

/* The reference: out as the loop leaves it (`out` holds its previous contents). */
static void reference(const tp_case *k, const float *data, int64_t n, int64_t m, float *out) {
  for (int64_t w = k->min; w < k->min + k->extent; w++) {
    int64_t i = (w - k->min) * k->step + k->off, o = (w - k->min) * k->out_step + 1;
    for (int c = 0; c < k->lanes; c++)
      out[o + c] = lane_on(k, c, w, n, m) ? data[i + c * k->stride] : k->mask == TP_SEL_NEG_ZERO ? -0.0f : 0.0f;
  }
}

typedef struct tp_ir {
  tsl_type t;   /* the loop variable's type */
  int lanes;
  tsl_expr *n, *m;
} tp_ir;

static tsl_expr *kc(const tp_ir *x, int64_t v) { return tsl_int(x->t, v); }
static tsl_expr *lane_ids(const tp_ir *x) { return tsl_ramp(kc(x, 0), kc(x, 1), x->lanes); }
static tsl_expr *bc(const tp_ir *x, tsl_expr *s) { return tsl_broadcast(s, x->lanes); }
static tsl_expr *arg_n(const tp_ir *x) { return x->t.bits == 64 ? x->n : tsl_cast(x->t, x->n); }
static tsl_expr *arg_m(const tp_ir *x) { return x->t.bits == 64 ? x->m : tsl_cast(x->t, x->m); }

static tsl_func *tp_kernel(const tp_case *k, tsl_buffer *data, tsl_buffer *out, tsl_buffer *ib, tsl_expr *n,
                           tsl_expr *m) {
  tp_ir x = {k->i32 ? tsl_type_make(TSL_TYPE_INT, 32, 1) : TSL_I64, k->lanes, n, m};
  int L = k->lanes;
  tsl_expr *w = tsl_var("w", x.t);
  tsl_expr *rel = tsl_sub(w, kc(&x, k->min));
  tsl_expr *ibase = tsl_add(tsl_mul(rel, kc(&x, k->step)), kc(&x, k->off));
  if (k->index_reads) {
    tsl_expr *z = tsl_i64(0), *v = tsl_load(ib, 1, &z, NULL);
    ibase = tsl_add(ibase, x.t.bits == 64 ? v : tsl_cast(x.t, v));
  }
  tsl_expr *obase = tsl_add(tsl_mul(tsl_sub(w, kc(&x, k->min)), kc(&x, k->out_step)), kc(&x, 1));
  tsl_expr *pred = NULL;
  if (k->mask == TP_PRED_CONST || k->mask == TP_SEL_AND_PRED) pred = tsl_ge(lane_ids(&x), bc(&x, kc(&x, 1)));
  if (k->mask == TP_PRED_RUNTIME) pred = tsl_lt(lane_ids(&x), bc(&x, arg_n(&x)));
  tsl_expr *li = tsl_ramp(ibase, kc(&x, k->stride), L);
  tsl_expr *v = tsl_load(data, 1, &li, pred);
  tsl_expr *cond = NULL;
  switch (k->mask) {
  case TP_SEL_CONST: case TP_SEL_NEG_ZERO: cond = tsl_lt(lane_ids(&x), bc(&x, kc(&x, 3))); break;
  case TP_SEL_OR_CONST:
    cond = tsl_or(tsl_lt(lane_ids(&x), bc(&x, kc(&x, 2))), tsl_eq(lane_ids(&x), bc(&x, kc(&x, L - 1))));
    break;
  case TP_SEL_NOT_CONST: cond = tsl_not(tsl_ge(lane_ids(&x), bc(&x, kc(&x, 3)))); break;
  case TP_SEL_RUNTIME: case TP_SEL_AND_PRED: cond = tsl_lt(lane_ids(&x), bc(&x, arg_n(&x))); break;
  case TP_SEL_OR_RUNTIME:
    cond = tsl_or(tsl_lt(lane_ids(&x), bc(&x, arg_n(&x))), tsl_eq(lane_ids(&x), bc(&x, arg_m(&x))));
    break;
  case TP_SEL_NOT_RUNTIME: cond = tsl_not(tsl_ge(lane_ids(&x), bc(&x, arg_n(&x)))); break;
  case TP_SEL_USES_W: cond = tsl_lt(lane_ids(&x), bc(&x, tsl_add(tsl_sub(w, kc(&x, k->min)), kc(&x, 1)))); break;
  default: break;
  }
  if (cond) v = tsl_select(cond, v, bc(&x, tsl_f32(k->mask == TP_SEL_NEG_ZERO ? -0.0f : 0.0f)));
  tsl_stmt *st = cg_stv(out, obase, L, v);
  tsl_stmt *loop = tsl_for(w, kc(&x, k->min), kc(&x, k->extent), TSL_FOR_SERIAL, st);
  tsl_arg args[5] = {{.is_buffer = true, .buf = data}, {.is_buffer = true, .buf = out}, {.is_buffer = true, .buf = ib},
                     {.is_buffer = false, .var = n}, {.is_buffer = false, .var = m}};
  return tsl_func_new("transpose_case", 5, args, loop);
}

/* Whether the module emitted for f has the transposed block loop (its blocks are named
 * "transpose", codegen/llvm.c serial_for). */
static bool emits_transpose(const tsl_func *f) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  bool found = false;
  if (tsl_codegen_emit(f, tsl_jit_target(cg_jit), ctx, NULL, NULL, &mod) == TSL_OK) {
    char *s = LLVMPrintModuleToString(mod);
    found = strstr(s, "\ntranspose") != NULL;
    LLVMDisposeMessage(s);
    LLVMDisposeModule(mod);
  } else {
    CU_FAIL("the kernel did not emit");
  }
  LLVMContextDispose(ctx);
  return found;
}

/* Runs case k for run-time values n, m and checks out element by element (the elements
 * between iterations keep their sentinel) and whether the transposed form was taken. */
static void run_case(const tp_case *k) {
  int L = k->lanes;
  /* every element any lane's row may touch, off lanes included */
  int64_t lo = 0, hi = 0;
  for (int64_t j = 0; j < k->extent; j++)
    for (int c = 0; c < L; c++) {
      int64_t i = j * k->step + k->off + c * k->stride;
      if (i < lo) lo = i;
      if (i > hi) hi = i;
    }
  CU_ASSERT_FATAL(lo >= 0); /* the case's offset keeps negative strides inside */
  int64_t nd = hi + 1, no = (k->extent - 1) * k->out_step + 1 + L + 1;
  tsl_buffer *data = cg_buf("data", TSL_F32, nd), *out = cg_buf("out", TSL_F32, no), *ib = cg_buf("ib", TSL_I64, 1);
  tsl_expr *n = tsl_var("n", TSL_I64), *m = tsl_var("m", TSL_I64);
  tsl_func *f = tp_kernel(k, data, out, ib, n, m);
  int vbits = tsl_jit_target(cg_jit)->vector_bits;
  bool expect = k->transposable && (int64_t)L * 32 <= 2 * (int64_t)vbits;
  bool got = emits_transpose(f);
  if (got != expect) fprintf(stderr, "\n    [%s, %d lanes: transposed %d, expected %d]\n", k->what, L, got, expect);
  CU_ASSERT_EQUAL(got, expect);

  float *d = cg_alloc((size_t)nd * sizeof(float)), *o = cg_alloc((size_t)no * sizeof(float)),
        *want = malloc((size_t)no * sizeof(float));
  int64_t *ibv = cg_alloc(sizeof(int64_t));
  CU_ASSERT_FATAL(d && o && want && ibv);
  for (int64_t i = 0; i < nd; i++) d[i] = 1.0f + 0.25f * (float)i;
  /* run-time lane counts: none, a few, all, past all; m a lane in and past the block */
  const int64_t ns[] = {0, 3, L, L + 2}, ms[] = {L - 1, L + 5};
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 2; b++) {
      for (int64_t i = 0; i < no; i++) o[i] = want[i] = -7.0f;
      int64_t nv = ns[a], mv = ms[b];
      reference(k, d, nv, mv, want);
      void *pd = d, *po = o, *pi = ibv;
      CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&pd, &po, &pi, &nv, &mv}), TSL_OK);
      int bad = 0;
      for (int64_t i = 0; i < no; i++)
        if (memcmp(&o[i], &want[i], sizeof(float)) != 0 && bad++ < 3)
          fprintf(stderr, "\n    [%s, %d lanes, n %lld m %lld: out[%lld] = %g, want %g]\n", k->what, L, (long long)nv,
                  (long long)mv, (long long)i, o[i], want[i]);
      CU_ASSERT_EQUAL(bad, 0);
    }
  free(d), free(o), free(want), free(ibv);
}

static void run_cases(const tp_case *cases, int ncases) {
  for (int i = 0; i < ncases; i++) run_case(&cases[i]);
}

static void test_rows_of_every_stride_and_loop_shape(void) {
  const tp_case cases[] = {
      {"whole blocks and a tail", 4, false, 0, 11, 1, 37, 0, 4, TP_NONE, false, true},
      {"whole blocks and a tail", 8, false, 0, 19, 1, 37, 0, 8, TP_NONE, false, true},
      {"whole blocks and a tail", 16, false, 0, 35, 1, 37, 0, 16, TP_NONE, false, true},
      {"one whole block", 16, false, 0, 16, 1, 16, 0, 16, TP_NONE, false, true},
      {"loop from a negative min", 8, false, -5, 13, 1, 20, 3, 8, TP_NONE, false, true},
      {"i32 loop from 7", 8, true, 7, 17, 1, 29, 0, 8, TP_NONE, false, true},
      {"i32 loop from 7", 16, true, 7, 33, 1, 41, 0, 16, TP_NONE, false, true},
      {"negative row stride", 8, false, 0, 21, 1, -22, 7 * 22, 8, TP_NONE, false, true},
      {"negative row stride", 16, true, 2, 18, 1, -19, 15 * 19, 16, TP_NONE, false, true},
      {"overlapping rows, stride 2", 8, false, 0, 12, 1, 2, 0, 8, TP_NONE, false, true},
      {"overlapping rows, stride -1", 16, false, 0, 20, 1, -1, 15, 16, TP_NONE, false, true},
      {"iterations apart in out", 8, false, 0, 10, 1, 11, 0, 13, TP_NONE, false, true},
  };
  run_cases(cases, (int)(sizeof cases / sizeof cases[0]));
}

static void test_lanes_off_fixed_or_at_run_time(void) {
  const tp_case cases[] = {
      {"select c < 3", 8, false, 0, 19, 1, 23, 0, 8, TP_SEL_CONST, false, true},
      {"select c < 3", 16, true, 1, 37, 1, 40, 0, 16, TP_SEL_CONST, false, true},
      {"select c < 2 || c == L - 1", 8, false, 0, 17, 1, 20, 0, 8, TP_SEL_OR_CONST, false, true},
      {"select !(c >= 3)", 16, false, 0, 33, 1, 35, 0, 16, TP_SEL_NOT_CONST, false, true},
      {"select c < n", 8, false, 0, 19, 1, 21, 0, 8, TP_SEL_RUNTIME, false, true},
      {"select c < n", 16, true, -3, 35, 1, 36, 0, 16, TP_SEL_RUNTIME, false, true},
      {"select c < n || c == m", 8, false, 0, 18, 1, 19, 0, 8, TP_SEL_OR_RUNTIME, false, true},
      {"select c < n || c == m", 16, false, 0, 34, 1, 34, 0, 16, TP_SEL_OR_RUNTIME, false, true},
      {"select !(c >= n)", 16, true, 0, 21, 1, -22, 15 * 22, 16, TP_SEL_NOT_RUNTIME, false, true},
      {"load predicate c >= 1", 8, false, 0, 17, 1, 18, 0, 8, TP_PRED_CONST, false, true},
      {"load predicate c < n", 16, false, 0, 35, 1, 35, 0, 16, TP_PRED_RUNTIME, false, true},
      {"select c < n of a load predicated c >= 1", 8, false, 0, 19, 1, 19, 0, 8, TP_SEL_AND_PRED, false, true},
  };
  run_cases(cases, (int)(sizeof cases / sizeof cases[0]));
}

static void test_loops_that_keep_per_lane_loads(void) {
  const tp_case cases[] = {
      {"rows stepping by 2", 8, false, 0, 17, 2, 40, 0, 8, TP_NONE, false, false},
      {"a condition that changes with w", 8, false, 0, 17, 1, 18, 0, 8, TP_SEL_USES_W, false, false},
      {"a -0.0 zero branch", 8, false, 0, 17, 1, 18, 0, 8, TP_SEL_NEG_ZERO, false, false},
      {"an index that reads memory", 8, false, 0, 17, 1, 18, 0, 8, TP_NONE, true, false},
      {"fewer iterations than lanes", 16, false, 0, 15, 1, 16, 0, 16, TP_NONE, false, false},
  };
  run_cases(cases, (int)(sizeof cases / sizeof cases[0]));
}

void cg_add_transpose_tests(void) {
  CU_pSuite s = CU_add_suite("codegen_transpose", cg_suite_init, cg_suite_clean);
  CU_add_test(s, "test_rows_of_every_stride_and_loop_shape", test_rows_of_every_stride_and_loop_shape);
  CU_add_test(s, "test_lanes_off_fixed_or_at_run_time", test_lanes_off_fixed_or_at_run_time);
  CU_add_test(s, "test_loops_that_keep_per_lane_loads", test_loops_that_keep_per_lane_loads);
}
