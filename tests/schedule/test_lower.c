/* Structure of lowered IR: arguments, loop order, init placement, inlining,
 * allocations, flattening, limits, and the TSL_DEBUG=lower trace. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_stderr.h"
#include "sched_tests.h"

static tsl_func *lower_text(tsl_te_program *p, const char *text, const char *name) {
  tsl_schedule *s = NULL;
  if (tsl_schedule_from_text(p, text, &s) != TSL_OK) {
    fprintf(stderr, "\n%s: %s\n", name, tsl_last_error());
    return NULL;
  }
  tsl_func *f = NULL;
  if (tsl_lower(s, name, &f) != TSL_OK) fprintf(stderr, "\n%s: %s\n", name, tsl_last_error());
  tsl_schedule_free(s);
  return f;
}

static tsl_func *lower_default(tsl_te_program *p, const char *name) {
  tsl_schedule *s = NULL;
  if (tsl_schedule_create(p, &s) != TSL_OK) return NULL;
  tsl_func *f = NULL;
  if (tsl_lower(s, name, &f) != TSL_OK) fprintf(stderr, "\n%s: %s\n", name, tsl_last_error());
  tsl_schedule_free(s);
  return f;
}

static void test_lower_args_are_inputs_then_outputs(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(4, 6, 5);
  tsl_func *f = lower_default(p, "matmul_default");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_STRING_EQUAL(f->name, "matmul_default");
  CU_ASSERT_EQUAL_FATAL(f->nargs, 3);
  const char *names[3] = {"A", "B", "C"};
  const int64_t shapes[3][2] = {{4, 5}, {5, 6}, {4, 6}};
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_TRUE_FATAL(f->args[i].is_buffer);
    const tsl_buffer *b = f->args[i].buf;
    CU_ASSERT_STRING_EQUAL(b->name, names[i]);
    CU_ASSERT_EQUAL(b->kind, TSL_BUF_ARG);
    CU_ASSERT_TRUE(tsl_type_eq(b->dtype, TSL_F32));
    CU_ASSERT_EQUAL_FATAL(b->ndim, 2);
    CU_ASSERT_EQUAL(b->shape[0], shapes[i][0]);
    CU_ASSERT_EQUAL(b->shape[1], shapes[i][1]);
  }
  /* every access names one of these very buffer objects */
  CU_ASSERT_TRUE(st_buffers_are_args_or_local(f));
  CU_ASSERT_TRUE(st_binders_unique(f->body));
  st_arena_end(a);
}

static void test_lower_reduction_init_above_outermost_reduction_loop(void) {
  st_arena a = st_arena_begin();
  char loops[256];
  tsl_func *f = lower_default(st_matmul(4, 6, 5), "mm");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_TRUE(st_loops_around_store(f->body, "C", true, loops, sizeof loops));
  CU_ASSERT_STRING_EQUAL(loops, "i j");
  CU_ASSERT_TRUE(st_loops_around_store(f->body, "C", false, loops, sizeof loops));
  CU_ASSERT_STRING_EQUAL(loops, "i j k");

  /* conv: three reduction loops innermost, init above all of them (N = 2: the
   * simplifier drops loops of extent 1) */
  f = lower_default(st_conv_padded(2, 3, 6, 6, 2, 3, 3, 1, 1), "conv");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_TRUE(st_loops_around_store(f->body, "out", true, loops, sizeof loops));
  CU_ASSERT_STRING_EQUAL(loops, "n k y x");
  CU_ASSERT_TRUE(st_loops_around_store(f->body, "out", false, loops, sizeof loops));
  CU_ASSERT_STRING_EQUAL(loops, "n k y x rc ry rx");

  /* a spatial leaf moved inside the reduction: the init gets its own loop over it */
  f = lower_text(st_matmul(4, 6, 5), "reorder(C, k, j)\n", "mm_ikj");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_TRUE(st_loops_around_store(f->body, "C", true, loops, sizeof loops));
  CU_ASSERT_STRING_EQUAL(loops, "i j");
  CU_ASSERT_TRUE(st_loops_around_store(f->body, "C", false, loops, sizeof loops));
  CU_ASSERT_STRING_EQUAL(loops, "i k j");
  CU_ASSERT_TRUE(st_binders_unique(f->body));
  st_arena_end(a);
}

