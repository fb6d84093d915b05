/* The DSL text front-end accepts every construct of the documented grammar and gives it
 * the documented meaning (docs/dsl.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl_tests.h"

/* Instantiates every op of a module: each input dimension = dim (or the given shapes),
 * parameters without a default = 1 (int) or 0.5 (float). */
static void instantiate_all(const tsl_dsl_module *m, int64_t dim, const int64_t *const *given, bool check_roundtrip) {
  for (int i = 0; i < tsl_dsl_module_count(m); i++) {
    const tsl_dsl_op *def = tsl_dsl_module_op(m, i);
    int n = tsl_dsl_op_ninputs(def);
    int64_t dims[8][8];
    const int64_t *shapes[8];
    int ndims[8];
    for (int k = 0; k < n; k++) {
      ndims[k] = tsl_dsl_op_input(def, k)->ndim;
      for (int d = 0; d < 8; d++) dims[k][d] = dim;
      shapes[k] = given ? given[k] : dims[k];
    }
    tsl_dsl_param_value pv[16];
    int np = 0;
    for (int k = 0; k < tsl_dsl_op_nparams(def) && np < 16; k++) {
      const tsl_dsl_param_info *pi = tsl_dsl_op_param(def, k);
      if (pi->has_default) continue;
      pv[np++] = pi->kind == TSL_DSL_PARAM_INT ? tsl_dsl_int_param(pi->name, 1) : tsl_dsl_float_param(pi->name, 0.5);
    }
    tsl_te_program *p = NULL;
    if (tsl_dsl_instantiate(def, n, shapes, ndims, np, pv, &p) != TSL_OK) {
      fprintf(stderr, "\n%s: %s\n", tsl_dsl_op_name(def), tsl_last_error());
      CU_FAIL("example does not instantiate");
      continue;
    }
    if (tsl_te_check(p) != TSL_OK) {
      fprintf(stderr, "\n%s: %s\n", tsl_dsl_op_name(def), tsl_last_error());
      CU_FAIL("example fails te_check");
    }
    if (!check_roundtrip) continue;
    /* printed text parses and instantiates to the same program (same text again) */
    char *text = dsl_print_to_string(p);
    tsl_dsl_module *m2 = dsl_parse_ok(text);
    if (m2) {
      const tsl_dsl_op *d2 = tsl_dsl_module_find(m2, tsl_dsl_op_name(def));
      CU_ASSERT_PTR_NOT_NULL_FATAL(d2);
      const int64_t *shapes2[8];
      int ndims2[8];
      for (int k = 0; k < p->ninputs; k++) {
        shapes2[k] = p->inputs[k]->buf->shape;
        ndims2[k] = p->inputs[k]->buf->ndim;
      }
      tsl_te_program *p2 = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(d2, p->ninputs, shapes2, ndims2, 0, NULL, &p2), TSL_OK);
      char *text2 = dsl_print_to_string(p2);
      CU_ASSERT_STRING_EQUAL(text, text2);
      free(text2);
      tsl_dsl_module_free(m2);
    }
    free(text);
  }
}

static void test_every_docs_example_parses_instantiates_and_round_trips(void) {
  int n;
  char **ex = dsl_doc_examples(&n);
  if (!ex) {
    fprintf(stderr, "\n  (skipped: docs/dsl.md not found)\n");
    return;
  }
  CU_ASSERT(n >= 6);
  for (int i = 0; i < n; i++) {
    tsl_dsl_module *m = dsl_parse_ok(ex[i]);
    if (!m) {
      fprintf(stderr, "docs example %d:\n%s\n", i, ex[i]);
      continue;
    }
    CU_ASSERT(tsl_dsl_module_count(m) >= 1);
    /* the last example is printed text: its shapes are constants */
    const int64_t a[] = {64, 32}, b[] = {32, 48};
    const int64_t *printed_shapes[] = {a, b};
    instantiate_all(m, 6, i == n - 1 ? printed_shapes : NULL, true);
    tsl_dsl_module_free(m);
  }
  dsl_free_strings(ex, n);
}

