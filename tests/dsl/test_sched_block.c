/* Schedule blocks (dsl/sched_block.h, docs/dsl.md section 11): what a good block parses
 * to, and every malformed or inconsistent block refused at the line:column of the
 * offending knob or use (positions counted by hand from the texts). */
#include <stdio.h>
#include <string.h>

#include "dsl/sched_block.h"
#include "dsl_tests.h"

static const char good[] = "op bmm(P: f32[R, S], Q: f32[S, T])\n"
                           "  Z[r, t] = sum(s: P[r, s] * Q[s, t])\n"
                           "  schedule knob ti = split(Z, r, max = 16) knob tj = split(Z, t, [8, 4, 16], divide = false)\n"
                           "    knob tk = [2, 1, 4]\n"
                           "    knob order = reorder([r.outer, t.outer, s, r.inner, t.inner],\n"
                           "                         [r.outer, t.outer, r.inner, s, t.inner])\n"
                           "    knob ann = annotate(vectorize, unroll)\n"
                           "    knob par = annotate(parallel)\n"
                           "    split(Z, r, ti) split(Z, t, tj)\n"
                           "    split(Z, s, nparts = tk)\n"
                           "    reorder(Z, order)\n"
                           "    annotate(Z, t.inner, ann)\n"
                           "    parallel(Z, r.outer) if par\n"
                           "op after(x: f32[N])\n"
                           "  schedule[i] = x[i] * 2.0\n";

static void test_good_block_parses_to_knobs_and_steps(void) {
  tsl_dsl_module *m = dsl_parse_ok(good);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const tsl_dsl_schedule *b = tsl_dsl_op_schedule(tsl_dsl_module_find(m, "bmm"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_EQUAL_FATAL(b->nknobs, 6);
  CU_ASSERT_EQUAL_FATAL(b->nsteps, 6);
  const tsl_dsl_knob *k = b->knobs;
  CU_ASSERT_EQUAL(k[0].kind, TSL_DSL_KNOB_SPLIT);
  CU_ASSERT_STRING_EQUAL(k[0].stage, "Z");
  CU_ASSERT_STRING_EQUAL(k[0].axis, "r");
  CU_ASSERT_EQUAL(k[0].max, 16);
  CU_ASSERT(k[0].divide);
  CU_ASSERT_EQUAL(k[0].nvalues, 0);
  CU_ASSERT_EQUAL(k[1].nvalues, 3);
  CU_ASSERT_EQUAL(k[1].values[0], 8); /* as written */
  CU_ASSERT(!k[1].divide);
  CU_ASSERT_EQUAL(k[2].kind, TSL_DSL_KNOB_LIST);
  CU_ASSERT_EQUAL(k[3].kind, TSL_DSL_KNOB_REORDER);
  CU_ASSERT_EQUAL(k[3].norders, 2);
  CU_ASSERT_EQUAL(k[3].order_len, 5);
  CU_ASSERT_STRING_EQUAL(k[3].orders[5 + 2], "r.inner");
  CU_ASSERT_EQUAL(k[4].kind, TSL_DSL_KNOB_ANNOTATE);
  CU_ASSERT_EQUAL(k[4].nannots, 2);
  CU_ASSERT_STRING_EQUAL(k[4].annots[1], "unroll");
  CU_ASSERT_EQUAL(k[4].line, 7);
  CU_ASSERT_EQUAL(k[4].col, 10);
  const tsl_dsl_sched_step *s = b->steps;
  CU_ASSERT_STRING_EQUAL(s[0].primitive, "split");
  CU_ASSERT_EQUAL(s[0].args[2].kind, TSL_DSL_ARG_KNOB);
  CU_ASSERT_EQUAL(s[0].args[2].knob, 0);
  CU_ASSERT_EQUAL(s[2].args[2].kind, TSL_DSL_ARG_KNOB);
  CU_ASSERT(s[2].args[2].nparts);
  CU_ASSERT_EQUAL(s[3].nargs, 2);
  CU_ASSERT_EQUAL(s[3].args[1].knob, 3);
  CU_ASSERT_STRING_EQUAL(s[4].args[1].name, "t.inner");
  CU_ASSERT_EQUAL(s[4].args[1].kind, TSL_DSL_ARG_NAME);
  CU_ASSERT_EQUAL(s[5].cond_knob, 5);
  CU_ASSERT_EQUAL(s[0].cond_knob, -1);
  CU_ASSERT_EQUAL(s[5].line, 13);
  CU_ASSERT_EQUAL(s[5].col, 5);
  CU_ASSERT_EQUAL(s[1].line, 9); /* newlines are not significant: two steps on one line */
  CU_ASSERT_EQUAL(s[1].col, 21);
  /* a stage called schedule is still a stage; the op text includes the block */
  CU_ASSERT_PTR_NULL(tsl_dsl_op_schedule(tsl_dsl_module_find(m, "after")));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_dsl_op_text(tsl_dsl_module_find(m, "bmm")), "if par"));
  CU_ASSERT_PTR_NULL(strstr(tsl_dsl_op_text(tsl_dsl_module_find(m, "bmm")), "op after"));
  tsl_dsl_module_free(m);
}