static void test_lower_loops_follow_leaf_order(void) {
  st_arena a = st_arena_begin();
  char loops[256];
  tsl_func *f = lower_text(st_elemwise_chain(6, 16), "compute_inline(B)\nsplit(out, j, 4)\nreorder(out, j.outer, i)\n",
                           "chain_split");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_TRUE(st_loops_around_store(f->body, "out", false, loops, sizeof loops));
  CU_ASSERT_STRING_EQUAL(loops, "j.outer i j.inner");
  st_counts c = st_count(f->body);
  CU_ASSERT_EQUAL(c.loops, 3);
  CU_ASSERT_EQUAL(c.multi_index_accesses, 0); /* storage flattened */
  st_arena_end(a);
}

static void test_lower_inlined_padding_has_no_allocation(void) {
  st_arena a = st_arena_begin();
  tsl_func *f = lower_default(st_conv_padded(1, 3, 6, 6, 2, 3, 3, 1, 1), "conv");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  st_counts c = st_count(f->body);
  CU_ASSERT_EQUAL(c.allocates, 0);
  CU_ASSERT_FALSE(st_mentions_buffer(f->body, "padded"));
  /* the read of data behind the padding select may fall outside data: predicated */
  CU_ASSERT_TRUE(c.predicated_loads >= 1);
  CU_ASSERT_TRUE(st_buffers_are_args_or_local(f));
  /* without padding nothing needs a predicate */
  f = lower_default(st_conv_padded(1, 3, 6, 6, 2, 3, 3, 0, 1), "conv_nopad");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(st_count(f->body).predicated_loads, 0);
  st_arena_end(a);
}

static const tsl_stmt *find_allocate(const tsl_stmt *s) {
  if (!s) return NULL;
  switch (s->kind) {
  case TSL_S_ALLOCATE: return s;
  case TSL_S_FOR: return find_allocate(s->loop.body);
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) {
      const tsl_stmt *r = find_allocate(s->seq.stmts[i]);
      if (r) return r;
    }
    return NULL;
  case TSL_S_IF: {
    const tsl_stmt *r = find_allocate(s->if_.then_case);
    return r ? r : find_allocate(s->if_.else_case);
  }
  case TSL_S_LET: return find_allocate(s->let.body);
  default: return NULL;
  }
}

static void test_lower_root_intermediate_is_allocated(void) {
  st_arena a = st_arena_begin();
  tsl_func *f = lower_default(st_row_center(4, 5), "center");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(f->nargs, 2);
  st_counts c = st_count(f->body);
  CU_ASSERT_EQUAL(c.allocates, 1);
  const tsl_stmt *al = find_allocate(f->body);
  CU_ASSERT_PTR_NOT_NULL_FATAL(al);
  CU_ASSERT_STRING_EQUAL(al->allocate.buf->name, "rowsum");
  CU_ASSERT_EQUAL(al->allocate.buf->kind, TSL_BUF_LOCAL);
  CU_ASSERT_EQUAL_FATAL(al->allocate.buf->ndim, 1);
  CU_ASSERT_EQUAL(al->allocate.buf->shape[0], 4);
  /* the allocation encloses both the producer and the consumer */
  CU_ASSERT_TRUE(st_mentions_buffer(al->allocate.body, "rowsum"));
  CU_ASSERT_TRUE(st_mentions_buffer(al->allocate.body, "out"));
  CU_ASSERT_TRUE(st_buffers_are_args_or_local(f));

  /* an injective stage left compute_root (initial schedule) is allocated too */
  f = lower_text(st_elemwise_chain(3, 5), "", "chain_root");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  al = find_allocate(f->body);
  CU_ASSERT_PTR_NOT_NULL_FATAL(al);
  CU_ASSERT_STRING_EQUAL(al->allocate.buf->name, "B");
  CU_ASSERT_EQUAL(al->allocate.buf->shape[0] * al->allocate.buf->shape[1], 15);
  /* a root padding stage read with stride 2: rows/columns 0..8 of 10 are read */
  f = lower_text(st_conv_padded(1, 2, 8, 8, 3, 3, 3, 1, 2), "", "conv_root_pad");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  al = find_allocate(f->body);
  CU_ASSERT_PTR_NOT_NULL_FATAL(al);
  CU_ASSERT_STRING_EQUAL(al->allocate.buf->name, "padded");
  CU_ASSERT_EQUAL_FATAL(al->allocate.buf->ndim, 4);
  CU_ASSERT_EQUAL(al->allocate.buf->shape[1], 2);
  CU_ASSERT_EQUAL(al->allocate.buf->shape[2], 9);
  CU_ASSERT_EQUAL(al->allocate.buf->shape[3], 9);
  /* and disappears when inlined */
  f = lower_default(st_elemwise_chain(3, 5), "chain_inline");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(st_count(f->body).allocates, 0);
  CU_ASSERT_FALSE(st_mentions_buffer(f->body, "B"));
  st_arena_end(a);
}