/* Every lexical and grammatical construct at least once. */
const char dsl_kitchen_sink[] =
    "/* block comment\n   over lines */\n"
    "op sink(a: f32[N, 2*N], b: i64[N], u: u8[4], q: bool[N], w: f64[N, N],  // trailing comment\n"
    "        i1: i8[3], i2: i16[3], i3: i32[3], u2: u16[3], u3: u32[3], u4: u64[3],\n"
    "        k: int = -2, s: float = -0.25, t: float = 3, e: float = 1e-3)\n"
    "  assert N >= 1\n"
    "  assert k < 0 && s < 0.0, \"k and s negative\"\n"
    "  @tag(\"elemwise\") @output\n"
    "  x[i, j]: f32 = -a[i, j] + +a[i, j] * .5 - 1. / 2e1 + 0x10 + inf * 0.0 + (nan != nan ? 1.0 : 0.0)\n"
    "  lit[i] = 1.5\n"
    "    where i < 3\n"
    "  ints[i] = ~b[i] << 2 >> 1 & 0xF | b[i] ^ 3 + b[i] % 4 / 2\n"
    "  cmp[i] = b[i] < 1 || b[i] <= 2 && b[i] > 3 || b[i] >= 4 && b[i] == 5 || b[i] != 6 && !q[i] && true || false\n"
    "  calls[i] = select(q[i], exp(a[i, 0]), log(a[i, 0])) + sqrt(a[i, 1]) + tanh(a[i, 0]) + erf(a[i, 1])\n"
    "             + floor(a[i, 0])\n"
    "             + ceil(a[i, 0]) + round(a[i, 0]) + pow(a[i, 0], 2.0) + fma(a[i, 0], a[i, 1], 1.0) + abs(a[i, 0])\n"
    "             + max(a[i, 0], a[i, 1], 0.0) + min(a[i, 0], 1.0) + f32(isnan(a[i, 0]))\n"
    "  bits[i] = popcount(b[i]) + shl(b[i], 1) + shr(b[i], 1) + bit_and(b[i], 1) + bit_or(b[i], 2) + bit_xor(b[i], 3)\n"
    "            + bit_not(b[i]) + i64(u[0]) + i64(i1[1]) + i64(i2[2]) + i64(i3[0]) + i64(u2[0]) + i64(u3[0]) + i64(u4[0])\n"
    "  red_min[i] = min(r: a[i, r])\n"
    "  red_max[i]: f64 = max(r, c: w[r, c] if r != i && c >= 0)\n"
    "    where i < N\n"
    "  red_lo[i] = sum(r: f64(a[i, r + 1]) * s * t * e)\n"
    "    where -1 <= r < 2*N - 1 + k + 2\n"
    "  consts[i] = i + k + (N - 1) / 2 * 2 % 3 - 0x1\n"
    "    where i < N\n"
    "  @output\n"
    "  last[i, j] = x[i, j] + f32(lit[0]) + f32(ints[i]) + f32(cmp[i]) + calls[i] + f32(bits[i]) + red_min[i]\n"
    "               + f32(red_max[i]) + f32(red_lo[i] > 0.0) + f32(consts[i])\n"
    "\n"
    "op second() out[i] = 0 where i < 4\n";

