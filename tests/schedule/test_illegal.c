/* Illegal schedules: each refused with the right status and a message naming the stage,
 * the axis and the reason, and the schedule left exactly as it was (Halide's test/error
 * in spirit: one refused program per behaviour). */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "sched_tests.h"

/* Applies `text` (must succeed), then `bad` as one more line, which must fail with
 * status want and a message containing every one of the (up to 3) fragments; the
 * schedule's text must not change. */
static void refuse(tsl_te_program *p, const char *text, tsl_status (*bad)(tsl_schedule *), tsl_status want,
                   const char *frag1, const char *frag2, const char *frag3) {
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(p, text, &s), TSL_OK);
  char *before = tsl_schedule_to_string(s);
  int nstages = s->nstages;
  tsl_stage *last = s->stages[nstages - 1]; /* callers may hold stage pointers */
  int last_leaves = last->nleaf;
  tsl_status rc = bad(s);
  CU_ASSERT_EQUAL(rc, want);
  const char *msg = tsl_last_error();
  const char *frags[3] = {frag1, frag2, frag3};
  for (int i = 0; i < 3; i++)
    if (frags[i] && !strstr(msg, frags[i])) {
      fprintf(stderr, "\nmessage \"%s\" lacks \"%s\"\n", msg, frags[i]);
      CU_FAIL("message lacks an expected fragment");
    }
  char *after = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(after, before);
  CU_ASSERT_EQUAL(s->nstages, nstages);
  CU_ASSERT_PTR_EQUAL(s->stages[nstages - 1], last);
  CU_ASSERT_EQUAL(last->nleaf, last_leaves);
  free(before);
  free(after);
  tsl_schedule_free(s);
}

static tsl_status reorder_fused_away(tsl_schedule *s) {
  const char *ax[2] = {"k", "i"};
  return tsl_schedule_reorder(s, "C", 2, ax);
}

static void test_illegal_reorder_of_axis_consumed_by_fuse(void) {
  st_arena a = st_arena_begin();
  refuse(st_matmul(4, 6, 5), "fuse(C, i, j)\n", reorder_fused_away, TSL_ERR_SCHEDULE, "reorder: axis i of stage C",
         "a fuse consumed it into i.j.fused", NULL);
  st_arena_end(a);
}

static tsl_status split_j_again(tsl_schedule *s) { return tsl_schedule_split(s, "C", "j", 2); }

static void test_illegal_split_of_axis_already_split(void) {
  st_arena a = st_arena_begin();
  refuse(st_matmul(4, 6, 5), "split(C, j, 4)\n", split_j_again, TSL_ERR_SCHEDULE, "split: axis j of stage C",
         "it was split into j.outer and j.inner", NULL);
  st_arena_end(a);
}

static tsl_status attach_inside_consumer_loop(tsl_schedule *s) {
  return tsl_schedule_compute_at(s, "A.local", "C", "i.inner");
}

static void test_illegal_compute_at_loop_not_enclosing_consumer(void) {
  st_arena a = st_arena_begin();
  /* C.local (which reads A.local) is computed at C's i.outer; A.local at i.inner would
   * come after it */
  refuse(st_matmul(8, 6, 5),
         "cache_write(C, local)\ncache_read(A, local, C.local)\nsplit(C, i, 4)\ncompute_at(C.local, C, i.outer)\n",
         attach_inside_consumer_loop, TSL_ERR_SCHEDULE, "compute_at: axis i.inner of stage C does not enclose stage C.local",
         "reads stage A.local", "in an outer loop");
  st_arena_end(a);
}

static tsl_status attach_to_non_consumer(tsl_schedule *s) { return tsl_schedule_compute_at(s, "weight.local", "padded", "x"); }

static void test_illegal_compute_at_stage_that_does_not_consume_it(void) {
  st_arena a = st_arena_begin();
  refuse(st_conv_padded(1, 2, 6, 6, 3, 3, 3, 1, 1), "compute_root(padded)\ncache_read(weight, local, out)\n",
         attach_to_non_consumer, TSL_ERR_SCHEDULE, "compute_at: stage padded does not consume stage weight.local",
         "axis x", NULL);
  st_arena_end(a);
}

