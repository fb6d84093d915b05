/* The primitives beyond split/fuse/reorder: split by nparts, tile, compute_at,
 * cache_read, cache_write, storage_align, prefetch; their text form; the lowered IR they
 * give (regions, buffers, partitioned tails, register blocks) and their results against
 * the naive references. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/analysis.h"
#include "ref/ref_ops.h"
#include "sched_tests.h"

static tsl_schedule *from_text(tsl_te_program *p, const char *text) {
  tsl_schedule *s = NULL;
  if (tsl_schedule_from_text(p, text, &s) != TSL_OK) fprintf(stderr, "\nschedule: %s\n", tsl_last_error());
  return s;
}

/* C = A*B with the schedule text, lowered with tail strategy `tail` and the host's
 * vectors, compared with the reference; returns the lowered kernel (NULL on failure). */
static tsl_func *check_matmul(int64_t M, int64_t N, int64_t K, const char *text, const char *name,
                              tsl_tail_strategy tail) {
  tsl_te_program *p = st_matmul(M, N, K);
  tsl_schedule *s = from_text(p, text);
  CU_ASSERT_PTR_NOT_NULL(s);
  if (!s) return NULL;
  tsl_func *f = st_lower_host(s, name, tail);
  tsl_schedule_free(s);
  CU_ASSERT_PTR_NOT_NULL(f);
  if (!f) return NULL;
  float *A = st_alloc_f32(M * K), *B = st_alloc_f32(K * N), *C = st_alloc_f32(M * N), *R = st_alloc_f32(M * N);
  ref_fill_uniform(A, M * K, 21, -1.0f, 1.0f);
  ref_fill_uniform(B, K * N, 22, -1.0f, 1.0f);
  for (int64_t i = 0; i < M * N; i++) C[i] = NAN;
  ref_matmul(M, N, K, A, B, R);
  CU_ASSERT_TRUE(st_run(f, (void *[]){A, B, C}));
  CU_ASSERT_TRUE(ref_max_rel_error(C, R, M * N) < 1e-5);
  free(A);
  free(B);
  free(C);
  free(R);
  return f;
}

static const char *leaf(const tsl_stage *st, int k) { return st->iters[st->leaf[k]].name; }

