/* Malformed DSL texts and failing instantiations: each is refused with the right status,
 * the line:column of the offending token and the key part of the message. Positions
 * were counted by hand from the texts (columns count bytes from 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_test_paths.h"
#include "dsl_tests.h"

typedef struct bad_text {
  const char *text;
  int line, col;
  const char *message; /* must appear in the first line of the message */
} bad_text;

/* Checks "t.dsl:LINE:COL: error: ...message..." followed by the source line and a caret. */
void dsl_check_message(const char *msg, const char *text, int line, int col, const char *want) {
  int l = 0, c = 0, n = 0;
  if (sscanf(msg, "t.dsl:%d:%d: error: %n", &l, &c, &n) != 2 || n == 0) {
    fprintf(stderr, "\nmalformed message for:\n%s\n---\n%s\n", text, msg);
    CU_FAIL("message does not start with t.dsl:L:C: error:");
    return;
  }
  const char *nl = strchr(msg, '\n');
  size_t first_len = nl ? (size_t)(nl - msg) : strlen(msg);
  char first[1024];
  snprintf(first, sizeof first, "%.*s", (int)first_len, msg);
  bool ok = l == line && c == col && strstr(first, want) != NULL;
  if (!ok) fprintf(stderr, "\nexpected %d:%d '%s' for:\n%s\n---\n%s\n", line, col, want, text, msg);
  CU_ASSERT_EQUAL(l, line);
  CU_ASSERT_EQUAL(c, col);
  CU_ASSERT_PTR_NOT_NULL(strstr(first, want));
  /* the caret line: 2 spaces, then col-1 columns, then ^; on a long line the shown part
   * starts 100 columns before the caret, after "..." */
  const char *caret = nl ? strchr(nl + 1, '\n') : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(caret);
  caret++;
  size_t pad = strspn(caret, " \t");
  CU_ASSERT_EQUAL(pad, (size_t)(col - 1 > 100 ? 2 + 3 + 100 : 2 + col - 1));
  CU_ASSERT_EQUAL(caret[pad], '^');
}

