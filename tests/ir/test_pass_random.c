/* tsl_pass_simplify on random loop nests: the original and the simplified statement,
 * run by the reference interpreter (tests/ref/ir_eval.c), write the same memory. */
#include <stdlib.h>
#include <string.h>

#include "ir/passes/simplify.h"
#include "ir_gen.h"
#include "ir_tests.h"
#include "tests/ref/ir_eval.h"

enum { IN_N = 24, OUT_N = 32 };

typedef struct mem {
  tsl_buffer *in, *out;
  int64_t in_data[IN_N], out_data[OUT_N];
} mem;

static int64_t *mem_data(void *ud, const tsl_buffer *b) {
  mem *m = ud;
  return b == m->in ? m->in_data : b == m->out ? m->out_data : NULL;
}

typedef struct sgen {
  ir_gen g;
  tsl_buffer *in, *out;
} sgen;

static tsl_expr *c64(int64_t v) { return tsl_i64(v); }

static tsl_expr *wrapped_index(sgen *s, int n) { return tsl_mod(ir_gen_expr(&s->g, 2), c64(n)); }

/* A value: arithmetic of the variables in scope, sometimes reading `in` through an
 * in-bounds index (wrapped, or clamped inside a select as lowering writes padding). */
static tsl_expr *value(sgen *s) {
  tsl_expr *v = ir_gen_expr(&s->g, 2);
  switch (ir_gen_int(&s->g, 0, 3)) {
  case 0: {
    tsl_expr *i = wrapped_index(s, IN_N);
    return tsl_add(v, tsl_load(s->in, 1, &i, NULL));
  }
  case 1: {
    tsl_expr *e = ir_gen_expr(&s->g, 1);
    tsl_expr *clamped = tsl_min(tsl_max(e, c64(0)), c64(IN_N - 1));
    tsl_expr *ok = tsl_and(tsl_le(c64(0), e), tsl_lt(e, c64(IN_N)));
    return tsl_select(ok, tsl_load(s->in, 1, &clamped, NULL), v);
  }
  default: return v;
  }
}

static tsl_stmt *gen_stmt(sgen *s, int depth) {
  ir_gen *g = &s->g;
  int r = depth <= 0 ? 9 : (int)ir_gen_int(g, 0, 9);
  if (r <= 3 && g->nvars < IR_GEN_MAX_VARS) {
    tsl_expr *v = tsl_var("i", TSL_I64);
    tsl_expr *mn = c64(ir_gen_int(g, -3, 3));
    if (g->nvars > 0 && ir_gen_int(g, 0, 3) == 0) mn = tsl_add(g->vars[ir_gen_int(g, 0, g->nvars - 1)], mn);
    int64_t e = ir_gen_int(g, -1, 5);
    tsl_expr *ext = c64(e);
    tsl_for_kind kind = (tsl_for_kind)ir_gen_int(g, 0, 3);
    if (ir_gen_int(g, 0, 3) == 0) {
      /* an extent only intervals can bound */
      ext = tsl_min(tsl_max(ir_gen_expr(g, 1), c64(0)), c64(4));
      kind = TSL_FOR_SERIAL;
    }
    g->vars[g->nvars++] = v;
    tsl_stmt *body = gen_stmt(s, depth - 1);
    g->nvars--;
    return tsl_for(v, mn, ext, kind, body);
  }
  if (r <= 5) {
    tsl_expr *cond = ir_gen_cond(g, 2);
    tsl_stmt *t = gen_stmt(s, depth - 1);
    tsl_stmt *f = ir_gen_int(g, 0, 1) ? gen_stmt(s, depth - 1) : NULL;
    return tsl_if(cond, t, f);
  }
  if (r == 6 && g->nvars < IR_GEN_MAX_VARS) {
    tsl_expr *v = tsl_var("t", TSL_I64);
    tsl_expr *val = ir_gen_int(g, 0, 2) ? ir_gen_expr(g, 2) : c64(ir_gen_int(g, -4, 4));
    g->vars[g->nvars++] = v;
    tsl_stmt *body = gen_stmt(s, depth - 1);
    g->nvars--;
    return tsl_let_stmt(v, val, body);
  }
  if (r == 7) {
    tsl_stmt *xs[3];
    int n = (int)ir_gen_int(g, 2, 3);
    for (int i = 0; i < n; i++) xs[i] = gen_stmt(s, depth - 1);
    return tsl_seq(n, xs);
  }
  tsl_expr *idx = wrapped_index(s, OUT_N);
  return tsl_store(s->out, 1, &idx, value(s), NULL);
}

static void test_pass_simplify_preserves_random_loop_nests(void) {
  int64_t n_in = IN_N, n_out = OUT_N;
  long compared = 0, mismatches = 0, broken = 0;
  for (int round = 0; round < 600 * ir_test_scale(); round++) {
    sgen s;
    ir_gen_init(&s.g, 777000 + (uint64_t)round, TSL_I64, 2);
    s.in = tsl_buffer_new("in", TSL_I64, 1, &n_in, TSL_BUF_ARG);
    s.out = tsl_buffer_new("out", TSL_I64, 1, &n_out, TSL_BUF_ARG);
    tsl_stmt *st = gen_stmt(&s, 4);
    tsl_stmt *simp = tsl_pass_simplify(st);
    for (int k = 0; k < 3; k++) {
      int64_t vals[IR_GEN_MAX_VARS];
      ir_gen_assign(&s.g, vals);
      mem a, b;
      a.in = b.in = s.in;
      a.out = b.out = s.out;
      for (int i = 0; i < IN_N; i++) a.in_data[i] = b.in_data[i] = ir_gen_int(&s.g, -50, 50);
      for (int i = 0; i < OUT_N; i++) a.out_data[i] = b.out_data[i] = -1000 - i;
      ref_env ea = {s.g.nfree, (const tsl_expr *const *)s.g.vars, vals, mem_data, &a};
      ref_env eb = {s.g.nfree, (const tsl_expr *const *)s.g.vars, vals, mem_data, &b};
      if (ref_exec_stmt(st, &ea) != REF_EVAL_OK) continue; /* undefined original: skip */
      compared++;
      ref_eval_status sb = ref_exec_stmt(simp, &eb);
      bool same = sb == REF_EVAL_OK && memcmp(a.out_data, b.out_data, sizeof a.out_data) == 0;
      if (sb != REF_EVAL_OK) broken++;
      else if (!same) mismatches++;
      if (!same && broken + mismatches <= 2) {
        char *x = tsl_stmt_to_string(st), *y = tsl_stmt_to_string(simp);
        fprintf(stderr, "\npass changed behaviour (status %d), vars %lld %lld\n--- original\n%s--- simplified\n%s", (int)sb,
                (long long)vals[0], (long long)vals[1], x, y);
        free(x);
        free(y);
      }
    }
  }
  CU_ASSERT_EQUAL(mismatches, 0);
  CU_ASSERT_EQUAL(broken, 0);
  CU_ASSERT_TRUE(compared > 1000);
}

void tsl_tests_ir_pass_random(void) {
  static const ir_test tests[] = {
      {"test_pass_simplify_preserves_random_loop_nests", test_pass_simplify_preserves_random_loop_nests},
      {NULL, NULL}};
  ir_add_suite("ir_pass_simplify_random", tests);
}