static tsl_status attach_to_itself(tsl_schedule *s) { return tsl_schedule_compute_at(s, "C.local", "C.local", "i"); }
static tsl_status attach_output(tsl_schedule *s) { return tsl_schedule_compute_at(s, "C", "C.local", "i"); }

static void test_illegal_compute_at_of_output_or_into_itself(void) {
  st_arena a = st_arena_begin();
  refuse(st_matmul(4, 6, 5), "cache_write(C, local)\n", attach_to_itself, TSL_ERR_SCHEDULE,
         "stage C.local cannot be computed inside itself", NULL, NULL);
  refuse(st_matmul(4, 6, 5), "cache_write(C, local)\n", attach_output, TSL_ERR_SCHEDULE,
         "compute_at: stage C is an output of the program", NULL, NULL);
  st_arena_end(a);
}

static tsl_status vectorize_k(tsl_schedule *s) { return tsl_schedule_vectorize(s, "C", "k"); }

static void test_illegal_vectorize_reduction_axis_without_rfactor(void) {
  st_arena a = st_arena_begin();
  refuse(st_matmul(4, 6, 5), "", vectorize_k, TSL_ERR_SCHEDULE, "vectorize: axis k of stage C is a reduction axis",
         "rfactor(C, k.inner)", NULL);
  st_arena_end(a);
}

static tsl_status split_zero(tsl_schedule *s) { return tsl_schedule_split(s, "C", "j", 0); }
static tsl_status split_negative(tsl_schedule *s) { return tsl_schedule_split(s, "C", "i", -3); }
static tsl_status nparts_zero(tsl_schedule *s) { return tsl_schedule_split_nparts(s, "C", "i", 0); }
static tsl_status tile_zero(tsl_schedule *s) { return tsl_schedule_tile(s, "C", "i", "j", 2, 0); }

static void test_illegal_non_positive_factor(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(4, 6, 5);
  refuse(p, "", split_zero, TSL_ERR_SCHEDULE, "split: factor 0 on axis j of stage C (must be >= 1)", NULL, NULL);
  refuse(p, "", split_negative, TSL_ERR_SCHEDULE, "split: factor -3 on axis i of stage C", NULL, NULL);
  refuse(p, "", nparts_zero, TSL_ERR_SCHEDULE, "split: nparts 0 on axis i of stage C", NULL, NULL);
  /* tile refuses as a whole: the first split it made is undone too */
  refuse(p, "", tile_zero, TSL_ERR_SCHEDULE, "tile: factor 0 on axis j of stage C", NULL, NULL);
  st_arena_end(a);
}

static tsl_status unknown_stage(tsl_schedule *s) { return tsl_schedule_split(s, "D", "i", 2); }
static tsl_status unknown_axis(tsl_schedule *s) { return tsl_schedule_split(s, "C", "q", 2); }
static tsl_status unknown_target_axis(tsl_schedule *s) { return tsl_schedule_compute_at(s, "C.local", "C", "zz"); }
static tsl_status unknown_tensor(tsl_schedule *s) {
  const char *r = "C";
  return tsl_schedule_cache_read(s, "Z", "local", 1, &r, NULL);
}

static void test_illegal_unknown_stage_axis_or_tensor(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(4, 6, 5);
  refuse(p, "", unknown_stage, TSL_ERR_INVALID, "split: no stage named D", NULL, NULL);
  refuse(p, "", unknown_axis, TSL_ERR_INVALID, "split: stage C has no axis q", NULL, NULL);
  refuse(p, "cache_write(C, local)\n", unknown_target_axis, TSL_ERR_INVALID, "compute_at: stage C has no axis zz", NULL,
         NULL);
  refuse(p, "", unknown_tensor, TSL_ERR_INVALID, "cache_read: no tensor named Z", NULL, NULL);
  st_arena_end(a);
}

static tsl_status parallel_fused_reduction(tsl_schedule *s) { return tsl_schedule_parallel(s, "out", "rc.ry.fused"); }