static void test_split_nparts_gives_nparts_outer_iterations(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = from_text(st_matmul(4, 13, 5), "split(C, j, nparts=3)\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  tsl_stage *c = tsl_schedule_stage(s, "C");
  CU_ASSERT_STRING_EQUAL(leaf(c, 1), "j.outer");
  CU_ASSERT_EQUAL(c->iters[c->leaf[1]].extent, 3);
  CU_ASSERT_EQUAL(c->iters[c->leaf[2]].extent, 5); /* ceil(13 / 3) */
  char *text = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(text, "split(C, j, nparts=3)\n");
  free(text);
  tsl_schedule_free(s);
  check_matmul(4, 13, 5, "split(C, j, nparts=3)\nvectorize(C, j.inner)\n", "nparts", TSL_TAIL_PARTITION);
  check_matmul(4, 13, 5, "split(C, j, nparts=3)\nvectorize(C, j.inner)\n", "nparts_g", TSL_TAIL_GUARD);
  st_arena_end(a);
}

static void test_tile_splits_and_reorders_two_axes(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = from_text(st_matmul(9, 13, 5), "tile(C, i, j, 4, 8)\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  tsl_stage *c = tsl_schedule_stage(s, "C");
  const char *want[5] = {"i.outer", "j.outer", "i.inner", "j.inner", "k"};
  CU_ASSERT_EQUAL_FATAL(c->nleaf, 5);
  for (int k = 0; k < 5; k++) CU_ASSERT_STRING_EQUAL(leaf(c, k), want[k]);
  tsl_schedule_free(s);
  check_matmul(9, 13, 5, "tile(C, i, j, 4, 8)\nvectorize(C, j.inner)\nunroll(C, i.inner)\n", "tile", TSL_TAIL_PARTITION);
  st_arena_end(a);
}

/* B[i] = A[i] * 2 over 16 points, out[i] = B[i] + B[i + 1] over 15, split by 4 with B
 * computed per outer iteration: each iteration realizes B over 5 points; the last one
 * (out 12..14) would need B[12..16], but B[16] (and A[16]) do not exist: the domain check
 * keeps the producer inside its tensor (A ends at a guard page). */
static void test_compute_at_realizes_the_tile_and_stays_in_bounds(void) {
  st_arena a = st_arena_begin();
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){16});
  tsl_iter_var *bx = tsl_te_axes(1, (int64_t[]){16}, (const char *[]){"i"});
  tsl_te_tensor *B =
      tsl_te_compute("B", 1, bx, tsl_mul(tsl_te_read(A, 1, (tsl_expr *[]){bx[0].var}), tsl_f32(2.0f)), NULL);
  tsl_iter_var *ox = tsl_te_axes(1, (int64_t[]){15}, (const char *[]){"i"});
  tsl_expr *i = ox[0].var;
  tsl_expr *sum = tsl_add(tsl_te_read(B, 1, (tsl_expr *[]){i}), tsl_te_read(B, 1, (tsl_expr *[]){tsl_add(i, tsl_i64(1))}));
  tsl_te_tensor *out = tsl_te_compute("out", 1, ox, sum, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  tsl_te_program *p = tsl_te_program_new("pairs", 1, &A, 1, &out);
  const tsl_tail_strategy tails[2] = {TSL_TAIL_PARTITION, TSL_TAIL_GUARD};
  for (int t = 0; t < 2; t++) {
    tsl_schedule *s = from_text(p, "split(out, i, 4)\ncompute_at(B, out, i.outer)\nvectorize(out, i.inner)\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tsl_func *f = st_lower_host(s, t ? "tile_g" : "tile_p", tails[t]);
    tsl_schedule_free(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    /* B lives inside the outer loop, 5 elements a tile */
    const tsl_stmt *loop = f->body;
    while (loop && loop->kind == TSL_S_SEQ) loop = loop->seq.stmts[0];
    CU_ASSERT_TRUE_FATAL(loop && loop->kind == TSL_S_FOR);
    const tsl_stmt *in = loop->loop.body;
    CU_ASSERT_EQUAL_FATAL(in->kind, TSL_S_ALLOCATE);
    CU_ASSERT_EQUAL(in->allocate.buf->shape[0], 5);
    float *x = st_alloc_guarded(16), *y = st_alloc_f32(15);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (int k = 0; k < 16; k++) x[k] = (float)(k * k);
    CU_ASSERT_TRUE(st_run(f, (void *[]){x, y}));
    int bad = 0;
    for (int k = 0; k < 15; k++) bad += y[k] != 2.0f * x[k] + 2.0f * x[k + 1];
    CU_ASSERT_EQUAL(bad, 0);
    st_free_guarded(x, 16);
    free(y);
  }
  st_arena_end(a);
}

static void check_conv(const char *text, const char *name, int64_t C, int64_t H, int64_t W, int64_t K, int64_t pad,
                       int64_t stride) {
  ref_conv2d_params prm = {1, C, H, W, K, 3, 3, stride, stride, pad, pad, pad, pad, 1, 1, 1};
  int64_t OH = ref_conv2d_out_h(&prm), OW = ref_conv2d_out_w(&prm);
  int64_t nd = C * H * W, nw = K * C * 9, no = K * OH * OW;
  tsl_schedule *s = from_text(st_conv_padded(1, C, H, W, K, 3, 3, pad, stride), text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  tsl_func *f = st_lower_host(s, name, TSL_TAIL_PARTITION);
  tsl_schedule_free(s);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  float *d = st_alloc_f32(nd), *w = st_alloc_f32(nw), *o = st_alloc_f32(no), *r = st_alloc_f32(no);
  ref_fill_uniform(d, nd, 31, -1.0f, 1.0f);
  ref_fill_uniform(w, nw, 32, -1.0f, 1.0f);
  ref_conv2d_nchw(&prm, d, w, NULL, r);
  CU_ASSERT_TRUE(st_run(f, (void *[]){d, w, o}));
  CU_ASSERT_TRUE(ref_max_rel_error(o, r, no) < 1e-5);
  free(d);
  free(w);
  free(o);
  free(r);
}

/* The padding stage computed per output row: its buffer holds the 3 padded rows (all
 * channels, the full padded width) that one row of the output reads. */
static void test_compute_at_padding_per_output_row(void) {
  st_arena a = st_arena_begin();
  const char *text = "compute_root(padded)\ncompute_at(padded, out, y)\nsplit(out, x, 8)\nvectorize(out, x.inner)\n";
  tsl_schedule *s = from_text(st_conv_padded(1, 2, 9, 13, 3, 3, 3, 1, 1), text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL(tsl_lower(s, "pad_row", &f), TSL_OK);
  tsl_schedule_free(s);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char loops[256];
  CU_ASSERT_TRUE(st_loops_around_store(f->body, "padded", false, loops, sizeof loops));
  CU_ASSERT_STRING_EQUAL(loops, "k y c y x"); /* inside out's k and y; then its own loops */
  check_conv(text, "pad_row_run", 2, 9, 13, 3, 1, 1);
  check_conv(text, "pad_row_s2", 2, 9, 13, 3, 2, 2);
  st_arena_end(a);
}

/* The high-performance matmul shape (bench/matmul's schedule, smaller): a 6 x 16
 * register block accumulated in C.local with k outermost, a packed panel of B per
 * j.outer, A broadcast. The steady-state loop must be clean: no branch, no mask, only
 * fused multiply-adds on whole native vectors at constant offsets of the block. */
static const char *register_block =
    "cache_write(C, local)\n"
    "cache_read(B, local, C.local)\n"
    "split(C, i, 6)\n"
    "split(C, j, 16)\n"
    "reorder(C, j.outer, i.outer, i.inner, j.inner)\n"
    "compute_at(C.local, C, i.outer)\n"
    "split(C.local, j, 8)\n"
    "reorder(C.local, k, i, j.outer, j.inner)\n"
    "unroll(C.local, i)\n"
    "unroll(C.local, j.outer)\n"
    "vectorize(C.local, j.inner)\n"
    "compute_at(B.local, C, j.outer)\n"
    "split(B.local, ax1, 8)\n"
    "vectorize(B.local, ax1.inner)\n"
    "split(C, j.inner, 8)\n"
    "unroll(C, i.inner)\n"
    "vectorize(C, j.inner.inner)\n";

typedef struct k_loop_check {
  int ifs, predicated, fma, scalar_stores, broadcast_loads, dense_loads, other_loads;
} k_loop_check;

static void scan_expr(const tsl_expr *e, k_loop_check *c) {
  if (!e) return;
  switch (e->kind) {
  case TSL_E_LOAD:
    if (e->load.predicate) c->predicated++;
    if (e->type.lanes == 1) c->other_loads++;
    else if (e->load.index[0]->kind == TSL_E_RAMP) c->dense_loads++;
    else c->other_loads++;
    for (int i = 0; i < e->load.nindex; i++) scan_expr(e->load.index[i], c);
    return;
  case TSL_E_BROADCAST:
    if (e->broadcast.value->kind == TSL_E_LOAD) {
      c->broadcast_loads++;
      return;
    }
    scan_expr(e->broadcast.value, c);
    return;
  case TSL_E_CALL:
    c->fma += e->call.op == TSL_CALL_FMA;
    for (int i = 0; i < e->call.nargs; i++) scan_expr(e->call.args[i], c);
    return;
  case TSL_E_RAMP: scan_expr(e->ramp.base, c); return;
  case TSL_E_INT: case TSL_E_FLOAT: case TSL_E_VAR: return;
  case TSL_E_NOT: case TSL_E_CAST: scan_expr(e->un.a, c); return;
  case TSL_E_SELECT:
    c->ifs++;
    return;
  default:
    if (e->kind >= TSL_E_ADD && e->kind <= TSL_E_OR) {
      scan_expr(e->bin.a, c);
      scan_expr(e->bin.b, c);
    }
    return;
  }
}

static void scan_stmt(const tsl_stmt *s, k_loop_check *c) {
  if (!s) return;
  switch (s->kind) {
  case TSL_S_FOR: scan_stmt(s->loop.body, c); return;
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) scan_stmt(s->seq.stmts[i], c);
    return;
  case TSL_S_IF: c->ifs++; return;
  case TSL_S_STORE:
    if (s->store.predicate) c->predicated++;
    if (s->store.value->type.lanes == 1) c->scalar_stores++;
    scan_expr(s->store.value, c);
    return;
  default: c->ifs++; return; /* nothing else belongs in the micro-kernel */
  }
}

static const tsl_stmt *first_loop(const tsl_stmt *s, const char *name) {
  if (!s) return NULL;
  switch (s->kind) {
  case TSL_S_FOR:
    if (strcmp(s->loop.var->var.name, name) == 0) return s;
    return first_loop(s->loop.body, name);
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) {
      const tsl_stmt *r = first_loop(s->seq.stmts[i], name);
      if (r) return r;
    }
    return NULL;
  case TSL_S_ALLOCATE: return first_loop(s->allocate.body, name);
  case TSL_S_IF: return first_loop(s->if_.then_case, name);
  case TSL_S_LET: return first_loop(s->let.body, name);
  default: return NULL;
  }
}

/* The stores of s in order (through sequences only), at most 64. */
static int collect_stores(const tsl_stmt *s, const tsl_stmt **out, int n) {
  if (s->kind == TSL_S_STORE && n < 64) out[n++] = s;
  if (s->kind == TSL_S_SEQ)
    for (int i = 0; i < s->seq.n; i++) n = collect_stores(s->seq.stmts[i], out, n);
  return n;
}

static void test_cache_write_register_block_lowers_to_clean_micro_kernel(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = from_text(st_matmul(13, 40, 19), register_block);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  tsl_lower_options o = tsl_lower_options_default();
  o.vector_bits = 256; /* 8 f32 lanes, as on AVX2, whatever the host */
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_lower_with(s, "register_block", &o, &f), TSL_OK);
  tsl_schedule_free(s);
  /* the first k loop is the steady state's (partitioned tails come after it) */
  const tsl_stmt *k = first_loop(f->body, "k");
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  CU_ASSERT_EQUAL(k->loop.for_kind, TSL_FOR_SERIAL);
  k_loop_check c = {0};
  scan_stmt(k->loop.body, &c);
  CU_ASSERT_EQUAL(c.ifs, 0);
  CU_ASSERT_EQUAL(c.predicated, 0);
  CU_ASSERT_EQUAL(c.scalar_stores, 0);
  CU_ASSERT_EQUAL(c.fma, 12);             /* 6 rows x 2 vectors of 8 */
  CU_ASSERT_EQUAL(c.broadcast_loads, 12); /* A[i, k], one scalar a row (CSE'd by LLVM) */
  CU_ASSERT_EQUAL(c.dense_loads, 24);     /* the B panel and the accumulators */
  CU_ASSERT_EQUAL(c.other_loads, 0);
  /* every accumulator access is at a constant offset of the block (registers after
   * LLVM's scalar replacement) */
  const tsl_stmt *stores[64];
  int nstores = collect_stores(k->loop.body, stores, 0);
  CU_ASSERT_EQUAL(nstores, 12);
  for (int i = 0; i < nstores; i++) {
    const tsl_stmt *st = stores[i];
    CU_ASSERT_STRING_EQUAL(st->store.buf->name, "C.local");
    CU_ASSERT_EQUAL(st->store.value->type.lanes, 8);
    int64_t off;
    CU_ASSERT_TRUE(st->store.index[0]->kind == TSL_E_RAMP &&
                   tsl_expr_is_const_int(st->store.index[0]->ramp.base, &off) && off % 8 == 0);
  }
  /* and it computes the right thing, tails included, both tail strategies */
  check_matmul(13, 40, 19, register_block, "register_block_run", TSL_TAIL_PARTITION);
  check_matmul(13, 40, 19, register_block, "register_block_guard", TSL_TAIL_GUARD);
  check_matmul(12, 32, 7, register_block, "register_block_exact", TSL_TAIL_PARTITION);
  st_arena_end(a);
}

static void test_cache_read_packs_a_tile_per_iteration(void) {
  st_arena a = st_arena_begin();
  /* the reader keeps its schedule when cache_read comes after its loop steps */
  tsl_schedule *s = from_text(st_matmul(5, 19, 7), "split(C, j, 8)\nvectorize(C, j.inner)\ncache_read(B, local, C)\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  tsl_stage *c = tsl_schedule_stage(s, "C");
  CU_ASSERT_EQUAL(c->nleaf, 4);
  CU_ASSERT_STRING_EQUAL(leaf(c, 2), "j.inner");
  CU_ASSERT_EQUAL(c->iters[c->leaf[2]].annotation, TSL_FOR_VECTORIZED);
  tsl_schedule_free(s);
  const char *text = "cache_read(B, local, C)\nsplit(C, j, 8)\nreorder(C, j.outer, i, k, j.inner)\n"
                     "compute_at(B.local, C, j.outer)\nvectorize(C, j.inner)\n";
  tsl_func *f = check_matmul(5, 19, 7, text, "pack_b", TSL_TAIL_PARTITION);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  /* a K x 8 panel, allocated inside j.outer */
  const tsl_stmt *jo = first_loop(f->body, "j.outer");
  CU_ASSERT_PTR_NOT_NULL_FATAL(jo);
  CU_ASSERT_EQUAL_FATAL(jo->loop.body->kind, TSL_S_ALLOCATE);
  const tsl_buffer *b = jo->loop.body->allocate.buf;
  CU_ASSERT_STRING_EQUAL(b->name, "B.local");
  CU_ASSERT_EQUAL(b->shape[0], 7);
  CU_ASSERT_EQUAL(b->shape[1], 8);
  st_arena_end(a);
}

static void test_storage_align_pads_the_row_stride(void) {
  st_arena a = st_arena_begin();
  const char *text = "cache_read(A, local, C)\nstorage_align(A.local, ax0, 16, 1)\n";
  tsl_schedule *s = from_text(st_matmul(5, 6, 13), text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_lower(s, "align", &f), TSL_OK);
  tsl_schedule_free(s);
  CU_ASSERT_EQUAL_FATAL(f->body->kind, TSL_S_ALLOCATE);
  const tsl_buffer *b = f->body->allocate.buf;
  CU_ASSERT_PTR_NOT_NULL_FATAL(b->strides);
  CU_ASSERT_EQUAL(b->strides[0], 17); /* 13 padded to 16k + 1 */
  CU_ASSERT_EQUAL(b->strides[1], 1);
  check_matmul(5, 6, 13, text, "align_run", TSL_TAIL_PARTITION);
  st_arena_end(a);
}

static void count_prefetch(const tsl_stmt *s, int *n) {
  if (!s) return;
  switch (s->kind) {
  case TSL_S_FOR: count_prefetch(s->loop.body, n); return;
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) count_prefetch(s->seq.stmts[i], n);
    return;
  case TSL_S_ALLOCATE: count_prefetch(s->allocate.body, n); return;
  case TSL_S_IF:
    count_prefetch(s->if_.then_case, n);
    count_prefetch(s->if_.else_case, n);
    return;
  case TSL_S_LET: count_prefetch(s->let.body, n); return;
  case TSL_S_EVALUATE:
    *n += s->evaluate.value->kind == TSL_E_CALL && s->evaluate.value->call.op == TSL_CALL_PREFETCH;
    return;
  default: return;
  }
}

static void test_prefetch_pragma_emits_prefetches_in_its_loop(void) {
  st_arena a = st_arena_begin();
  const char *text = "split(C, j, 8)\nreorder(C, i, j.outer, k, j.inner)\nprefetch(C, B, k, 2)\nvectorize(C, j.inner)\n";
  tsl_func *f = check_matmul(3, 16, 9, text, "prefetch", TSL_TAIL_PARTITION);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const tsl_stmt *k = first_loop(f->body, "k");
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  int n = 0;
  count_prefetch(k->loop.body, &n);
  CU_ASSERT_TRUE(n >= 1); /* 8 floats of B a row: one cache line (two prefetches at most) */
  CU_ASSERT_TRUE(n <= 2);
  st_arena_end(a);
}

/* The first prefetch under s and the loop variables around it (outermost first). */
static const tsl_expr *find_prefetch(const tsl_stmt *s, tsl_expr **vars, int *nvars) {
  if (!s) return NULL;
  switch (s->kind) {
  case TSL_S_FOR: {
    if (*nvars == 16) return NULL;
    vars[(*nvars)++] = s->loop.var;
    const tsl_expr *r = find_prefetch(s->loop.body, vars, nvars);
    if (!r) (*nvars)--;
    return r;
  }
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) {
      const tsl_expr *r = find_prefetch(s->seq.stmts[i], vars, nvars);
      if (r) return r;
    }
    return NULL;
  case TSL_S_ALLOCATE: return find_prefetch(s->allocate.body, vars, nvars);
  case TSL_S_IF: return find_prefetch(s->if_.then_case, vars, nvars);
  case TSL_S_LET: return find_prefetch(s->let.body, vars, nvars);
  case TSL_S_EVALUATE: {
    const tsl_expr *e = s->evaluate.value;
    return e->kind == TSL_E_CALL && e->call.op == TSL_CALL_PREFETCH ? e : NULL;
  }
  default: return NULL;
  }
}

/* The element offset a prefetch reads with the loop variables vars[0..n) at values[]
 * (every other variable 0), or -1 if it does not fold to a constant. */
static int64_t prefetch_offset_at(const tsl_expr *pf, tsl_expr **vars, int n, const char *const *names,
                                  const int64_t *values, int nnames) {
  const tsl_expr *ld = pf->call.args[0];
  if (ld->kind != TSL_E_LOAD || ld->load.nindex != 1) return -1;
  tsl_expr *vals[16];
  for (int i = 0; i < n; i++) {
    vals[i] = tsl_i64(0);
    for (int j = 0; j < nnames; j++)
      if (strcmp(vars[i]->var.name, names[j]) == 0) vals[i] = tsl_i64(values[j]);
  }
  tsl_expr *e = tsl_simplify(tsl_substitute(ld->load.index[0], n, vars, vals), NULL);
  return e->kind == TSL_E_INT ? e->int_value : -1;
}

/* A prefetch past a loop's last iteration on a compact buffer reads the lines that
 * follow in memory (the next row of A when k runs out: what the next i reads), and
 * never past the buffer's end. */
static void test_prefetch_past_the_loop_goes_on_in_memory(void) {
  st_arena a = st_arena_begin();
  const int64_t M = 3, N = 4, K = 9;
  tsl_func *f = check_matmul(M, N, K, "prefetch(C, A, k, 2)\n", "prefetch_flat", TSL_TAIL_PARTITION);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  tsl_expr *vars[16];
  int n = 0;
  const tsl_expr *pf = find_prefetch(f->body, vars, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(pf);
  const char *names[2] = {"i", "k"};
  /* inside the row: A[i][k + 2] */
  CU_ASSERT_EQUAL(prefetch_offset_at(pf, vars, n, names, (int64_t[]){1, 3}, 2), 1 * K + 5);
  /* k = K - 1: A[i][K + 1] is A[i + 1][1], not A[i][K - 1] clamped in its row */
  CU_ASSERT_EQUAL(prefetch_offset_at(pf, vars, n, names, (int64_t[]){0, K - 1}, 2), K + 1);
  /* the last row: clamped to A's last element */
  CU_ASSERT_EQUAL(prefetch_offset_at(pf, vars, n, names, (int64_t[]){M - 1, K - 1}, 2), M * K - 1);
  st_arena_end(a);
}

/* Whole rows of a line-aligned buffer whose rows are whole lines: one prefetch per line
 * (B's rows of 32 floats: 2), not one per line plus the span's last element. */
static void test_prefetch_of_whole_aligned_rows_one_per_line(void) {
  st_arena a = st_arena_begin();
  tsl_func *f = check_matmul(3, 32, 5, "reorder(C, i, k, j)\nprefetch(C, B, k, 1)\n", "prefetch_rows", TSL_TAIL_PARTITION);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const tsl_stmt *line = first_loop(f->body, "pf.line");
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  CU_ASSERT_EQUAL(line->loop.extent->kind, TSL_E_INT);
  CU_ASSERT_EQUAL(line->loop.extent->int_value, 2);
  tsl_expr *vars[16];
  int n = 0;
  const tsl_expr *pf = find_prefetch(f->body, vars, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(pf);
  const char *names[2] = {"k", "pf.line"};
  /* B[k + 1][16 * line]: the second line of row 3 */
  CU_ASSERT_EQUAL(prefetch_offset_at(pf, vars, n, names, (int64_t[]){2, 1}, 2), 3 * 32 + 16);
  st_arena_end(a);
}

/* Guarded and partitioned tails give the same bits (same fma chains), and the
 * partitioned main loop has no masks. */
static void test_partitioned_and_guarded_tails_agree(void) {
  st_arena a = st_arena_begin();
  const char *text = "split(C, j, 8)\nsplit(C, i, 3)\nreorder(C, i.outer, j.outer, k, i.inner, j.inner)\n"
                     "unroll(C, i.inner)\nvectorize(C, j.inner)\nparallel(C, i.outer)\n";
  const int64_t M = 10, N = 21, K = 6;
  float *A = st_alloc_f32(M * K), *B = st_alloc_f32(K * N), *C1 = st_alloc_f32(M * N), *C2 = st_alloc_f32(M * N);
  ref_fill_uniform(A, M * K, 51, -1.0f, 1.0f);
  ref_fill_uniform(B, K * N, 52, -1.0f, 1.0f);
  tsl_schedule *s = from_text(st_matmul(M, N, K), text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  tsl_func *fp = st_lower_host(s, "tails_p", TSL_TAIL_PARTITION), *fg = st_lower_host(s, "tails_g", TSL_TAIL_GUARD);
  tsl_schedule_free(s);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fg);
  CU_ASSERT_TRUE(st_run(fp, (void *[]){A, B, C1}));
  CU_ASSERT_TRUE(st_run(fg, (void *[]){A, B, C2}));
  CU_ASSERT_EQUAL(memcmp(C1, C2, sizeof(float) * (size_t)(M * N)), 0);
  const tsl_stmt *k = first_loop(fp->body, "k");
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  st_counts c = st_count(k->loop.body);
  CU_ASSERT_EQUAL(c.predicated_stores, 0);
  CU_ASSERT_EQUAL(c.predicated_loads, 0);
  CU_ASSERT_TRUE(c.vector_stores >= 3);
  CU_ASSERT_TRUE(st_count(fg->body).predicated_stores > 0);
  free(A);
  free(B);
  free(C1);
  free(C2);
  st_arena_end(a);
}

static int max_store_lanes(const tsl_stmt *s) {
  if (!s) return 0;
  int m = 0, x;
  switch (s->kind) {
  case TSL_S_FOR: return max_store_lanes(s->loop.body);
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++)
      if ((x = max_store_lanes(s->seq.stmts[i])) > m) m = x;
    return m;
  case TSL_S_IF:
    m = max_store_lanes(s->if_.then_case);
    x = max_store_lanes(s->if_.else_case);
    return x > m ? x : m;
  case TSL_S_ALLOCATE: return max_store_lanes(s->allocate.body);
  case TSL_S_LET: return max_store_lanes(s->let.body);
  case TSL_S_STORE: return s->store.value->type.lanes;
  default: return 0;
  }
}

/* A vectorized loop of 32 f32 lanes on a 256-bit target becomes four 8-lane vectors. */
static void test_vectors_use_the_native_width(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = from_text(st_elemwise_chain(3, 37), "compute_inline(B)\nsplit(out, j, 32)\nvectorize(out, j.inner)\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  tsl_lower_options o = tsl_lower_options_default();
  o.vector_bits = 256;
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_lower_with(s, "native", &o, &f), TSL_OK);
  tsl_schedule_free(s);
  /* 37 = 32 + 5: four whole vectors in the main part, one masked vector in the tail
   * (the other three tail vectors are out of range and dropped) */
  st_counts c = st_count(f->body);
  CU_ASSERT_EQUAL(c.vector_stores, 5);
  CU_ASSERT_EQUAL(c.predicated_stores, 1);
  CU_ASSERT_EQUAL(max_store_lanes(f->body), 8);
  float *x = st_alloc_f32(3 * 37), *y = st_alloc_f32(3 * 37);
  ref_fill_uniform(x, 3 * 37, 61, -2.0f, 2.0f);
  CU_ASSERT_TRUE(st_run(f, (void *[]){x, y}));
  int bad = 0;
  for (int i = 0; i < 3 * 37; i++) bad += y[i] != x[i] * 2.0f + 1.0f;
  CU_ASSERT_EQUAL(bad, 0);
  free(x);
  free(y);
  st_arena_end(a);
}

static void test_float_sum_of_products_accumulates_with_fma(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(st_matmul(2, 3, 4), &s), TSL_OK);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_lower(s, "fma", &f), TSL_OK);
  tsl_schedule_free(s);
  char *text = tsl_stmt_to_string(f->body);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "fma("));
  free(text);
  st_arena_end(a);
}