static const bad_text parse_errors[] = {
    /* missing bracket */
    {"op f(a: f32[N, M) out[i] = a[i, 0]", 1, 17, "expected ',' or ']' in the shape (found ')')"},
    {"op f(a: f32[N]) out[i = a[i]", 1, 23, "expected ',' or ']' in the axis list (found '=')"},
    {"op f(a: f32[N]) out[i] = exp(a[i]", 1, 34, "expected ',' or ')' in the argument list (found end of input)"},
    /* unknown names */
    {"op f(a: f32[N]) out[i] = b[i]", 1, 26, "unknown tensor 'b'"},
    {"op f(a: f32[N]) out[i] = foo(a[i])", 1, 26, "unknown function 'foo'"},
    {"op f(a: f32[N]) out[i] = a[i] * z", 1, 33, "unknown name 'z'"},
    {"op f(a: f32[2*N], b: f32[N]) out[i] = b[i]", 1, 15, "unknown name 'N' (a size must first appear alone"},
    {"op f(a: f32[N]) out[i] = a where i < N", 1, 26, "tensor 'a' is used without indices"},
    /* wrong index count, bad dtype, missing ':' */
    {"op f(a: f32[N, M]) out[i] = a[i]", 1, 29, "wrong number of indices for 'a': 1 given, it has 2 dimensions"},
    {"op f(a: f33[N]) out[i] = a[i]", 1, 9, "unknown type"},
    {"op f(a: f16[N]) out[i] = a[i]", 1, 9, "dtype f16 is not supported"},
    {"op f(a f32[N]) out[i] = a[i]", 1, 8, "expected ':' after the parameter name (found identifier 'f32')"},
    /* trailing garbage, lexical errors */
    {"op f(a: f32[N]) out[i] = a[i] )", 1, 31, "expected a stage, 'assert', 'op' or end of input (found ')')"},
    {"f(a: f32[N]) out[i] = a[i]", 1, 1, "expected 'op' (found identifier 'f')"},
    {"op f(a: f32[N]) out[i] = a[i] /* oops", 1, 31, "unterminated comment"},
    {"op f(a: f32[N]) out[i] = a[i] $ 2", 1, 31, "unexpected character '$'"},
    {"op f(a: f32[N])\n  @tag(\"elem out[i] = a[i]", 2, 8, "unterminated string"},
    {"op f(a: f32[N]) out[i] = a[i] * 99999999999999999999", 1, 33, "integer literal does not fit in 64 bits"},
    {"op f(a: f32[N]) out[i] = a[i] * 3x", 1, 33, "malformed number"},
    /* structure */
    {"op f(a: f32[N])", 1, 16, "expected a stage such as out[i] = ... (found end of input)"},
    {"op f(a: f32[N]) out[i] a[i]", 1, 24, "expected '=' after the stage's axes (found identifier 'a')"},
    {"op f(a: f32[N]) out[i] = a[i] * )", 1, 33, "expected an expression (found ')')"},
    {"op f(a: f32[N]) out[i] = f64(a[i], 1)", 1, 34, "expected ')' to end the cast"},
    {"op f(a: f32[N]) @inline out[i] = a[i]", 1, 18, "unknown attribute"},
    {"op f(k: int = 1.5) out[i] = 0 where i < 2", 1, 15, "the default of int parameter k must be an integer"},
    /* reductions */
    {"op f(a: f32[N]) out[i] = 1.0 + sum(k: a[k])", 1, 32, "a reduction (sum) must be the whole body of a stage"},
    {"op f(q: bool[N]) out[i] = sum(k: q[k])", 1, 27, "sum cannot combine bool values"},
    /* duplicates and reserved words */
    {"op f(a: f32[N], a: f32[N]) out[i] = a[i]", 1, 17, "duplicate parameter 'a' (already declared at 1:6)"},
    {"op f(a: f32[N]) out[i, i] = a[i]", 1, 24, "duplicate name 'i' (already declared at 1:21)"},
    {"op f(a: f32[N])\n  s[i] = a[i]\n  s[j] = a[j]", 3, 3, "duplicate name 's' (already declared at 2:3)"},
    {"op f(a: f32[N]) out[i] = sum(i: a[i])", 1, 30, "duplicate name 'i' (already declared at 1:21)"},
    {"op f() x[i] = 0 where i < 2\nop f() y[i] = 0 where i < 2", 2, 4, "duplicate op 'f' (already defined at 1:4)"},
    {"op f(exp: int) out[i] = 0 where i < 4", 1, 6, "'exp' is a reserved word and cannot name a parameter"},
    /* extents and where clauses */
    {"op f(a: f32[N]) out[i, j] = a[i]", 1, 24, "cannot infer the extent of axis j of stage out (add 'where j < EXTENT')"},
    {"op f(a: f32[N]) out[i] = sum(k: a[i] * 2.0)", 1, 30, "cannot infer the extent of reduction variable k of stage out"},
    {"op f(a: f32[N]) out[i] = a[i] where j < N", 1, 37, "'j' in the where clause is not an axis or reduction variable of stage out"},
    {"op f(a: f32[N]) out[i, j] = a[i] where j < i", 1, 44, "the bound of j must be an integer constant expression of sizes and parameters (found i64)"},
    {"op f(a: f32[N]) out[i] = a[i] where 1 <= i < N", 1, 42, "axis i of a stage starts at 0"},
    {"op f(a: f32[N])\n  s[i] = t[i]\n  t[i] = a[i]", 2, 10, "stage 't' is defined after this one"},
    /* types */
    {"op f(a: f32[N], b: i32[N]) out[i] = a[i] + b[i]", 1, 42, "type mismatch in '+': f32 and i32"},
    {"op f(a: f32[N]) out[i] = a[1.5] where i < N", 1, 28, "index 0 of 'a' must be an integer (found float constant)"},
    {"op f(a: f32[N]) out[i] = a[i] % 2.0", 1, 31, "'%' needs int or uint operands (found f32)"},
    {"op f(q: bool[N]) out[i] = q[i] + q[i]", 1, 32, "'+' needs int, uint or float operands (found bool)"},
    {"op f(a: f32[N]) out[i]: f64 = a[i]", 1, 31, "stage out is declared f64 but its body has type f32"},
    {"op f(a: i32[N]) out[i] = a[i] + 0.5", 1, 33, "a float constant cannot adapt to i32"},
    {"op f(a: f32[N]) out[i] = select(a[i], a[i], 0.0)", 1, 33, "the condition of select must be bool (found f32)"},
    {"op f(a: f32[N]) out[i] = select(1, a[i], 0.0)", 1, 33, "the condition of select must be bool (found integer constant)"},
    {"op f(a: f32[N]) out[i] = select(a[i] > 0.0, a[i])", 1, 26, "select takes 3 arguments (found 2)"},
    {"op f(a: i32[N]) out[i] = exp(a[i])", 1, 26, "exp() needs float operands (found i32)"},
    {"op f(a: f32[N], s: int) assert s + 1 out[i] = a[i]", 1, 32, "an assert needs a constant bool condition"},
};