static void test_lower_vectorized_tail_becomes_predicates(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(st_elemwise_chain(3, 13),
                                               "compute_inline(B)\nsplit(out, j, 8)\nvectorize(out, j.inner)\n", &s),
                        TSL_OK);
  tsl_lower_options o = tsl_lower_options_default();
  o.tail = TSL_TAIL_GUARD;
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_lower_with(s, "chain_vec", &o, &f), TSL_OK);
  st_counts c = st_count(f->body);
  CU_ASSERT_EQUAL(c.vectorized, 0);
  CU_ASSERT_TRUE(c.vector_stores >= 1);
  CU_ASSERT_EQUAL(c.predicated_stores, c.stores); /* 13 = 8 + 5: the tail is masked */
  CU_ASSERT_TRUE(c.predicated_loads >= 1);
  /* partitioned: a main loop of whole vectors, the masked tail in an epilogue */
  CU_ASSERT_EQUAL_FATAL(tsl_lower(s, "chain_vec_part", &f), TSL_OK);
  c = st_count(f->body);
  CU_ASSERT_EQUAL(c.vector_stores, 2);
  CU_ASSERT_EQUAL(c.predicated_stores, 1);
  tsl_schedule_free(s);
  /* a dividing factor needs no predicate */
  f = lower_text(st_elemwise_chain(3, 16), "compute_inline(B)\nsplit(out, j, 8)\nvectorize(out, j.inner)\n",
                 "chain_vec16");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  c = st_count(f->body);
  CU_ASSERT_TRUE(c.vector_stores >= 1);
  CU_ASSERT_EQUAL(c.predicated_stores, 0);
  CU_ASSERT_EQUAL(c.predicated_loads, 0);
  st_arena_end(a);
}

static void test_lower_unroll_replicates_loop(void) {
  st_arena a = st_arena_begin();
  tsl_func *f = lower_text(st_elemwise_chain(3, 4), "compute_inline(B)\nunroll(out, j)\n", "chain_unroll");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  st_counts c = st_count(f->body);
  CU_ASSERT_EQUAL(c.loops, 1);
  CU_ASSERT_EQUAL(c.unrolled, 0);
  CU_ASSERT_EQUAL(c.stores, 4);
  st_arena_end(a);
}

static void test_C20_huge_unroll_or_vector_refused(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = NULL;
  tsl_te_program *p = st_elemwise_chain(2, 100000);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(p, "compute_inline(B)\nunroll(out, j)\n", &s), TSL_OK);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL(tsl_lower(s, "huge_unroll", &f), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NULL(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "unroll: axis j of stage out (extent 100000)"));
  tsl_schedule_free(s);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(p, "compute_inline(B)\nvectorize(out, j)\n", &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_lower(s, "huge_vector", &f), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "vectorize: axis j of stage out has 100000 iterations"));
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_lower_rejects_bad_input(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(st_matmul(2, 2, 2), &s), TSL_OK);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL(tsl_lower(s, "", &f), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_lower(NULL, "x", &f), TSL_ERR_INVALID);
  tsl_schedule_free(s);
  /* an input listed twice would make two arguments alias */
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){4});
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){4}, NULL);
  tsl_te_tensor *B = tsl_te_compute("B", 1, ax, tsl_te_read(A, 1, (tsl_expr *[]){ax[0].var}), NULL);
  tsl_te_program *p = tsl_te_program_new("dup", 2, (tsl_te_tensor *[]){A, A}, 1, &B);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(tsl_lower(s, "dup", &f), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "twice"));
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_lower_same_text_gives_same_ir(void) {
  st_arena a = st_arena_begin();
  const char *text = "compute_inline(padded)\nsplit(out, x, 4)\nvectorize(out, x.inner)\nunroll(out, rx)\n";
  tsl_te_program *p = st_conv_padded(1, 2, 5, 8, 2, 3, 3, 1, 1);
  tsl_func *f1 = lower_text(p, text, "k"), *f2 = lower_text(p, text, "k");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f2);
  char *s1 = tsl_stmt_to_string(f1->body), *s2 = tsl_stmt_to_string(f2->body);
  CU_ASSERT_STRING_EQUAL(s1, s2);
  free(s1);
  free(s2);
  st_arena_end(a);
}