/* Every primitive prints as it was written and replays to the same text. */
static void test_text_round_trip_of_every_primitive(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_conv_padded(1, 3, 8, 8, 4, 3, 3, 1, 1);
  const char *text = "compute_root(padded)\n"
                     "cache_write(out, local)\n"
                     "cache_read(weight, local, out.local)\n"
                     "split(out, x, nparts=2)\n"
                     "tile(out, y, x.inner, 2, 4)\n"
                     "compute_at(out.local, out, x.inner.outer)\n"
                     "compute_at(padded, out, y.outer)\n"
                     "compute_at(weight.local, out, y.outer)\n"
                     "storage_align(padded, y, 8, 2)\n"
                     "fuse(out, n, k)\n"
                     "reorder(out.local, rc, ry, rx, x)\n"
                     "split(out.local, k, 2)\n"
                     "unroll(out.local, k.inner)\n"
                     "vectorize(out.local, x)\n"
                     "prefetch(out.local, weight.local, rc, 1)\n"
                     "parallel(out, n.k.fused)\n"
                     "compute_inline(padded)\n"
                     "compute_root(padded)\n";
  tsl_schedule *s = from_text(p, text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  char *printed = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(printed, text);
  tsl_schedule *again = from_text(p, printed);
  CU_ASSERT_PTR_NOT_NULL_FATAL(again);
  char *printed2 = tsl_schedule_to_string(again);
  CU_ASSERT_STRING_EQUAL(printed2, printed);
  /* both lower to the same IR */
  tsl_func *f1 = NULL, *f2 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_lower(s, "rt", &f1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_lower(again, "rt", &f2), TSL_OK);
  char *ir1 = tsl_stmt_to_string(f1->body), *ir2 = tsl_stmt_to_string(f2->body);
  CU_ASSERT_STRING_EQUAL(ir1, ir2);
  free(ir1);
  free(ir2);
  free(printed);
  free(printed2);
  tsl_schedule_free(s);
  tsl_schedule_free(again);
  /* factor= is the plain split; keywords belong to split only */
  s = from_text(st_matmul(4, 6, 5), "split(C, j, factor=4)\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  printed = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(printed, "split(C, j, 4)\n");
  free(printed);
  tsl_schedule_free(s);
  s = NULL;
  CU_ASSERT_EQUAL(tsl_schedule_from_text(st_matmul(4, 6, 5), "split(C, j, parts=4)\n", &s), TSL_ERR_PARSE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "schedule:1:13: unknown keyword"));
  CU_ASSERT_EQUAL(tsl_schedule_from_text(st_matmul(4, 6, 5), "tile(C, i, j, nparts=2, 2)\n", &s), TSL_ERR_PARSE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "keyword arguments are for split only"));
  CU_ASSERT_EQUAL(tsl_schedule_from_text(st_matmul(4, 6, 5), "split(C, j, nparts=x)\n", &s), TSL_ERR_PARSE);
  CU_ASSERT_PTR_NULL(s);
  /* the full schedule runs */
  check_conv(text, "rt_run", 3, 8, 8, 4, 1, 1);
  st_arena_end(a);
}

