/* Schedule data and its text form: the default schedule, steps, errors, round trips. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "sched_tests.h"

static const char *iter_name(const tsl_stage *st, int leaf_pos) { return st->iters[st->leaf[leaf_pos]].name; }

static void test_default_schedule_inlines_padding_stage(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_conv_padded(1, 3, 8, 8, 4, 3, 3, 1, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(s->nstages, 2);
  tsl_stage *pad = tsl_schedule_stage(s, "padded"), *out = tsl_schedule_stage(s, "out");
  CU_ASSERT_PTR_NOT_NULL_FATAL(pad);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_EQUAL(pad->attach, TSL_ATTACH_INLINE);
  CU_ASSERT_FALSE(pad->is_output);
  CU_ASSERT_EQUAL(out->attach, TSL_ATTACH_ROOT);
  CU_ASSERT_TRUE(out->is_output);
  CU_ASSERT_EQUAL(tsl_schedule_stage_index(s, "padded"), 0); /* producers first */
  char *text = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(text, "compute_inline(padded)\n");
  free(text);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_initial_loop_order_is_spatial_then_reduction(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_conv_padded(1, 3, 8, 8, 4, 3, 3, 1, 1);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_new(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(s->nsteps, 0);
  tsl_stage *out = tsl_schedule_stage(s, "out");
  CU_ASSERT_EQUAL_FATAL(out->nleaf, 7);
  const char *want[7] = {"n", "k", "y", "x", "rc", "ry", "rx"};
  for (int i = 0; i < 7; i++) CU_ASSERT_STRING_EQUAL(iter_name(out, i), want[i]);
  for (int i = 0; i < 7; i++) CU_ASSERT_EQUAL(out->iters[out->leaf[i]].is_reduce, i >= 4);
  CU_ASSERT_EQUAL(out->iters[tsl_stage_iter_index(out, "y")].extent, 8);
  CU_ASSERT_EQUAL(out->iters[tsl_stage_iter_index(out, "rx")].extent, 3);
  /* the initial schedule inlines nothing */
  CU_ASSERT_EQUAL(tsl_schedule_stage(s, "padded")->attach, TSL_ATTACH_ROOT);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_default_schedule_keeps_reductions_root(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_row_center(4, 5);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_stage(s, "rowsum")->attach, TSL_ATTACH_ROOT);
  CU_ASSERT_EQUAL(s->nsteps, 0);
  char *text = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(text, "");
  free(text);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_split_makes_outer_and_inner_leaves(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_elemwise_chain(4, 13);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_split(s, "out", "j", 8), TSL_OK);
  tsl_stage *out = tsl_schedule_stage(s, "out");
  CU_ASSERT_EQUAL_FATAL(out->nleaf, 3);
  CU_ASSERT_STRING_EQUAL(iter_name(out, 0), "i");
  CU_ASSERT_STRING_EQUAL(iter_name(out, 1), "j.outer");
  CU_ASSERT_STRING_EQUAL(iter_name(out, 2), "j.inner");
  CU_ASSERT_EQUAL(out->iters[out->leaf[1]].extent, 2); /* ceil(13 / 8) */
  CU_ASSERT_EQUAL(out->iters[out->leaf[2]].extent, 8);
  CU_ASSERT_EQUAL_FATAL(out->nrels, 1);
  CU_ASSERT_EQUAL(out->rels[0].kind, TSL_REL_SPLIT);
  CU_ASSERT_EQUAL(out->rels[0].factor, 8);
  /* j is no longer a leaf */
  CU_ASSERT_EQUAL(tsl_schedule_split(s, "out", "j", 2), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "not a leaf"));
  CU_ASSERT_EQUAL(tsl_schedule_split(s, "out", "j.inner", 0), TSL_ERR_SCHEDULE);
  CU_ASSERT_EQUAL(tsl_schedule_split(s, "out", "nope", 2), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(s->nsteps, 2); /* compute_inline(B), split: failed steps are not recorded */
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_fuse_needs_adjacent_leaves_of_one_kind(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(4, 6, 5);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_fuse(s, "C", "j", "k"), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "reduction"));
  CU_ASSERT_EQUAL(tsl_schedule_fuse(s, "C", "j", "i"), TSL_ERR_SCHEDULE); /* inner first */
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_fuse(s, "C", "i", "j"), TSL_OK);
  tsl_stage *c = tsl_schedule_stage(s, "C");
  CU_ASSERT_EQUAL_FATAL(c->nleaf, 2);
  CU_ASSERT_STRING_EQUAL(iter_name(c, 0), "i.j.fused");
  CU_ASSERT_EQUAL(c->iters[c->leaf[0]].extent, 24);
  CU_ASSERT_STRING_EQUAL(iter_name(c, 1), "k");
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_reorder_permutes_only_the_named_leaves(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_conv_padded(1, 3, 8, 8, 4, 3, 3, 1, 1);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  const char *order[3] = {"rc", "x", "k"};
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_reorder(s, "out", 3, order), TSL_OK);
  tsl_stage *out = tsl_schedule_stage(s, "out");
  const char *want[7] = {"n", "rc", "y", "x", "k", "ry", "rx"};
  for (int i = 0; i < 7; i++) CU_ASSERT_STRING_EQUAL(iter_name(out, i), want[i]);
  const char *twice[2] = {"x", "x"};
  CU_ASSERT_EQUAL(tsl_schedule_reorder(s, "out", 2, twice), TSL_ERR_SCHEDULE);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_C10_parallel_on_reduction_axis_refused(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(2, 2, 4);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_parallel(s, "C", "k"), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "reduction axis"));
  CU_ASSERT_EQUAL(tsl_schedule_vectorize(s, "C", "k"), TSL_ERR_SCHEDULE);
  tsl_stage *c = tsl_schedule_stage(s, "C");
  CU_ASSERT_EQUAL(c->iters[tsl_stage_iter_index(c, "k")].annotation, TSL_FOR_SERIAL);
  CU_ASSERT_EQUAL(s->nsteps, 0);
  /* a spatial axis may run in parallel; a reduction axis may still be unrolled */
  CU_ASSERT_EQUAL(tsl_schedule_parallel(s, "C", "i"), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_unroll(s, "C", "k"), TSL_OK);
  CU_ASSERT_EQUAL(c->iters[tsl_stage_iter_index(c, "i")].annotation, TSL_FOR_PARALLEL);
  /* the text form refuses it the same way, naming the line */
  tsl_schedule *t = NULL;
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, i, 2)\nparallel(C, k)\n", &t), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NULL(t);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "schedule:2:1"));
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_inline_refuses_outputs_and_reductions(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_row_center(4, 5);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_compute_inline(s, "out"), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "output"));
  CU_ASSERT_EQUAL(tsl_schedule_compute_inline(s, "rowsum"), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "reduction"));
  CU_ASSERT_EQUAL(tsl_schedule_compute_inline(s, "nosuch"), TSL_ERR_INVALID);
  tsl_schedule_free(s);
  /* an inlined stage has no loops to annotate */
  tsl_te_program *c = st_elemwise_chain(4, 4);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(c, &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_vectorize(s, "B", "j"), TSL_ERR_SCHEDULE);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_text_round_trip(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_conv_padded(1, 3, 8, 8, 4, 3, 3, 1, 1);
  const char *text = "compute_inline(padded)\n"
                     "split(out, x, 4)\n"
                     "reorder(out, rc, x.outer, x.inner)\n"
                     "fuse(out, n, k)\n"
                     "unroll(out, ry)\n"
                     "vectorize(out, x.inner)\n"
                     "parallel(out, n.k.fused)\n";
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(p, text, &s), TSL_OK);
  char *printed = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(printed, text);
  tsl_schedule *again = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(p, printed, &again), TSL_OK);
  char *printed2 = tsl_schedule_to_string(again);
  CU_ASSERT_STRING_EQUAL(printed2, printed);
  tsl_stage *o1 = tsl_schedule_stage(s, "out"), *o2 = tsl_schedule_stage(again, "out");
  CU_ASSERT_EQUAL_FATAL(o1->nleaf, o2->nleaf);
  for (int i = 0; i < o1->nleaf; i++) CU_ASSERT_STRING_EQUAL(iter_name(o1, i), iter_name(o2, i));
  free(printed);
  free(printed2);
  tsl_schedule_free(s);
  tsl_schedule_free(again);

  /* the default schedule's own text replays to the same schedule */
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  printed = tsl_schedule_to_string(s);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(p, printed, &again), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_stage(again, "padded")->attach, TSL_ATTACH_INLINE);
  printed2 = tsl_schedule_to_string(again);
  CU_ASSERT_STRING_EQUAL(printed2, printed);
  free(printed);
  free(printed2);
  tsl_schedule_free(s);
  tsl_schedule_free(again);
  st_arena_end(a);
}