typedef struct traced_lowering {
  tsl_te_program *p;
  bool quiet_option;
  tsl_func *f;
} traced_lowering;

static void run_lowering(void *arg) {
  traced_lowering *l = arg;
  l->f = NULL;
  if (l->quiet_option) {
    tsl_schedule *s = NULL;
    tsl_lower_options o = tsl_lower_options_default();
    o.quiet = true;
    if (tsl_schedule_create(l->p, &s) == TSL_OK && tsl_lower_with(s, "traced", &o, &l->f) != TSL_OK) l->f = NULL;
    tsl_schedule_free(s);
  } else {
    l->f = lower_default(l->p, "traced");
  }
}

/* Runs a lowering with TSL_DEBUG = debug and stderr captured; returns what was printed
 * (malloc'd), NULL when the lowering failed. */
static char *lower_capturing_stderr(tsl_te_program *p, const char *debug, bool quiet_option) {
  traced_lowering l = {p, quiet_option, NULL};
  char *text = tsl_test_capture_stderr(debug, run_lowering, &l);
  if (!l.f) {
    free(text);
    return NULL;
  }
  return text;
}

static void test_lower_debug_prints_each_pass(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(3, 4, 5);
  char *quiet = lower_capturing_stderr(p, NULL, false);
  CU_ASSERT_PTR_NOT_NULL_FATAL(quiet);
  CU_ASSERT_STRING_EQUAL(quiet, "");
  free(quiet);
  char *other = lower_capturing_stderr(p, "codegen", false);
  CU_ASSERT_PTR_NOT_NULL_FATAL(other);
  CU_ASSERT_STRING_EQUAL(other, "");
  free(other);
  char *trace = lower_capturing_stderr(p, "codegen,lower", false);
  CU_ASSERT_PTR_NOT_NULL_FATAL(trace);
  const char *steps[] = {"schedule_ops", "guard_loads", "storage_flatten", "simplify", "unroll", "vectorize", "simplify"};
  const char *at = trace;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    char header[96];
    snprintf(header, sizeof header, "--- lower traced: %s ---\n", steps[i]);
    const char *hit = strstr(at, header);
    CU_ASSERT_PTR_NOT_NULL(hit);
    if (!hit) break;
    at = hit + strlen(header);
    /* the IR follows each header */
    CU_ASSERT_PTR_NOT_NULL(strstr(at, "for"));
  }
  free(trace);
  /* a lowering made only as a check (options.quiet) prints no trace */
  char *check = lower_capturing_stderr(p, "lower", true);
  CU_ASSERT_PTR_NOT_NULL_FATAL(check);
  CU_ASSERT_STRING_EQUAL(check, "");
  free(check);
  st_arena_end(a);
}

void tsl_tests_schedule_lower(void) {
  CU_pSuite s = CU_add_suite("schedule/lower", NULL, NULL);
  CU_add_test(s, "test_lower_args_are_inputs_then_outputs", test_lower_args_are_inputs_then_outputs);
  CU_add_test(s, "test_lower_reduction_init_above_outermost_reduction_loop",
              test_lower_reduction_init_above_outermost_reduction_loop);
  CU_add_test(s, "test_lower_loops_follow_leaf_order", test_lower_loops_follow_leaf_order);
  CU_add_test(s, "test_lower_inlined_padding_has_no_allocation", test_lower_inlined_padding_has_no_allocation);
  CU_add_test(s, "test_lower_root_intermediate_is_allocated", test_lower_root_intermediate_is_allocated);
  CU_add_test(s, "test_lower_vectorized_tail_becomes_predicates", test_lower_vectorized_tail_becomes_predicates);
  CU_add_test(s, "test_lower_unroll_replicates_loop", test_lower_unroll_replicates_loop);
  CU_add_test(s, "test_C20_huge_unroll_or_vector_refused", test_C20_huge_unroll_or_vector_refused);
  CU_add_test(s, "test_lower_rejects_bad_input", test_lower_rejects_bad_input);
  CU_add_test(s, "test_lower_same_text_gives_same_ir", test_lower_same_text_gives_same_ir);
  CU_add_test(s, "test_lower_debug_prints_each_pass", test_lower_debug_prints_each_pass);
}