/* cache_read names the new stage (unique when the name is taken) and returns it. */
static void test_cache_steps_return_new_stage_names(void) {
  st_arena a = st_arena_begin();
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(st_matmul(4, 6, 5), &s), TSL_OK);
  const char *cw = NULL, *cr1 = NULL, *cr2 = NULL;
  const tsl_stage *c = tsl_schedule_stage(s, "C");
  CU_ASSERT_EQUAL(c->nroot, 3);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_cache_write(s, "C", "local", &cw), TSL_OK);
  CU_ASSERT_STRING_EQUAL(cw, "C.local");
  /* the same stage object, now the copy out of C.local: no reduction axis left */
  CU_ASSERT_PTR_EQUAL(tsl_schedule_stage(s, "C"), c);
  CU_ASSERT_EQUAL(c->nroot, 2);
  const char *reader = "C.local";
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_cache_read(s, "A", "local", 1, &reader, &cr1), TSL_OK);
  CU_ASSERT_STRING_EQUAL(cr1, "A.local");
  reader = "A.local";
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_cache_read(s, "A", "local", 1, &reader, &cr2), TSL_OK);
  CU_ASSERT_STRING_EQUAL(cr2, "A.local_1");
  /* producers first: A.local_1, A.local, C.local, C */
  CU_ASSERT_EQUAL(s->nstages, 4);
  CU_ASSERT_EQUAL(tsl_schedule_stage_index(s, "A.local_1"), 0);
  CU_ASSERT_EQUAL(tsl_schedule_stage_index(s, "C"), 3);
  tsl_schedule_free(s);
  check_matmul(4, 6, 5, "cache_write(C, local)\ncache_read(A, local, C.local)\ncache_read(A, local, A.local)\n",
               "double_cache", TSL_TAIL_PARTITION);
  st_arena_end(a);
}