static void test_C10_parallel_on_fused_reduction_axes_refused(void) {
  st_arena a = st_arena_begin();
  refuse(st_conv_padded(1, 2, 6, 6, 3, 3, 3, 1, 1), "fuse(out, rc, ry)\n", parallel_fused_reduction, TSL_ERR_SCHEDULE,
         "parallel: axis rc.ry.fused of stage out is a reduction axis", "cannot run at once", NULL);
  st_arena_end(a);
}

/* Unrolling needs a constant extent: every leaf has one (shapes are JIT constants and
 * bound inference gives constant widths), and ir.h refuses a non-constant unrolled loop
 * outright, so the schedule-level case left is a tensor that has no buffer. */
static tsl_status prefetch_inlined(tsl_schedule *s) { return tsl_schedule_prefetch(s, "out", "padded", "k", 1); }

static void test_illegal_prefetch_of_inlined_tensor(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(st_conv_padded(1, 2, 6, 6, 3, 3, 3, 1, 1), &s), TSL_OK);
  CU_ASSERT_EQUAL(prefetch_inlined(s), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "prefetch: stage out prefetches tensor padded, which is inlined"));
  CU_ASSERT_EQUAL(s->nsteps, 1);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_C20_nested_unrolls_beyond_limit_refused_by_stage(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(st_matmul(64, 64, 4), "unroll(C, i)\nunroll(C, j)\n", &s), TSL_OK);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL(tsl_lower(s, "huge", &f), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NULL(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "unroll: axis j of stage C (extent 64)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "4096 copies"));
  /* a lower limit through the options */
  tsl_lower_options o = tsl_lower_options_default();
  o.max_unroll = 32;
  tsl_schedule_free(s);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(st_matmul(64, 64, 4), "unroll(C, i)\n", &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_lower_with(s, "huge", &o, &f), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "unroll: axis i of stage C (extent 64)"));
  tsl_schedule_free(s);
  st_arena_end(a);
}

static tsl_status vectorize_around_attached(tsl_schedule *s) { return tsl_schedule_vectorize(s, "C", "i.inner"); }
static tsl_status second_vector_axis(tsl_schedule *s) { return tsl_schedule_vectorize(s, "C", "i"); }
static tsl_status parallel_inside_vector(tsl_schedule *s) { return tsl_schedule_parallel(s, "C", "j.inner"); }

static void test_illegal_vectorize_where_lanes_cannot_run(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(8, 8, 5);
  /* a vectorized loop enclosing a stage computed inside it (its own buffer and loops) */
  refuse(p, "cache_read(B, local, C)\nsplit(C, i, 4)\ncompute_at(B.local, C, j)\n", vectorize_around_attached,
         TSL_ERR_SCHEDULE, "stage B.local would be computed at axis j of stage C, inside its vectorized axis i.inner", NULL,
         NULL);
  /* two vectorized axes */
  refuse(p, "vectorize(C, j)\n", second_vector_axis, TSL_ERR_SCHEDULE, "stage C would vectorize two axes, i and j",
         NULL, NULL);
  /* a parallel loop inside the lanes */
  refuse(p, "split(C, j, 4)\nvectorize(C, j.outer)\n", parallel_inside_vector, TSL_ERR_SCHEDULE,
         "parallel axis j.inner of stage C would be inside its vectorized axis j.outer", NULL, NULL);
  st_arena_end(a);
}

static tsl_status reorder_twice(tsl_schedule *s) {
  const char *ax[3] = {"j", "k", "j"};
  return tsl_schedule_reorder(s, "C", 3, ax);
}

static void test_illegal_reorder_duplicate_axis(void) {
  st_arena a = st_arena_begin();
  refuse(st_matmul(4, 6, 5), "", reorder_twice, TSL_ERR_SCHEDULE, "reorder: axis j of stage C named twice", NULL, NULL);
  st_arena_end(a);
}

static tsl_status cache_read_not_read(tsl_schedule *s) {
  const char *r = "padded";
  return tsl_schedule_cache_read(s, "weight", "local", 1, &r, NULL);
}