static void test_text_accepts_comments_blanks_and_spacing(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(4, 6, 5);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(p, "# tiles\n\n  split( C ,j,  3 )  # inner 3\r\n\n", &s), TSL_OK);
  char *printed = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(printed, "split(C, j, 3)\n");
  free(printed);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_quoted_names_round_trip(void) {
  st_arena a = st_arena_begin();
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){8});
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){8}, (const char *[]){"0x"});
  tsl_te_tensor *B =
      tsl_te_compute("out-1", 1, ax, tsl_add(tsl_te_read(A, 1, (tsl_expr *[]){ax[0].var}), tsl_f32(1)), NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(B);
  tsl_te_program *p = tsl_te_program_new("q", 1, &A, 1, &B);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_new(p, &s), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_split(s, "out-1", "0x", 4), TSL_OK);
  char *printed = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(printed, "split(\"out-1\", \"0x\", 4)\n");
  tsl_schedule *t = NULL;
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, printed, &t), TSL_OK);
  CU_ASSERT_EQUAL(t ? t->nsteps : -1, 1);
  free(printed);
  tsl_schedule_free(s);
  tsl_schedule_free(t);
  st_arena_end(a);
}

/* The file form (a user's --schedule FILE): FILE:LINE:COL: error:, the failing step, the
 * line and a caret under the column. */