static void test_malformed_texts_report_position_and_reason(void) {
  for (size_t i = 0; i < sizeof parse_errors / sizeof parse_errors[0]; i++) {
    const bad_text *b = &parse_errors[i];
    tsl_dsl_module *m = (tsl_dsl_module *)&m;
    tsl_status st = tsl_dsl_parse(b->text, "t.dsl", &m);
    if (st != TSL_ERR_PARSE) fprintf(stderr, "\nnot refused as a parse error:\n%s\n", b->text);
    CU_ASSERT_EQUAL(st, TSL_ERR_PARSE);
    CU_ASSERT_PTR_NULL(m);
    if (st == TSL_ERR_PARSE) dsl_check_message(tsl_last_error(), b->text, b->line, b->col, b->message);
    if (st == TSL_OK) tsl_dsl_module_free(m);
  }
  CU_ASSERT(sizeof parse_errors / sizeof parse_errors[0] >= 25);
}

static void test_deep_nesting_is_an_error_not_a_crash(void) {
  size_t depth = 5000;
  char *text = malloc(depth * 2 + 64);
  size_t o = (size_t)sprintf(text, "op f() out[i] = ");
  for (size_t k = 0; k < depth; k++) text[o++] = '(';
  text[o++] = '1';
  for (size_t k = 0; k < depth; k++) text[o++] = ')';
  sprintf(text + o, " where i < 2");
  tsl_dsl_module *m;
  CU_ASSERT_EQUAL(tsl_dsl_parse(text, "t.dsl", &m), TSL_ERR_PARSE);
  /* the body is depth 1, the k-th '(' opens depth k + 1: the 200th '(' (column 16 + 200)
   * opens depth 201 at the token after it */
  dsl_check_message(tsl_last_error(), "deep", 1, 17 + 200, "nested too deeply");
  /* unary operators nest too */
  o = (size_t)sprintf(text, "op f() out[i] = ");
  for (size_t k = 0; k < depth; k++) text[o++] = '-';
  sprintf(text + o, "1 where i < 2");
  CU_ASSERT_EQUAL(tsl_dsl_parse(text, "t.dsl", &m), TSL_ERR_PARSE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "nested too deeply"));
  free(text);
}

/* The example message of docs/dsl.md section 9 is exactly what the parser prints. */
static void test_docs_error_example_is_exact(void) {
  const char *text = "op conv(data: f32[N, C, H, W], weight: f32[K, C, R, S])\n"
                     "  padded[n, c, y, x] = data[n, c, y, x]\n"
                     "  out[n, k, y, x] = sum(c, r, s: padded[n, c, y + r, x + s] * dat[k, c, r, s])\n";
  tsl_dsl_module *m;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(text, "conv.dsl", &m), TSL_ERR_PARSE);
  const char *want = "conv.dsl:3:63: error: unknown tensor 'dat'\n"
                     "    out[n, k, y, x] = sum(c, r, s: padded[n, c, y + r, x + s] * dat[k, c, r, s])\n"
                     "                                                                ^";
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), want);
  char *doc = dsl_read_file(TSL_DSL_DOC_PATH);
  if (doc) {
    CU_ASSERT_PTR_NOT_NULL(strstr(doc, want));
    free(doc);
  }
}

/* ---- instantiation ---- */

typedef struct bad_inst {
  const char *text;
  int ninputs;
  int ndims[2];
  int64_t shapes[2][4];
  int nparams;
  tsl_dsl_param_value params[2];
  int line, col; /* 0: a message without position */
  const char *message;
} bad_inst;