static void test_illegal_cache_read_of_tensor_stage_does_not_read(void) {
  st_arena a = st_arena_begin();
  refuse(st_conv_padded(1, 2, 6, 6, 3, 3, 3, 1, 1), "compute_root(padded)\n", cache_read_not_read, TSL_ERR_SCHEDULE,
         "cache_read: stage padded does not read tensor weight", NULL, NULL);
  st_arena_end(a);
}

static tsl_status cache_write_scheduled(tsl_schedule *s) { return tsl_schedule_cache_write(s, "C", "local", NULL); }
static tsl_status cache_write_shared(tsl_schedule *s) { return tsl_schedule_cache_write(s, "C", "shared", NULL); }

static void test_illegal_cache_write_after_scheduling_or_other_scope(void) {
  st_arena a = st_arena_begin();
  refuse(st_matmul(4, 6, 5), "split(C, i, 2)\n", cache_write_scheduled, TSL_ERR_SCHEDULE,
         "cache_write: stage C is already scheduled", "apply cache_write first", NULL);
  refuse(st_matmul(4, 6, 5), "", cache_write_shared, TSL_ERR_INVALID, "cache_write: scope shared is not supported", NULL,
         NULL);
  st_arena_end(a);
}

static tsl_status split_attach_point(tsl_schedule *s) { return tsl_schedule_split(s, "C", "j", 2); }
static tsl_status fuse_attach_point(tsl_schedule *s) { return tsl_schedule_fuse(s, "C", "i", "j"); }

static void test_illegal_split_or_fuse_of_attach_point(void) {
  st_arena a = st_arena_begin();
  const char *text = "cache_write(C, local)\ncompute_at(C.local, C, j)\n";
  refuse(st_matmul(4, 6, 5), text, split_attach_point, TSL_ERR_SCHEDULE,
         "split: axis j of stage C has stage C.local computed (compute_at) at it", NULL, NULL);
  refuse(st_matmul(4, 6, 5), text, fuse_attach_point, TSL_ERR_SCHEDULE,
         "fuse: axis j of stage C has stage C.local computed (compute_at) at it", NULL, NULL);
  st_arena_end(a);
}

static tsl_status align_output(tsl_schedule *s) { return tsl_schedule_storage_align(s, "C", "i", 16, 0); }
static tsl_status align_offset(tsl_schedule *s) { return tsl_schedule_storage_align(s, "A.local", "ax0", 8, 8); }
static tsl_status align_reduce(tsl_schedule *s) { return tsl_schedule_storage_align(s, "C.local", "k", 8, 1); }

static void test_illegal_storage_align(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(4, 6, 5);
  refuse(p, "", align_output, TSL_ERR_SCHEDULE, "storage_align: stage C is an output", NULL, NULL);
  refuse(p, "cache_read(A, local, C)\n", align_offset, TSL_ERR_SCHEDULE,
         "storage_align: offset 8 on axis ax0 of stage A.local (must be in [0, 8))", NULL, NULL);
  refuse(p, "cache_write(C, local)\n", align_reduce, TSL_ERR_SCHEDULE,
         "storage_align: axis k of stage C.local is not a dimension of its buffer (a reduction axis)", NULL, NULL);
  st_arena_end(a);
}

static tsl_status order_output(tsl_schedule *s) {
  const char *ax[2] = {"j", "i"};
  return tsl_schedule_storage_order(s, "C", 2, ax);
}
static tsl_status order_twice(tsl_schedule *s) {
  const char *ax[2] = {"ax1", "ax1"};
  return tsl_schedule_storage_order(s, "A.local", 2, ax);
}
static tsl_status order_missing(tsl_schedule *s) {
  const char *ax[1] = {"ax1"};
  return tsl_schedule_storage_order(s, "A.local", 1, ax);
}
static tsl_status order_reduce(tsl_schedule *s) {
  const char *ax[3] = {"j", "k", "i"};
  return tsl_schedule_storage_order(s, "C.local", 3, ax);
}
static tsl_status order_derived(tsl_schedule *s) {
  const char *ax[2] = {"ax1", "ax0.inner"};
  return tsl_schedule_storage_order(s, "A.local", 2, ax);
}
static tsl_status order_inlined(tsl_schedule *s) {
  const char *ax[4] = {"n", "c", "x", "y"};
  return tsl_schedule_storage_order(s, "padded", 4, ax);
}

