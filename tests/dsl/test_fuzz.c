/* Mutation fuzzing of the DSL front-end: seeded random byte and token mutations of valid
 * texts (the docs examples, a schedule block among them, and the built-in operators). Every mutant must be refused
 * with an error or accepted; an accepted one is instantiated, checked and printed.
 * Nothing may crash or abort (run it under ASan/UBSan). Deterministic seeds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl_tests.h"
#include "ir/arena.h"

static const char *tokens[] = {"op", "where", "sum(", "max(", "min(", " if ", "@tag(\"x\")", "@output", "assert ",
                               "select(", "f32", "i64(", "u8", "bool", "[", "]", "(", ")", ",", ":", "=", "0x",
                               "1e", ".", "/*", "*/", "//", "\"", "inf", "nan", "true", "-", "?", "<=", "&&", "<<",
                               "%", "/", "0", "99999999999999999999", "-1", "N", "i", "k", " ", "\n", "a[i]", "2*",
                               /* schedule blocks (docs/dsl.md section 11) */
                               " schedule ", "knob ", "split(", "reorder([", "annotate(", "max = ", "divide = ",
                               "nparts = ", "i.outer", "[]"};

typedef struct buf {
  char *s;
  size_t n, cap;
} buf;

static void reserve(buf *b, size_t extra) {
  if (b->n + extra + 1 > b->cap) {
    b->cap = (b->n + extra + 1) * 2;
    b->s = realloc(b->s, b->cap);
  }
}