void tsl_tests_schedule_primitives(void) {
  CU_pSuite s = CU_add_suite("schedule/primitives", NULL, NULL);
  CU_add_test(s, "test_split_nparts_gives_nparts_outer_iterations", test_split_nparts_gives_nparts_outer_iterations);
  CU_add_test(s, "test_tile_splits_and_reorders_two_axes", test_tile_splits_and_reorders_two_axes);
  CU_add_test(s, "test_compute_at_realizes_the_tile_and_stays_in_bounds",
              test_compute_at_realizes_the_tile_and_stays_in_bounds);
  CU_add_test(s, "test_compute_at_padding_per_output_row", test_compute_at_padding_per_output_row);
  CU_add_test(s, "test_cache_write_register_block_lowers_to_clean_micro_kernel",
              test_cache_write_register_block_lowers_to_clean_micro_kernel);
  CU_add_test(s, "test_cache_read_packs_a_tile_per_iteration", test_cache_read_packs_a_tile_per_iteration);
  CU_add_test(s, "test_storage_align_pads_the_row_stride", test_storage_align_pads_the_row_stride);
  CU_add_test(s, "test_prefetch_pragma_emits_prefetches_in_its_loop", test_prefetch_pragma_emits_prefetches_in_its_loop);
  CU_add_test(s, "test_prefetch_past_the_loop_goes_on_in_memory", test_prefetch_past_the_loop_goes_on_in_memory);
  CU_add_test(s, "test_prefetch_of_whole_aligned_rows_one_per_line", test_prefetch_of_whole_aligned_rows_one_per_line);
  CU_add_test(s, "test_partitioned_and_guarded_tails_agree", test_partitioned_and_guarded_tails_agree);
  CU_add_test(s, "test_vectors_use_the_native_width", test_vectors_use_the_native_width);
  CU_add_test(s, "test_float_sum_of_products_accumulates_with_fma", test_float_sum_of_products_accumulates_with_fma);
  CU_add_test(s, "test_text_round_trip_of_every_primitive", test_text_round_trip_of_every_primitive);
  CU_add_test(s, "test_cache_steps_return_new_stage_names", test_cache_steps_return_new_stage_names);
}