static void test_text_file_errors_show_file_step_and_caret(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(4, 6, 5);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL(tsl_schedule_from_text_file(p, "split(C, j, 3)\n  # two\n  split(C, q, 2)\n", "my.sched", &s),
                  TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), "my.sched:3:3: error: step split(C, q, 2) does not apply: split: stage C "
                                           "has no axis q\n    split(C, q, 2)\n    ^");
  CU_ASSERT_EQUAL(tsl_schedule_from_text_file(p, "split(C, j 3)", "x.txt", &s), TSL_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), "x.txt:1:12: error: expected ',' or ')'\n  split(C, j 3)\n             ^");
  /* NULL file name: the plain form */
  CU_ASSERT_EQUAL(tsl_schedule_from_text_file(p, "split(C, j 3)", NULL, &s), TSL_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), "schedule:1:12: expected ',' or ')'");
  CU_ASSERT_EQUAL(tsl_schedule_from_text_file(p, "split(C, j, 3)\n", "ok.sched", &s), TSL_OK);
  CU_ASSERT_EQUAL(s ? s->nsteps : -1, 1);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_text_errors_name_line_and_column(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(4, 6, 5);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, j 3)\n", &s), TSL_ERR_PARSE);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), "schedule:1:12: expected ',' or ')'");
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "\n  tiles(C, i, j, 2, 2)\n", &s), TSL_ERR_PARSE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "schedule:2:3: unknown primitive 'tiles'"));
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, j, 3) extra\n", &s), TSL_ERR_PARSE);
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, j, 3\n", &s), TSL_ERR_PARSE);
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, j, 99999999999999999999)\n", &s), TSL_ERR_PARSE);
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, \"j)\n", &s), TSL_ERR_PARSE);
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, 3j, 3)\n", &s), TSL_ERR_PARSE);
  /* well-formed text whose step does not apply */
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, j, 3)\nsplit(D, i, 2)\n", &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "schedule:2:1: split: no stage named D"));
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, j)\n", &s), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "split(C, j, 2, 3)\n", &s), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "vectorize(C, 3)\n", &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(s);
  st_arena_end(a);
}

static void test_schedule_rejects_placeholder_output(void) {
  st_arena a = st_arena_begin();
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){8});
  tsl_te_program *p = tsl_te_program_new("identity", 1, &A, 1, &A);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL(tsl_schedule_create(p, &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(s);
  st_arena_end(a);
}

void tsl_tests_schedule_steps(void) {
  CU_pSuite s = CU_add_suite("schedule/steps", NULL, NULL);
  CU_add_test(s, "test_default_schedule_inlines_padding_stage", test_default_schedule_inlines_padding_stage);
  CU_add_test(s, "test_initial_loop_order_is_spatial_then_reduction", test_initial_loop_order_is_spatial_then_reduction);
  CU_add_test(s, "test_default_schedule_keeps_reductions_root", test_default_schedule_keeps_reductions_root);
  CU_add_test(s, "test_split_makes_outer_and_inner_leaves", test_split_makes_outer_and_inner_leaves);
  CU_add_test(s, "test_fuse_needs_adjacent_leaves_of_one_kind", test_fuse_needs_adjacent_leaves_of_one_kind);
  CU_add_test(s, "test_reorder_permutes_only_the_named_leaves", test_reorder_permutes_only_the_named_leaves);
  CU_add_test(s, "test_C10_parallel_on_reduction_axis_refused", test_C10_parallel_on_reduction_axis_refused);
  CU_add_test(s, "test_inline_refuses_outputs_and_reductions", test_inline_refuses_outputs_and_reductions);
  CU_add_test(s, "test_text_round_trip", test_text_round_trip);
  CU_add_test(s, "test_text_accepts_comments_blanks_and_spacing", test_text_accepts_comments_blanks_and_spacing);
  CU_add_test(s, "test_quoted_names_round_trip", test_quoted_names_round_trip);
  CU_add_test(s, "test_text_errors_name_line_and_column", test_text_errors_name_line_and_column);
  CU_add_test(s, "test_text_file_errors_show_file_step_and_caret", test_text_file_errors_show_file_step_and_caret);
  CU_add_test(s, "test_schedule_rejects_placeholder_output", test_schedule_rejects_placeholder_output);
}