static void insert(buf *b, size_t at, const char *s, size_t n) {
  reserve(b, n);
  memmove(b->s + at + n, b->s + at, b->n - at);
  memcpy(b->s + at, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}

static void mutate(buf *b, uint64_t *seed) {
  size_t at = b->n ? (size_t)(dsl_rand(seed) % (b->n + 1)) : 0;
  switch (dsl_rand(seed) % 6) {
  case 0: /* replace a byte: printable, or any non-NUL byte now and then */
    if (b->n) {
      size_t i = at < b->n ? at : b->n - 1;
      uint64_t r = dsl_rand(seed);
      b->s[i] = (char)(r % 8 == 0 ? 1 + (r >> 8) % 255 : 32 + (r >> 8) % 95);
    }
    break;
  case 1: { /* delete a range */
    size_t len = 1 + (size_t)(dsl_rand(seed) % 8);
    if (at + len > b->n) len = b->n - at;
    memmove(b->s + at, b->s + at + len, b->n - at - len);
    b->n -= len;
    b->s[b->n] = '\0';
    break;
  }
  case 2: { /* duplicate a range somewhere else */
    if (!b->n) break;
    size_t from = (size_t)(dsl_rand(seed) % b->n), len = 1 + (size_t)(dsl_rand(seed) % 24);
    if (from + len > b->n) len = b->n - from;
    char tmp[32];
    memcpy(tmp, b->s + from, len);
    insert(b, at, tmp, len);
    break;
  }
  case 3:
  case 4: { /* insert a token */
    const char *t = tokens[dsl_rand(seed) % (sizeof tokens / sizeof tokens[0])];
    insert(b, at, t, strlen(t));
    break;
  }
  default: /* truncate */
    b->n = at;
    b->s[b->n] = '\0';
    break;
  }
}

typedef struct outcome {
  int parsed, refused, instantiated, inst_refused, checked;
} outcome;

static void exercise(const char *text, uint64_t *seed, outcome *o) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_dsl_module *m = NULL;
  tsl_status st = tsl_dsl_parse(text, "fuzz.dsl", &m);
  if (st != TSL_OK) {
    /* every refusal is a positioned parse error */
    CU_ASSERT_EQUAL(st, TSL_ERR_PARSE);
    CU_ASSERT_EQUAL(strncmp(tsl_last_error(), "fuzz.dsl:", 9), 0);
    o->refused++;
  } else {
    o->parsed++;
    for (int i = 0; i < tsl_dsl_module_count(m); i++) {
      const tsl_dsl_op *def = tsl_dsl_module_op(m, i);
      int n = tsl_dsl_op_ninputs(def);
      int64_t dims[16][8];
      const int64_t *shapes[16];
      int ndims[16];
      if (n > 16) continue;
      for (int k = 0; k < n; k++) {
        ndims[k] = tsl_dsl_op_input(def, k)->ndim;
        for (int d = 0; d < 8; d++) dims[k][d] = 1 + (int64_t)(dsl_rand(seed) % 5);
        shapes[k] = dims[k];
        if (ndims[k] > 8) ndims[k] = 8; /* a wrong rank is refused, which is fine */
      }
      tsl_dsl_param_value pv[32];
      int np = 0;
      for (int k = 0; k < tsl_dsl_op_nparams(def) && np < 32; k++) {
        const tsl_dsl_param_info *pi = tsl_dsl_op_param(def, k);
        if (pi->has_default && dsl_rand(seed) % 2) continue;
        pv[np++] = pi->kind == TSL_DSL_PARAM_INT ? tsl_dsl_int_param(pi->name, (int64_t)(dsl_rand(seed) % 4))
                                                 : tsl_dsl_float_param(pi->name, 0.5);
      }
      tsl_te_program *p = NULL;
      if (tsl_dsl_instantiate(def, n, shapes, ndims, np, pv, &p) != TSL_OK) {
        o->inst_refused++;
        continue;
      }
      o->instantiated++;
      if (tsl_te_check(p) == TSL_OK) o->checked++;
      char *printed = dsl_print_to_string(p);
      free(printed);
    }
    tsl_dsl_module_free(m);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

static void test_parser_mutation_fuzz_never_crashes(void) {
  int nex = 0;
  char **ex = dsl_doc_examples(&nex);
  int nops;
  const tsl_op_info *const *ops = tsl_op_list(&nops);
  const char *seeds[64];
  int nseeds = 0;
  for (int i = 0; i < nex && nseeds < 48; i++) seeds[nseeds++] = ex[i];
  for (int i = 0; i < nops && nseeds < 63; i++) seeds[nseeds++] = ops[i]->text;
  seeds[nseeds++] = dsl_kitchen_sink;
  outcome o = {0};
  uint64_t seed = 0x5eed;
  buf b = {0};
  int iterations = getenv("TSL_DSL_FUZZ_ITERATIONS") ? atoi(getenv("TSL_DSL_FUZZ_ITERATIONS")) : 5000;
  if (getenv("TSL_DSL_FUZZ_SEED")) seed = strtoull(getenv("TSL_DSL_FUZZ_SEED"), NULL, 0);
  for (int it = 0; it < iterations; it++) {
    const char *base = seeds[it % nseeds];
    b.n = 0;
    insert(&b, 0, base, strlen(base));
    int nmut = 1 + (int)(dsl_rand(&seed) % 4);
    for (int k = 0; k < nmut; k++) mutate(&b, &seed);
    exercise(b.s, &seed, &o);
  }
  free(b.s);
  dsl_free_strings(ex, nex);
  /* the mutants reach every phase */
  CU_ASSERT(o.refused > 500);
  CU_ASSERT(o.parsed > 100);
  CU_ASSERT(o.instantiated > 50);
  CU_ASSERT(o.inst_refused > 10);
  CU_ASSERT(o.checked > 20);
}

static void test_random_bytes_are_refused_cleanly(void) {
  uint64_t seed = 99;
  outcome o = {0};
  char text[200];
  for (int it = 0; it < 500; it++) {
    size_t n = (size_t)(dsl_rand(&seed) % (sizeof text - 1));
    for (size_t i = 0; i < n; i++) text[i] = (char)(1 + dsl_rand(&seed) % 255);
    text[n] = '\0';
    exercise(text, &seed, &o);
  }
  CU_ASSERT(o.refused >= 490);
}

/* Random well-formed expressions over operands of every class (typed f32/f64/i32/u8/bool
 * reads, axes, sizes, int/float parameters, literals): each is either refused by the
 * type rules with a positioned parse error or builds IR; the IR constructors (which abort
 * on operand types that do not match) must never be reached with a mismatch. */
static void gen_expr(buf *b, uint64_t *seed, int depth) {
  static const char *leaves[] = {"a[i]", "b[i]", "c[i]", "d[i]", "q[i]", "1", "2.5", "k", "s", "N", "i",
                                 "true", "inf", "-3", "0", "c[0]", "a[N - 1 - i]"};
  static const char *binops[] = {" + ", " - ", " * ", " / ", " % ", " < ", " <= ", " > ", " >= ", " == ", " != ",
                                 " && ", " || ", " & ", " | ", " ^ ", " << ", " >> "};
  static const char *unops[] = {"-", "!", "~", "+"};
  static const char *fn1[] = {"abs(", "exp(", "sqrt(", "isnan(", "popcount(", "bit_not(", "floor(", "round(",
                              "f32(", "i32(", "u8(", "f64(", "bool(", "i64("};
  static const char *fn2[] = {"max(", "min(", "pow(", "shl(", "shr(", "bit_and(", "bit_xor("};
  uint64_t r = dsl_rand(seed);
  if (depth == 0 || r % 4 == 0) {
    const char *l = leaves[(r >> 8) % (sizeof leaves / sizeof leaves[0])];
    insert(b, b->n, l, strlen(l));
    return;
  }
  const char *t;
  switch ((r >> 8) % 6) {
  case 0:
  case 1:
    insert(b, b->n, "(", 1);
    gen_expr(b, seed, depth - 1);
    t = binops[(r >> 16) % (sizeof binops / sizeof binops[0])];
    insert(b, b->n, t, strlen(t));
    gen_expr(b, seed, depth - 1);
    insert(b, b->n, ")", 1);
    return;
  case 2:
    t = unops[(r >> 16) % 4];
    insert(b, b->n, t, strlen(t));
    insert(b, b->n, "(", 1);
    gen_expr(b, seed, depth - 1);
    insert(b, b->n, ")", 1);
    return;
  case 3:
    t = fn1[(r >> 16) % (sizeof fn1 / sizeof fn1[0])];
    insert(b, b->n, t, strlen(t));
    gen_expr(b, seed, depth - 1);
    insert(b, b->n, ")", 1);
    return;
  case 4:
    t = fn2[(r >> 16) % (sizeof fn2 / sizeof fn2[0])];
    insert(b, b->n, t, strlen(t));
    gen_expr(b, seed, depth - 1);
    insert(b, b->n, ", ", 2);
    gen_expr(b, seed, depth - 1);
    insert(b, b->n, ")", 1);
    return;
  default:
    insert(b, b->n, (r >> 16) % 2 ? "select(" : "(", (r >> 16) % 2 ? 7 : 1);
    gen_expr(b, seed, depth - 1);
    insert(b, b->n, (r >> 16) % 2 ? ", " : " ? ", 2 + !((r >> 16) % 2));
    gen_expr(b, seed, depth - 1);
    insert(b, b->n, (r >> 16) % 2 ? ", " : " : ", 2 + !((r >> 16) % 2));
    gen_expr(b, seed, depth - 1);
    insert(b, b->n, ")", 1);
    return;
  }
}

static void test_random_expressions_typecheck_or_refuse(void) {
  uint64_t seed = 4242;
  if (getenv("TSL_DSL_FUZZ_SEED")) seed = strtoull(getenv("TSL_DSL_FUZZ_SEED"), NULL, 0);
  int iterations = getenv("TSL_DSL_FUZZ_ITERATIONS") ? atoi(getenv("TSL_DSL_FUZZ_ITERATIONS")) : 3000;
  const char *head = "op g(a: f32[N], b: i32[N], c: u8[N], d: f64[N], q: bool[N], k: int = 2, s: float = 0.5)\n"
                     "  out[i] = ";
  outcome o = {0};
  buf b = {0};
  for (int it = 0; it < iterations; it++) {
    b.n = 0;
    insert(&b, 0, head, strlen(head));
    gen_expr(&b, &seed, 1 + (int)(dsl_rand(&seed) % 5));
    insert(&b, b.n, "\n    where i < N\n", strlen("\n    where i < N\n"));
    exercise(b.s, &seed, &o);
  }
  free(b.s);
  CU_ASSERT(o.parsed > iterations / 10);
  CU_ASSERT(o.refused > iterations / 10);
}

void tsl_tests_dsl_fuzz(void) {
  CU_pSuite s = dsl_suite("dsl_fuzz");
  CU_add_test(s, "parser_mutation_fuzz_never_crashes", test_parser_mutation_fuzz_never_crashes);
  CU_add_test(s, "random_bytes_are_refused_cleanly", test_random_bytes_are_refused_cleanly);
  CU_add_test(s, "random_expressions_typecheck_or_refuse", test_random_expressions_typecheck_or_refuse);
}