static void test_kitchen_sink_covers_every_construct(void) {
  tsl_dsl_module *m = dsl_parse_ok(dsl_kitchen_sink);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(tsl_dsl_module_count(m), 2);
  const tsl_dsl_op *d = tsl_dsl_module_find(m, "sink");
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  CU_ASSERT_EQUAL(tsl_dsl_op_ninputs(d), 11);
  CU_ASSERT_STRING_EQUAL(tsl_dsl_op_input(d, 0)->type_text, "f32[N, 2*N]");
  CU_ASSERT_TRUE(tsl_type_eq(tsl_dsl_op_input(d, 10)->dtype, TSL_U64));
  CU_ASSERT_EQUAL(tsl_dsl_op_nparams(d), 4);
  const tsl_dsl_param_info *k = tsl_dsl_op_param(d, 0);
  CU_ASSERT_STRING_EQUAL(k->name, "k");
  CU_ASSERT_TRUE(k->has_default);
  CU_ASSERT_EQUAL(k->default_value.i, -2);
  CU_ASSERT_DOUBLE_EQUAL(tsl_dsl_op_param(d, 1)->default_value.f, -0.25, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(tsl_dsl_op_param(d, 2)->default_value.f, 3.0, 0.0);
  CU_ASSERT_PTR_NULL(tsl_dsl_module_find(m, "nope"));
  CU_ASSERT_PTR_NULL(tsl_dsl_module_op(m, 2));

  /* N = 3 (a: 3 x 6); other inputs by their own shapes */
  const int64_t a[] = {3, 6}, b[] = {3}, u[] = {4}, q[] = {3}, w[] = {3, 3}, three[] = {3};
  const int64_t *shapes[] = {a, b, u, q, w, three, three, three, three, three, three};
  const int ndims[] = {2, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(d, 11, shapes, ndims, 0, NULL, &p), TSL_OK);
  CU_ASSERT_EQUAL(p->noutputs, 2);
  CU_ASSERT_STRING_EQUAL(p->outputs[0]->op->name, "x");
  CU_ASSERT_STRING_EQUAL(p->outputs[0]->op->tag, "elemwise");
  CU_ASSERT_STRING_EQUAL(p->outputs[1]->op->name, "last");
  CU_ASSERT_EQUAL(tsl_te_check(p), TSL_OK);
  int n;
  tsl_te_op **stages = tsl_te_program_stages(p, &n);
  CU_ASSERT_EQUAL(n, 11);
  for (int i = 0; i < n; i++) {
    const tsl_te_op *op = stages[i];
    if (strcmp(op->name, "red_lo") == 0) {
      /* -1 <= r < 2*N - 1 + k + 2 = 5 */
      CU_ASSERT_EQUAL(op->reduce_axis[0].min, -1);
      CU_ASSERT_EQUAL(op->reduce_axis[0].extent, 6);
      CU_ASSERT_TRUE(tsl_type_eq(op->output->buf->dtype, TSL_F64));
    }
    if (strcmp(op->name, "lit") == 0) CU_ASSERT_TRUE(tsl_type_eq(op->output->buf->dtype, TSL_F32));
    if (strcmp(op->name, "ints") == 0) CU_ASSERT_TRUE(tsl_type_eq(op->output->buf->dtype, TSL_I64));
    if (strcmp(op->name, "cmp") == 0) CU_ASSERT_TRUE(tsl_type_eq(op->output->buf->dtype, TSL_BOOL));
    if (strcmp(op->name, "red_max") == 0) {
      CU_ASSERT_EQUAL(op->nreduce, 2);
      CU_ASSERT_PTR_NOT_NULL(op->body->reduce.condition);
    }
  }
  tsl_dsl_module_free(m);
}

/* Literal promotion (docs section 6): constants adapt to the typed operand. */
static void test_literals_adapt_to_typed_operand(void) {
  tsl_te_program *p = dsl_instantiate_text("op t(a: f64[N], b: u8[N]) @output x[i] = a[i] * 2 + 0.5\n"
                                           "@output y[i] = b[i] + 200\n@output z[i] = select(a[i] > 0.0, a[i], 0.0)\n",
                                           "t", 4, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  tsl_expr *x = p->outputs[0]->op->body; /* (a*2) + 0.5 */
  CU_ASSERT_EQUAL(x->kind, TSL_E_ADD);
  CU_ASSERT_EQUAL(x->bin.b->kind, TSL_E_FLOAT);
  CU_ASSERT_TRUE(tsl_type_eq(x->bin.b->type, TSL_F64));
  CU_ASSERT_EQUAL(x->bin.a->bin.b->kind, TSL_E_FLOAT); /* the integer 2 became 2.0 */
  CU_ASSERT_DOUBLE_EQUAL(x->bin.a->bin.b->float_value, 2.0, 0.0);
  tsl_expr *y = p->outputs[1]->op->body;
  CU_ASSERT_TRUE(tsl_type_eq(y->type, TSL_U8));
  CU_ASSERT_EQUAL(y->bin.b->int_value, 200);
  tsl_expr *z = p->outputs[2]->op->body;
  CU_ASSERT_EQUAL(z->kind, TSL_E_SELECT);
  CU_ASSERT_TRUE(tsl_type_eq(z->select.f->type, TSL_F64));
}

/* Integer / and % on constants are floor division and modulo, as in ir/ir.h. */
static void test_constant_division_is_floor(void) {
  tsl_te_program *p = dsl_instantiate_text("op t(a: f32[N]) out[i] = a[0] where i < (0 - 7) / 2 + 10 + (0 - 7) % 2 * 100\n",
                                           "t", 4, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  /* (-7)/2 = -4, (-7)%2 = 1: 6 + 100 */
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[0], 106);
}

/* `-x` on floats is x * -1 (keeps -0.0); on integers 0 - x. */
static void test_unary_minus_forms(void) {
  tsl_te_program *p = dsl_instantiate_text("op t(a: f32[N], b: i32[N]) @output x[i] = -a[i]\n@output y[i] = -b[i]\n",
                                           "t", 4, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  tsl_expr *x = p->outputs[0]->op->body;
  CU_ASSERT_EQUAL(x->kind, TSL_E_MUL);
  CU_ASSERT_DOUBLE_EQUAL(x->bin.b->float_value, -1.0, 0.0);
  tsl_expr *y = p->outputs[0 + 1]->op->body;
  CU_ASSERT_EQUAL(y->kind, TSL_E_SUB);
  CU_ASSERT_EQUAL(y->bin.a->int_value, 0);
}

/* C precedence and associativity: a - b - c is (a - b) - c, * binds tighter than +,
 * ?: associates to the right. */
static void test_precedence_and_associativity(void) {
  tsl_te_program *p = dsl_instantiate_text(
      "op t(a: i32[N]) x[i] = a[0] - a[1] - a[2] * a[3] + (a[1] < a[2] ? 1 : a[2] < a[3] ? 2 : 3) where i < 1\n", "t", 4, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  tsl_expr *e = p->outputs[0]->op->body;
  CU_ASSERT_EQUAL_FATAL(e->kind, TSL_E_ADD);
  tsl_expr *l = e->bin.a; /* (a0 - a1) - a2*a3 */
  CU_ASSERT_EQUAL(l->kind, TSL_E_SUB);
  CU_ASSERT_EQUAL(l->bin.a->kind, TSL_E_SUB);
  CU_ASSERT_EQUAL(l->bin.b->kind, TSL_E_MUL);
  tsl_expr *c = e->bin.b;
  CU_ASSERT_EQUAL(c->kind, TSL_E_SELECT);
  CU_ASSERT_EQUAL(c->select.f->kind, TSL_E_SELECT); /* right associative */
}

/* Extents: `where` first, else a bare index use; all bare uses must agree. */
static void test_extent_inference_rules(void) {
  tsl_te_program *p = dsl_instantiate_text("op t(a: f32[M, K], b: f32[K]) out[i] = sum(k: a[i, k] * b[k])\n", "t", 5, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[0], 5);
  CU_ASSERT_EQUAL(p->outputs[0]->op->reduce_axis[0].extent, 5);
  /* where overrides the bare use */
  p = dsl_instantiate_text("op t(a: f32[M]) out[i] = a[i] where i < M - 2\n", "t", 5, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[0], 3);
  /* a stage's extent comes from an earlier stage's shape */
  p = dsl_instantiate_text("op t(a: f32[M]) s[i] = a[i + 1] where i < M - 1\n t2[j] = s[j] * 2.0\n", "t", 5, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[0], 4);
  CU_ASSERT_EQUAL(tsl_te_check(p), TSL_OK);
}

static void test_parse_rejects_null_arguments(void) {
  tsl_dsl_module *m = (tsl_dsl_module *)1;
  CU_ASSERT_EQUAL(tsl_dsl_parse(NULL, "x", &m), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_EQUAL(tsl_dsl_parse("", NULL, NULL), TSL_ERR_INVALID);
  /* an empty text (or only comments) is an empty module */
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse("  // nothing\n/* */", NULL, &m), TSL_OK);
  CU_ASSERT_EQUAL(tsl_dsl_module_count(m), 0);
  tsl_dsl_module_free(m);
}

void tsl_tests_dsl_parser(void) {
  CU_pSuite s = dsl_suite("dsl_parser");
  CU_add_test(s, "every_docs_example_parses_instantiates_and_round_trips",
              test_every_docs_example_parses_instantiates_and_round_trips);
  CU_add_test(s, "kitchen_sink_covers_every_construct", test_kitchen_sink_covers_every_construct);
  CU_add_test(s, "literals_adapt_to_typed_operand", test_literals_adapt_to_typed_operand);
  CU_add_test(s, "constant_division_is_floor", test_constant_division_is_floor);
  CU_add_test(s, "unary_minus_forms", test_unary_minus_forms);
  CU_add_test(s, "precedence_and_associativity", test_precedence_and_associativity);
  CU_add_test(s, "extent_inference_rules", test_extent_inference_rules);
  CU_add_test(s, "parse_rejects_null_arguments", test_parse_rejects_null_arguments);
}