static void test_illegal_storage_order(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(4, 6, 5);
  refuse(p, "", order_output, TSL_ERR_SCHEDULE, "storage_order: stage C is an output", NULL, NULL);
  refuse(p, "cache_read(A, local, C)\n", order_twice, TSL_ERR_SCHEDULE,
         "storage_order: axis ax1 of stage A.local named twice", NULL, NULL);
  refuse(p, "cache_read(A, local, C)\n", order_missing, TSL_ERR_SCHEDULE,
         "storage_order: 1 axes for the 2 dimensions of stage A.local's buffer", NULL, NULL);
  refuse(p, "cache_write(C, local)\n", order_reduce, TSL_ERR_SCHEDULE,
         "storage_order: axis k of stage C.local is not a dimension of its buffer (a reduction axis)", NULL, NULL);
  refuse(p, "cache_read(A, local, C)\nsplit(A.local, ax0, 2)\n", order_derived, TSL_ERR_SCHEDULE,
         "storage_order: axis ax0.inner of stage A.local is not a dimension of its buffer (a derived axis)", NULL,
         NULL);
  refuse(st_conv_padded(1, 2, 5, 5, 2, 3, 3, 1, 1), "compute_inline(padded)\n", order_inlined, TSL_ERR_SCHEDULE,
         "storage_order: stage padded is inlined", NULL, NULL);
  /* the text form: the error located at the step's line */
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL(tsl_schedule_from_text(p, "cache_read(A, local, C)\nstorage_order(A.local, ax0, ax0)\n", &s),
                  TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "schedule:2:"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "named twice"));
  CU_ASSERT_PTR_NULL(s);
  st_arena_end(a);
}

static tsl_status prefetch_not_read(tsl_schedule *s) { return tsl_schedule_prefetch(s, "padded", "weight", "x", 1); }
static tsl_status cache_read_prefetched(tsl_schedule *s) {
  const char *r = "out";
  return tsl_schedule_cache_read(s, "weight", "local", 1, &r, NULL);
}

static void test_illegal_prefetch_of_tensor_not_read(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_conv_padded(1, 2, 6, 6, 3, 3, 3, 1, 1);
  refuse(p, "compute_root(padded)\n", prefetch_not_read, TSL_ERR_SCHEDULE,
         "prefetch: stage padded does not read tensor weight", NULL, NULL);
  /* a later cache_read would take the prefetched reads away */
  refuse(p, "prefetch(out, weight, k, 1)\n", cache_read_prefetched, TSL_ERR_SCHEDULE,
         "cache_read: stage out prefetches tensor weight, which it no longer reads", NULL, NULL);
  st_arena_end(a);
}

static tsl_status inline_with_attached(tsl_schedule *s) { return tsl_schedule_compute_inline(s, "out"); }
static tsl_status inline_reduction(tsl_schedule *s) { return tsl_schedule_compute_inline(s, "out.local"); }

static void test_illegal_compute_inline_of_reduction_or_output(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_conv_padded(1, 2, 6, 6, 3, 3, 3, 1, 1);
  refuse(p, "cache_write(out, local)\n", inline_with_attached, TSL_ERR_SCHEDULE,
         "compute_inline: stage out is an output of the program", NULL, NULL);
  refuse(p, "cache_write(out, local)\n", inline_reduction, TSL_ERR_SCHEDULE,
         "compute_inline: stage out.local is a reduction", NULL, NULL);
  st_arena_end(a);
}

/* rfactor: only a split half of a reduction axis, of a stage carrying nothing but that
 * split (anything else would be lost when both stages are rebuilt). */