static const bad_inst inst_errors[] = {
    {"op g(data: f32[N, C], weight: f32[K, C])\n  out[n, k] = sum(c: data[n, c] * weight[k, c])", 2, {2, 2},
     {{2, 3}, {4, 5}}, 0, {{0}}, 1, 38, "size C is 5 here (weight, dimension 1) but 3 at 1:19 (data, dimension 1)"},
    {"op g(a: f32[N], k: int) out[i] = a[0] where i < N - k", 1, {1}, {{3}}, 1, {{"k", TSL_DSL_PARAM_INT, 3, 0}},
     1, 45, "the extent of axis i of stage out is 0 (must be >= 1)"},
    {"op g(a: f32[N]) out[i] = sum(r: a[r]) where i < 1, -2 <= r < -6 + N", 1, {1}, {{3}}, 0, {{0}}, 1, 58,
     "the extent of reduction variable r of stage out is -1 (must be >= 1)"},
    {"op g(a: f32[N]) out[i] = a[N] where i < 1", 1, {1}, {{4}}, 0, {{0}}, 1, 28,
     "index 4 is out of range for dimension 0 of a (extent 4)"},
    {"op g(a: f32[N]) out[i] = a[0 - 1] where i < 1", 1, {1}, {{4}}, 0, {{0}}, 1, 28,
     "index -1 is out of range for dimension 0 of a"},
    {"op g(a: f32[N], k: int) out[i] = a[i]", 1, {1}, {{4}}, 0, {{0}}, 1, 17,
     "missing value for parameter 'k' (it has no default)"},
    {"op g(a: f32[N, 2*N]) out[i] = a[i, 0]", 1, {2}, {{3, 5}}, 0, {{0}}, 1, 16,
     "dimension 1 of input a must be 6 (f32[N, 2*N]), got 5"},
    {"op g(a: f32[N, M]) out[i] = a[i, 0]", 1, {3}, {{3, 5, 1}}, 0, {{0}}, 1, 6,
     "input a is f32[N, M] (2 dimensions), got a shape of rank 3"},
    {"op g(a: f32[N]) out[i] = a[i]", 1, {1}, {{0}}, 0, {{0}}, 1, 6, "input a: extent 0 of dimension 0 must be >= 1"},
    {"op g(a: f32[N], s: int = 0) assert s >= 1, \"s must be >= 1\" out[i] = a[i]", 1, {1}, {{4}}, 0, {{0}}, 1, 29,
     "assertion failed: s must be >= 1 (s >= 1)"},
    {"op g(a: f32[N], s: int) out[i] = a[i] where i < N / s", 1, {1}, {{4}}, 1, {{"s", TSL_DSL_PARAM_INT, 0, 0}}, 1,
     51, "division by zero in a constant expression"},
    {"op g(a: f32[N], b: f32[M]) out[i] = a[i] + b[i]", 2, {1, 1}, {{3}, {4}}, 0, {{0}}, 1, 46,
     "axis i of stage out: extent 4 from b (dimension 0) differs from 3 from a at 1:39"},
    {"op g(a: u8[N]) out[i] = a[i] + 300", 1, {1}, {{4}}, 0, {{0}}, 1, 32, "constant 300 does not fit in u8"},
    {"op g(a: i32[N], s: int) out[i] = a[i] / (s - 2)", 1, {1}, {{4}}, 1, {{"s", TSL_DSL_PARAM_INT, 2, 0}}, 1, 39,
     "division by zero"},
    {"op g(a: f32[N], k: int = 1) out[i] = a[i]", 1, {1}, {{4}}, 1, {{"zz", TSL_DSL_PARAM_INT, 1, 0}}, 0, 0,
     "no parameter named 'zz'"},
    {"op g(a: f32[N], k: int = 1) out[i] = a[i]", 1, {1}, {{4}}, 1, {{"k", TSL_DSL_PARAM_FLOAT, 0, 1.5}}, 0, 0,
     "parameter 'k' is an int, got a float value"},
    {"op g(a: f32[N], k: int = 1) out[i] = a[i]", 1, {1}, {{4}}, 2,
     {{"k", TSL_DSL_PARAM_INT, 1, 0}, {"k", TSL_DSL_PARAM_INT, 2, 0}}, 0, 0, "parameter 'k' given twice"},
    {"op g(a: f32[N]) out[i] = a[i]", 2, {1, 1}, {{4}, {4}}, 0, {{0}}, 0, 0, "2 input shapes given, the op has 1 inputs"},
};