typedef struct bad_block {
  const char *block; /* appended after the op's two lines, so it starts on line 3 */
  int line, col;
  const char *message;
} bad_block;

#define OP_HEAD "op f(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n"

static const bad_block bad_blocks[] = {
    /* unknown knob, empty candidate lists (line 3 starts with two spaces) */
    {"schedule split(out, j, tj)", 3, 26, "unknown knob 'tj'"},
    {"schedule knob u = []\n split(out, j, u)", 3, 21, "knob u: empty list of candidates"},
    {"schedule knob t = split(out, j, [])\n split(out, j, t)", 3, 36, "knob t: empty list of candidates"},
    {"schedule vectorize(out, i) if v", 3, 33, "unknown knob 'v' after 'if'"},
    /* a knob used by steps inconsistently with its declaration or another use */
    {"schedule\nknob tj = split(out, j)\nsplit(out, i, tj)", 5, 15, "knob tj splits out.j (declared at 4:6) but is used "
                                                                     "here for out.i"},
    {"schedule\nknob o = reorder([i, j], [j, i])\nreorder(out, o)\nreorder(out, o)", 6, 14,
     "reorder knob o is used by a second step"},
    {"schedule\nknob v = annotate(vectorize)\nunroll(out, i) if v", 5, 19, "knob v turns vectorize on or off, not unroll"},
    {"schedule\nknob v = annotate(vectorize, unroll)\nunroll(out, i) if v", 5, 19, "write annotate(stage, axis, v)"},
    {"schedule\nknob t = split(out, i)\nsplit(out, i, t)\nvectorize(out, i.inner) if t", 6, 28,
     "'if' takes an annotate or a list knob"},
    {"schedule\nknob t = split(out, i)\nsplit(out, i, t)\nvectorize(out, t)", 6, 16, "a stage, axis or tensor name "
                                                                                   "goes here"},
    {"schedule\nknob o = reorder([i, j], [j, i])\nsplit(out, i, o)", 5, 15, "knob o is a reorder knob"},
    {"schedule\nknob u = [1, 2]\nannotate(out, i, u)", 5, 18, "knob u is a list knob"},
    {"schedule\nknob t = split(out, i)\nsplit(out, i, t)\nknob t = [1]", 6, 6, "knob t is declared twice"},
    {"schedule\nknob t = split(out, i)", 4, 6, "knob t is never used"},
    /* declarations against the op */
    {"schedule\nknob j = [1, 2]\nsplit(out, i, j)", 4, 6, "has the name of a parameter, size, stage or axis"},
    {"schedule\nknob t = split(out, q)\nsplit(out, q, t)", 4, 6, "q is no axis of stage out"},
    {"schedule\nknob t = split(y, i)\nsplit(y, i, t)", 4, 6, "op f has no stage y"},
    {"schedule\nknob t = split(out, i, [4, 0])\nsplit(out, i, t)", 4, 6, "split factor 0 is not >= 1"},
    {"schedule\nknob u = [4, 2, 4]\nsplit(out, i, u)", 4, 6, "candidate 4 twice"},
    {"schedule\nknob o = reorder([i, j], [j, q])\nreorder(out, o)", 4, 6, "order 2 is not a permutation"},
    {"schedule\nknob o = reorder([i, j], [j, i, i])\nreorder(out, o)", 4, 26, "this order has 3 axes, the first 2"},
    {"schedule\nknob v = annotate(vectorise)\nvectorize(out, i) if v", 4, 19, "expected vectorize, unroll or parallel"},
    /* steps */
    {"schedule tiles(out, i, j, 2, 2)", 3, 12, "unknown schedule primitive 'tiles'"},
    {"schedule vectorize(out, 3)", 3, 27, "vectorize takes a name here, not an integer"},
    {"schedule split(out, i 8)", 3, 25, "expected ',' or ')'"},
    {"schedule split(out, i, 8)\n  out2[i] = X[i, 0]", 4, 7, "expected '(' after the primitive"},
};

static void test_bad_blocks_are_refused_at_the_knob_or_use(void) {
  for (size_t i = 0; i < sizeof bad_blocks / sizeof bad_blocks[0]; i++) {
    char text[1024];
    snprintf(text, sizeof text, "%s  %s\n", OP_HEAD, bad_blocks[i].block);
    tsl_dsl_module *m = NULL;
    tsl_status st = tsl_dsl_parse(text, "t.dsl", &m);
    if (st != TSL_ERR_PARSE) fprintf(stderr, "\nnot refused as a parse error:\n%s\n", text);
    CU_ASSERT_EQUAL(st, TSL_ERR_PARSE);
    if (st == TSL_ERR_PARSE) dsl_check_message(tsl_last_error(), text, bad_blocks[i].line, bad_blocks[i].col,
                                               bad_blocks[i].message);
    tsl_dsl_module_free(m);
  }
}

void tsl_tests_dsl_sched_block(void) {
  CU_pSuite s = dsl_suite("dsl_sched_block");
  CU_add_test(s, "test_good_block_parses_to_knobs_and_steps", test_good_block_parses_to_knobs_and_steps);
  CU_add_test(s, "test_bad_blocks_are_refused_at_the_knob_or_use", test_bad_blocks_are_refused_at_the_knob_or_use);
}