static tsl_status rfactor_k(tsl_schedule *s) { return tsl_schedule_rfactor(s, "C", "k", NULL); }
static tsl_status rfactor_k_outer(tsl_schedule *s) { return tsl_schedule_rfactor(s, "C", "k.outer", NULL); }
static tsl_status rfactor_i_outer(tsl_schedule *s) { return tsl_schedule_rfactor(s, "C", "i.outer", NULL); }
static tsl_status rfactor_nested(tsl_schedule *s) { return tsl_schedule_rfactor(s, "C", "k.inner.outer", NULL); }
static tsl_status rfactor_elemwise(tsl_schedule *s) { return tsl_schedule_rfactor(s, "out", "i.outer", NULL); }
static tsl_status rfactor_attached(tsl_schedule *s) { return tsl_schedule_rfactor(s, "rowsum", "j.outer", NULL); }
static tsl_status rfactor_anchor(tsl_schedule *s) { return tsl_schedule_rfactor(s, "out", "rc.outer", NULL); }

static void test_illegal_rfactor(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *mm = st_matmul(4, 6, 8);
  refuse(mm, "", rfactor_k, TSL_ERR_SCHEDULE, "rfactor: reduction axis k of stage C is not split",
         "split it first", NULL);
  refuse(mm, "split(C, i, 2)\n", rfactor_i_outer, TSL_ERR_SCHEDULE, "rfactor: axis i.outer of stage C",
         "spatial axis", NULL);
  refuse(mm, "split(C, k, 4)\nsplit(C, k.inner, 2)\n", rfactor_nested, TSL_ERR_SCHEDULE,
         "axis k.inner.outer of stage C", "nested split", NULL);
  refuse(mm, "split(C, k, 4)\nsplit(C, j, 2)\n", rfactor_k_outer, TSL_ERR_SCHEDULE, "rfactor: stage C has 2",
         "only the split of the factored reduction axis", NULL);
  refuse(mm, "split(C, k, 4)\nreorder(C, k.inner, k.outer)\n", rfactor_k_outer, TSL_ERR_SCHEDULE,
         "stage C was reordered", NULL, NULL);
  refuse(mm, "split(C, k, 4)\nreorder(C, k.outer, i)\n", rfactor_k_outer, TSL_ERR_SCHEDULE, "stage C was reordered",
         NULL, NULL);
  refuse(mm, "split(C, k, 4)\nparallel(C, i)\n", rfactor_k_outer, TSL_ERR_SCHEDULE, "axis i of stage C is annotated",
         NULL, NULL);
  refuse(st_elemwise_chain(4, 6), "split(out, i, 2)\n", rfactor_elemwise, TSL_ERR_SCHEDULE,
         "rfactor: stage out is not a reduction", NULL, NULL);
  refuse(st_row_center(4, 6), "split(rowsum, j, 2)\ncompute_at(rowsum, out, i)\n", rfactor_attached,
         TSL_ERR_SCHEDULE, "stage rowsum is computed at another stage", "before compute_at", NULL);
  refuse(st_conv_padded(1, 4, 5, 5, 2, 3, 3, 1, 1), "compute_root(padded)\nsplit(out, rc, 2)\ncompute_at(padded, out, rc.outer)\n",
         rfactor_anchor, TSL_ERR_SCHEDULE, "axis rc.outer of stage out has stage padded computed", NULL, NULL);
  /* the text form checks the arguments like every step */
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL(tsl_schedule_from_text(mm, "split(C, k, 4)\nrfactor(C)\n", &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "rfactor: too few arguments"));
  CU_ASSERT_PTR_NULL(s);
  st_arena_end(a);
}

/* A refused cache_read (it would leave the producer computed where it no longer
 * encloses its new reader) is undone completely: no new stage, readers unchanged, and
 * the schedule still lowers to the right result. */
static tsl_status cache_read_after_attach(tsl_schedule *s) {
  const char *r = "out";
  return tsl_schedule_cache_read(s, "padded", "local", 1, &r, NULL);
}