static void test_instantiate_errors_report_position_and_reason(void) {
  for (size_t i = 0; i < sizeof inst_errors / sizeof inst_errors[0]; i++) {
    const bad_inst *b = &inst_errors[i];
    tsl_dsl_module *m = dsl_parse_ok(b->text);
    if (!m) continue;
    const tsl_dsl_op *def = tsl_dsl_module_op(m, 0);
    const int64_t *shapes[2] = {b->shapes[0], b->shapes[1]};
    tsl_te_program *p = (tsl_te_program *)&p;
    tsl_status st = tsl_dsl_instantiate(def, b->ninputs, shapes, b->ndims, b->nparams, b->params, &p);
    CU_ASSERT_EQUAL(st, TSL_ERR_INVALID);
    CU_ASSERT_PTR_NULL(p);
    if (st == TSL_ERR_INVALID) {
      if (b->line) {
        dsl_check_message(tsl_last_error(), b->text, b->line, b->col, b->message);
      } else if (!strstr(tsl_last_error(), b->message)) {
        fprintf(stderr, "\nexpected '%s', got '%s'\n", b->message, tsl_last_error());
        CU_FAIL("instantiate message");
      }
    } else {
      fprintf(stderr, "\nnot refused: %s\n", b->text);
    }
    tsl_dsl_module_free(m);
  }
}

/* Reads that may leave their tensor (tsl_te_check's interval analysis, after instantiation
 * succeeded) are located at the index expression of the dimension that leaves. */
static const bad_inst check_errors[] = {
    {"op g(a: f32[N]) out[i] = a[i] + a[i + 1]", 1, {1}, {{10}}, 0, {{0}}, 1, 35,
     "out: read of a[dim 0] may reach [1, 10] outside [0, 10)"},
    {"op g(a: f32[N, M]) out[i, j] = a[i, j] * a[i,  j - 1]", 1, {2}, {{3, 5}}, 0, {{0}}, 1, 48,
     "out: read of a[dim 1] may reach [-1, 3] outside [0, 5)"},
    {"op g(x: f32[N, H], w: f32[R])\n  y[n, h] = sum(r: x[n, h + r] * w[r]) where h < H", 2, {2, 1}, {{1, 8}, {3}}, 0, {{0}}, 2,
     25, "y: read of x[dim 1] may reach [0, 9] outside [0, 8)"},
    {"op g(a: f32[N], k: int)\n  out[i] = select(i < 3, a[i * k], 0.0) where i < N", 1, {1}, {{6}}, 1,
     {{"k", TSL_DSL_PARAM_INT, 3, 0}}, 2, 28, "out: read of a[dim 0] may reach [0, 6] outside [0, 6)"},
    {"op g(a: f32[N])\n  t[i] = a[i] * 2.0\n  out[i] = t[i + 2] where i < N", 1, {1}, {{4}}, 0, {{0}}, 3, 14,
     "out: read of t[dim 0] may reach [2, 5] outside [0, 4)"},
};

static void test_te_check_errors_are_located(void) {
  for (size_t i = 0; i < sizeof check_errors / sizeof check_errors[0]; i++) {
    const bad_inst *b = &check_errors[i];
    tsl_dsl_module *m = dsl_parse_ok(b->text);
    if (!m) continue;
    const tsl_dsl_op *def = tsl_dsl_module_op(m, 0);
    const int64_t *shapes[2] = {b->shapes[0], b->shapes[1]};
    tsl_te_program *p = NULL;
    tsl_status st = tsl_dsl_instantiate(def, b->ninputs, shapes, b->ndims, b->nparams, b->params, &p);
    if (st != TSL_OK) fprintf(stderr, "\ncase %zu: %s\n", i, tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    tsl_dsl_module_free(m); /* the program outlives its module: its message quotes a copy */
    CU_ASSERT_EQUAL(tsl_te_check(p), TSL_ERR_INVALID);
    dsl_check_message(tsl_last_error(), b->text, b->line, b->col, b->message);
  }
}

void tsl_tests_dsl_errors(void) {
  CU_pSuite s = dsl_suite("dsl_errors");
  CU_add_test(s, "malformed_texts_report_position_and_reason", test_malformed_texts_report_position_and_reason);
  CU_add_test(s, "deep_nesting_is_an_error_not_a_crash", test_deep_nesting_is_an_error_not_a_crash);
  CU_add_test(s, "docs_error_example_is_exact", test_docs_error_example_is_exact);
  CU_add_test(s, "instantiate_errors_report_position_and_reason", test_instantiate_errors_report_position_and_reason);
  CU_add_test(s, "te_check_errors_are_located", test_te_check_errors_are_located);
}