static void test_illegal_cache_read_rolled_back_completely(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_conv_padded(1, 2, 6, 6, 3, 3, 3, 1, 1);
  const char *text = "compute_root(padded)\ncompute_at(padded, out, y)\n";
  refuse(p, text, cache_read_after_attach, TSL_ERR_SCHEDULE,
         "cache_read: axis y of stage out does not enclose stage padded.local", "outside that stage's loops", NULL);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(p, text, &s), TSL_OK);
  CU_ASSERT_NOT_EQUAL(cache_read_after_attach(s), TSL_OK);
  CU_ASSERT_EQUAL(s->nstages, 2);
  CU_ASSERT_PTR_NULL(tsl_schedule_stage(s, "padded.local"));
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL(tsl_lower(s, "after_refusal", &f), TSL_OK);
  CU_ASSERT_TRUE(f && st_mentions_buffer(f->body, "padded"));
  tsl_schedule_free(s);
  st_arena_end(a);
}

void tsl_tests_schedule_illegal(void) {
  CU_pSuite s = CU_add_suite("schedule/illegal", NULL, NULL);
  CU_add_test(s, "test_illegal_reorder_of_axis_consumed_by_fuse", test_illegal_reorder_of_axis_consumed_by_fuse);
  CU_add_test(s, "test_illegal_split_of_axis_already_split", test_illegal_split_of_axis_already_split);
  CU_add_test(s, "test_illegal_compute_at_loop_not_enclosing_consumer",
              test_illegal_compute_at_loop_not_enclosing_consumer);
  CU_add_test(s, "test_illegal_compute_at_stage_that_does_not_consume_it",
              test_illegal_compute_at_stage_that_does_not_consume_it);
  CU_add_test(s, "test_illegal_compute_at_of_output_or_into_itself", test_illegal_compute_at_of_output_or_into_itself);
  CU_add_test(s, "test_illegal_vectorize_reduction_axis_without_rfactor",
              test_illegal_vectorize_reduction_axis_without_rfactor);
  CU_add_test(s, "test_illegal_non_positive_factor", test_illegal_non_positive_factor);
  CU_add_test(s, "test_illegal_unknown_stage_axis_or_tensor", test_illegal_unknown_stage_axis_or_tensor);
  CU_add_test(s, "test_C10_parallel_on_fused_reduction_axes_refused", test_C10_parallel_on_fused_reduction_axes_refused);
  CU_add_test(s, "test_illegal_prefetch_of_inlined_tensor", test_illegal_prefetch_of_inlined_tensor);
  CU_add_test(s, "test_C20_nested_unrolls_beyond_limit_refused_by_stage",
              test_C20_nested_unrolls_beyond_limit_refused_by_stage);
  CU_add_test(s, "test_illegal_vectorize_where_lanes_cannot_run", test_illegal_vectorize_where_lanes_cannot_run);
  CU_add_test(s, "test_illegal_reorder_duplicate_axis", test_illegal_reorder_duplicate_axis);
  CU_add_test(s, "test_illegal_cache_read_of_tensor_stage_does_not_read",
              test_illegal_cache_read_of_tensor_stage_does_not_read);
  CU_add_test(s, "test_illegal_cache_write_after_scheduling_or_other_scope",
              test_illegal_cache_write_after_scheduling_or_other_scope);
  CU_add_test(s, "test_illegal_split_or_fuse_of_attach_point", test_illegal_split_or_fuse_of_attach_point);
  CU_add_test(s, "test_illegal_storage_align", test_illegal_storage_align);
  CU_add_test(s, "test_illegal_prefetch_of_tensor_not_read", test_illegal_prefetch_of_tensor_not_read);
  CU_add_test(s, "test_illegal_compute_inline_of_reduction_or_output", test_illegal_compute_inline_of_reduction_or_output);
  CU_add_test(s, "test_illegal_cache_read_rolled_back_completely", test_illegal_cache_read_rolled_back_completely);
  CU_add_test(s, "test_illegal_rfactor", test_illegal_rfactor);
  CU_add_test(s, "test_illegal_storage_order", test_illegal_storage_order);
}
