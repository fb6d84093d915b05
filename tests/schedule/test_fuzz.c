/* Schedule fuzzing: seeded random legal schedules of matmul, conv2d NCHW (with its
 * padding stage) and a depthwise conv, on random small shapes. Each schedule is printed,
 * replayed from its text (which must print the same), lowered (guarded tails for one
 * seed in three, partitioned loops otherwise, the host's vector width), JIT-compiled and
 * compared with the naive references of tests/ref/. Steps the schedule refuses
 * (TSL_ERR_SCHEDULE) are simply not part of the schedule: every kept schedule is legal.
 * Then rfactor: a random reduction axis of matmul, conv2d NCHW, a row sum or a row max
 * split, one half factored out, both stages scheduled at random, checked against the TE
 * interpreter (dsl/te_interp.h).
 * Also: 1 thread and N threads give bit-identical results (shared/cases class 16).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_ops.h"
#include "sched_tests.h"
#include "tessel/runtime.h"

#define FUZZ_SCHEDULES 200

/* The first seed (1 unless TSL_FUZZ_SEED says otherwise: other seed ranges for a longer
 * hunt; a failure prints its seed and schedule). */
static uint64_t first_seed(void) {
  const char *e = getenv("TSL_FUZZ_SEED");
  return e && *e ? strtoull(e, NULL, 10) : 1;
}

typedef struct rng {
  uint64_t s;
} rng;

static uint64_t next(rng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int rnd(rng *r, int n) { return n <= 1 ? 0 : (int)(next(r) % (uint64_t)n); }
static bool chance(rng *r, int pct) { return rnd(r, 100) < pct; }

typedef struct fuzz_stats {
  int schedules, failures, steps, refused;
  int compute_at, cache_read, cache_write, vectorize, unroll, parallel, tail_split, guarded, prefetch, align, order;
} fuzz_stats;

/* Step result: true when applied. A refusal is fine (the step is just not part of the
 * schedule); any other error is a fuzz failure. */
static bool applied(tsl_status rc, fuzz_stats *fs) {
  if (rc == TSL_OK) {
    fs->steps++;
    return true;
  }
  if (rc == TSL_ERR_SCHEDULE) {
    fs->refused++;
    if (getenv("TSL_FUZZ_REFUSALS")) fprintf(stderr, "refused: %s\n", tsl_last_error());
  } else {
    fprintf(stderr, "\nfuzz: a generated step failed unexpectedly: %s\n", tsl_last_error());
    fs->failures++;
  }
  return false;
}

/* Leaf k's name, copied (a refused step restores the stage, freeing its old strings). */
static void leaf_name(const tsl_schedule *s, const char *stage, int k, char *out, size_t n) {
  const tsl_stage *st = tsl_schedule_stage(s, stage);
  snprintf(out, n, "%s", st->iters[st->leaf[k]].name);
}

static int nleaf(const tsl_schedule *s, const char *stage) { return tsl_schedule_stage(s, stage)->nleaf; }

static bool has_stage(const tsl_schedule *s, const char *stage) {
  const tsl_stage *st = tsl_schedule_stage(s, stage);
  return st && st->attach != TSL_ATTACH_INLINE;
}

/* Splits (by factor, by nparts, tiles), a reorder and a fuse on one stage. */
static void fuzz_loops(tsl_schedule *s, const char *stage, rng *r, fuzz_stats *fs) {
  char a[128], b[128];
  for (int n = rnd(r, 3); n > 0; n--) {
    int k = rnd(r, nleaf(s, stage));
    leaf_name(s, stage, k, a, sizeof a);
    const tsl_stage *st = tsl_schedule_stage(s, stage);
    int64_t ext = st->iters[st->leaf[k]].extent;
    int c = rnd(r, 10);
    if (c == 0) {
      applied(tsl_schedule_split_nparts(s, stage, a, 1 + rnd(r, 4)), fs);
    } else if (c == 1 && nleaf(s, stage) > 1) {
      int k2 = rnd(r, nleaf(s, stage));
      leaf_name(s, stage, k2, b, sizeof b);
      int64_t f1 = 1 + rnd(r, 5), f2 = 1 + rnd(r, 5);
      if (applied(tsl_schedule_tile(s, stage, a, b, f1, f2), fs)) fs->tail_split += ext % f1 != 0;
    } else {
      int64_t f = 1 + rnd(r, 7);
      if (applied(tsl_schedule_split(s, stage, a, f), fs)) fs->tail_split += ext % f != 0;
    }
  }
  int nl = nleaf(s, stage);
  if (nl >= 2 && chance(r, 50)) {
    int m = 2 + rnd(r, nl - 1 < 3 ? nl - 1 : 3);
    char names[4][128];
    const char *ptrs[4];
    int picked[4], np = 0;
    while (np < m) {
      int k = rnd(r, nl);
      bool dup = false;
      for (int i = 0; i < np; i++) dup = dup || picked[i] == k;
      if (dup) continue;
      picked[np] = k;
      leaf_name(s, stage, k, names[np], sizeof names[np]);
      ptrs[np] = names[np];
      np++;
    }
    applied(tsl_schedule_reorder(s, stage, m, ptrs), fs);
  }
  nl = nleaf(s, stage);
  if (nl >= 2 && chance(r, 15)) {
    int k = rnd(r, nl - 1);
    leaf_name(s, stage, k, a, sizeof a);
    leaf_name(s, stage, k + 1, b, sizeof b);
    applied(tsl_schedule_fuse(s, stage, a, b), fs);
  }
}

/* compute_at(stage, one of the targets, a random leaf of it). */
static void fuzz_attach(tsl_schedule *s, const char *stage, const char *const *targets, int ntargets, rng *r,
                        fuzz_stats *fs) {
  const char *t = targets[rnd(r, ntargets)];
  if (!has_stage(s, t)) return;
  char a[128];
  leaf_name(s, t, rnd(r, nleaf(s, t)), a, sizeof a);
  fs->compute_at += applied(tsl_schedule_compute_at(s, stage, t, a), fs);
}

/* vectorize the innermost spatial leaf of at most 32 iterations, unroll a short leaf,
 * run an outer spatial leaf in parallel. */
static void fuzz_annotate(tsl_schedule *s, const char *stage, rng *r, fuzz_stats *fs) {
  char a[128];
  const tsl_stage *st = tsl_schedule_stage(s, stage);
  if (chance(r, 65)) {
    for (int k = st->nleaf - 1; k >= 0; k--) {
      const tsl_stage_iter *it = &st->iters[st->leaf[k]];
      if (it->is_reduce || it->extent > 32 || it->extent < 2) continue;
      leaf_name(s, stage, k, a, sizeof a);
      fs->vectorize += applied(tsl_schedule_vectorize(s, stage, a), fs);
      break;
    }
  }
  st = tsl_schedule_stage(s, stage);
  if (chance(r, 40)) {
    int k = rnd(r, st->nleaf);
    const tsl_stage_iter *it = &st->iters[st->leaf[k]];
    if (it->extent <= 4 && it->annotation == TSL_FOR_SERIAL) {
      leaf_name(s, stage, k, a, sizeof a);
      fs->unroll += applied(tsl_schedule_unroll(s, stage, a), fs);
    }
  }
  st = tsl_schedule_stage(s, stage);
  if (chance(r, 35)) {
    int k = rnd(r, st->nleaf < 2 ? st->nleaf : 2);
    if (!st->iters[st->leaf[k]].is_reduce && st->iters[st->leaf[k]].annotation == TSL_FOR_SERIAL) {
      leaf_name(s, stage, k, a, sizeof a);
      fs->parallel += applied(tsl_schedule_parallel(s, stage, a), fs);
    }
  }
}

/* storage_order of a non-output stage: a random permutation of its buffer dimensions. */
static void fuzz_order(tsl_schedule *s, const char *stage, rng *r, fuzz_stats *fs) {
  const tsl_stage *st = tsl_schedule_stage(s, stage);
  int nd = st->op->naxis;
  if (nd > 8) return;
  char names[8][128];
  const char *ptrs[8];
  int perm[8];
  for (int d = 0; d < nd; d++) perm[d] = d;
  for (int d = nd - 1; d > 0; d--) {
    int j = rnd(r, d + 1), t = perm[d];
    perm[d] = perm[j];
    perm[j] = t;
  }
  for (int d = 0; d < nd; d++) {
    snprintf(names[d], sizeof names[d], "%s", st->iters[perm[d]].name);
    ptrs[d] = names[d];
  }
  fs->order += applied(tsl_schedule_storage_order(s, stage, nd, ptrs), fs);
}

/* storage_order and storage_align of a random buffer dimension of a non-output stage;
 * a prefetch of one of the tensors a stage reads, a few iterations ahead. */
static void fuzz_storage(tsl_schedule *s, const char *stage, const char *const *tensors, int ntensors, rng *r,
                         fuzz_stats *fs) {
  char a[128];
  const tsl_stage *st = tsl_schedule_stage(s, stage);
  if (!st->is_output && chance(r, 40)) fuzz_order(s, stage, r, fs);
  st = tsl_schedule_stage(s, stage);
  if (!st->is_output && chance(r, 25)) {
    snprintf(a, sizeof a, "%s", st->iters[rnd(r, st->op->naxis)].name);
    int64_t f = 1 + rnd(r, 8);
    fs->align += applied(tsl_schedule_storage_align(s, stage, a, f, rnd(r, (int)f)), fs);
  }
  st = tsl_schedule_stage(s, stage);
  if (chance(r, 20)) {
    leaf_name(s, stage, rnd(r, st->nleaf), a, sizeof a);
    fs->prefetch += applied(tsl_schedule_prefetch(s, stage, tensors[rnd(r, ntensors)], a, 1 + rnd(r, 2)), fs);
  }
}

/* The loop steps on every stage that has loops, attachments, then annotations. */
static void fuzz_stages(tsl_schedule *s, const char *const *stages, int n, rng *r, fuzz_stats *fs) {
  for (int i = 0; i < n; i++)
    if (has_stage(s, stages[i]) && chance(r, 80)) fuzz_loops(s, stages[i], r, fs);
}

/* Replays s from its text, lowers, runs on inputs and compares out with want. */
static void check_schedule(const tsl_te_program *p, tsl_schedule *s, uint64_t seed, const char *what,
                           void *const *data, float *out, const float *want, int64_t nout, fuzz_stats *fs) {
  fs->schedules++;
  char *text = tsl_schedule_to_string(s);
  tsl_schedule *replay = NULL;
  bool ok = text && tsl_schedule_from_text(p, text, &replay) == TSL_OK;
  char *text2 = ok ? tsl_schedule_to_string(replay) : NULL;
  ok = ok && text2 && strcmp(text, text2) == 0;
  char name[64];
  snprintf(name, sizeof name, "fuzz_%s_%llu", what, (unsigned long long)seed);
  tsl_tail_strategy tail = seed % 3 == 0 ? TSL_TAIL_GUARD : TSL_TAIL_PARTITION;
  fs->guarded += tail == TSL_TAIL_GUARD;
  tsl_func *f = ok ? st_lower_host(replay, name, tail) : NULL;
  for (int64_t i = 0; i < nout; i++) out[i] = NAN; /* every element must be written */
  ok = f && st_run(f, data);
  double err = ok ? ref_max_rel_error(out, want, nout) : INFINITY;
  if (!ok || !(err < 1e-4)) {
    if (fs->failures < 5)
      fprintf(stderr, "\nfuzz %s seed %llu (%s tails): %s, error %g; schedule:\n%s", what, (unsigned long long)seed,
              tail == TSL_TAIL_GUARD ? "guarded" : "partitioned", ok ? "wrong result" : tsl_last_error(), err,
              text ? text : "(none)");
    fs->failures++;
  }
  free(text);
  free(text2);
  tsl_schedule_free(replay);
}

static void check_stats(const char *what, const fuzz_stats *fs) {
  CU_ASSERT_EQUAL(fs->schedules, FUZZ_SCHEDULES);
  CU_ASSERT_EQUAL(fs->failures, 0);
  /* the generator really covers what it is meant to */
  CU_ASSERT_TRUE(fs->compute_at >= FUZZ_SCHEDULES / 8);
  CU_ASSERT_TRUE(fs->vectorize >= FUZZ_SCHEDULES / 4);
  CU_ASSERT_TRUE(fs->unroll >= FUZZ_SCHEDULES / 10);
  CU_ASSERT_TRUE(fs->parallel >= FUZZ_SCHEDULES / 10);
  CU_ASSERT_TRUE(fs->tail_split >= FUZZ_SCHEDULES / 4);
  CU_ASSERT_TRUE(fs->cache_write >= FUZZ_SCHEDULES / 8);
  CU_ASSERT_TRUE(fs->cache_read >= FUZZ_SCHEDULES / 8);
  CU_ASSERT_TRUE(fs->guarded >= FUZZ_SCHEDULES / 4);
  CU_ASSERT_TRUE(fs->order >= FUZZ_SCHEDULES / 10);
  if (fs->failures || getenv("TSL_FUZZ_STATS"))
    fprintf(stderr,
            "\nfuzz %s: %d schedules, %d failed; %d steps (%d refused): compute_at %d, cache_read %d, "
            "cache_write %d, vectorize %d, unroll %d, parallel %d, tail splits %d, storage_align %d, storage_order %d, "
            "prefetch %d\n",
            what, fs->schedules, fs->failures, fs->steps, fs->refused, fs->compute_at, fs->cache_read,
            fs->cache_write, fs->vectorize, fs->unroll, fs->parallel, fs->tail_split, fs->align, fs->order,
            fs->prefetch);
}

/* ---- matmul ---- */

static void fuzz_matmul_one(uint64_t seed, fuzz_stats *fs) {
  rng r = {seed * 7919 + 1};
  st_arena a = st_arena_begin();
  int64_t M = 1 + rnd(&r, 20), N = 1 + rnd(&r, 24), K = 1 + rnd(&r, 20);
  tsl_te_program *p = st_matmul(M, N, K);
  tsl_schedule *s = NULL;
  if (!p || tsl_schedule_create(p, &s) != TSL_OK) {
    fs->failures++;
    st_arena_end(a);
    return;
  }
  bool cw = chance(&r, 40) && applied(tsl_schedule_cache_write(s, "C", "local", NULL), fs);
  fs->cache_write += cw;
  const char *reader = cw ? "C.local" : "C";
  const char *cached = chance(&r, 50) ? "A" : "B";
  char cr_name[16];
  snprintf(cr_name, sizeof cr_name, "%s.local", cached);
  /* cache_read before or after the reader is scheduled (the reader keeps its loops) */
  bool cr_late = chance(&r, 50), cr = false;
  if (!cr_late) cr = chance(&r, 40) && applied(tsl_schedule_cache_read(s, cached, "local", 1, &reader, NULL), fs);
  const char *stages[3] = {"C", "C.local", cr_name};
  fuzz_stages(s, stages, 3, &r, fs);
  if (cr_late) cr = chance(&r, 40) && applied(tsl_schedule_cache_read(s, cached, "local", 1, &reader, NULL), fs);
  fs->cache_read += cr;
  if (cw && chance(&r, 80)) fuzz_attach(s, "C.local", stages, 1, &r, fs);
  if (cr && chance(&r, 75)) fuzz_attach(s, cr_name, stages, cw ? 2 : 1, &r, fs);
  const char *inputs[2] = {"A", "B"};
  for (int i = 0; i < 3; i++)
    if (has_stage(s, stages[i])) fuzz_storage(s, stages[i], inputs, 2, &r, fs);
  for (int i = 0; i < 3; i++)
    if (has_stage(s, stages[i])) fuzz_annotate(s, stages[i], &r, fs);
  float *A = st_alloc_f32(M * K), *B = st_alloc_f32(K * N), *C = st_alloc_f32(M * N), *R = st_alloc_f32(M * N);
  ref_fill_uniform(A, M * K, seed, -1.0f, 1.0f);
  ref_fill_uniform(B, K * N, seed + 1, -1.0f, 1.0f);
  ref_matmul(M, N, K, A, B, R);
  check_schedule(p, s, seed, "matmul", (void *[]){A, B, C}, C, R, M * N, fs);
  free(A);
  free(B);
  free(C);
  free(R);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_fuzz_matmul_random_legal_schedules(void) {
  fuzz_stats fs = {0};
  for (uint64_t seed = first_seed(), end = seed + FUZZ_SCHEDULES; seed < end; seed++) fuzz_matmul_one(seed, &fs);
  check_stats("matmul", &fs);
}

/* ---- convolutions ---- */

/* A conv (depthwise when dw) of random small shape and a random schedule. */
static void fuzz_conv_one(uint64_t seed, bool dw, fuzz_stats *fs) {
  rng r = {seed * 104729 + (dw ? 17 : 3)};
  st_arena a = st_arena_begin();
  int64_t N = 1 + rnd(&r, 2), C = 1 + rnd(&r, 4), H = 2 + rnd(&r, 8), W = 2 + rnd(&r, 11);
  int64_t K = dw ? C : 1 + rnd(&r, 5), R = 1 + rnd(&r, 3), S = 1 + rnd(&r, 3);
  int64_t pad = rnd(&r, 3), stride = 1 + rnd(&r, 2);
  if (H + 2 * pad < R) R = H + 2 * pad;
  if (W + 2 * pad < S) S = W + 2 * pad;
  ref_conv2d_params prm = {N, C, H, W, K, R, S, stride, stride, pad, pad, pad, pad, 1, 1, dw ? C : 1};
  int64_t OH = ref_conv2d_out_h(&prm), OW = ref_conv2d_out_w(&prm);
  tsl_te_program *p = dw ? st_depthwise_padded(N, C, H, W, R, S, pad, stride)
                         : st_conv_padded(N, C, H, W, K, R, S, pad, stride);
  tsl_schedule *s = NULL;
  if (!p || tsl_schedule_create(p, &s) != TSL_OK) {
    fs->failures++;
    st_arena_end(a);
    return;
  }
  const char *stages[5] = {"out", "out.local", "padded", "weight.local", "padded.local"};
  bool root_pad = chance(&r, 45) && applied(tsl_schedule_compute_root(s, "padded"), fs);
  bool cw = chance(&r, 40) && applied(tsl_schedule_cache_write(s, "out", "local", NULL), fs);
  fs->cache_write += cw;
  const char *reader = cw ? "out.local" : "out";
  bool cr_late = chance(&r, 50), cr = false;
  if (!cr_late) cr = chance(&r, 35) && applied(tsl_schedule_cache_read(s, "weight", "local", 1, &reader, NULL), fs);
  bool crp = chance(&r, 15) && applied(tsl_schedule_cache_read(s, "padded", "local", 1, &reader, NULL), fs);
  fuzz_stages(s, stages, 5, &r, fs);
  if (cr_late) cr = chance(&r, 35) && applied(tsl_schedule_cache_read(s, "weight", "local", 1, &reader, NULL), fs);
  fs->cache_read += cr + crp;
  if (cw && chance(&r, 80)) fuzz_attach(s, "out.local", stages, 1, &r, fs);
  if (crp && chance(&r, 75)) fuzz_attach(s, "padded.local", stages, cw ? 2 : 1, &r, fs);
  if (root_pad && chance(&r, 70)) fuzz_attach(s, "padded", stages, cw ? 2 : 1, &r, fs);
  if (cr && chance(&r, 75)) fuzz_attach(s, "weight.local", stages, cw ? 2 : 1, &r, fs);
  const char *inputs[2] = {"data", "weight"};
  for (int i = 0; i < 5; i++)
    if (has_stage(s, stages[i])) fuzz_storage(s, stages[i], inputs, 2, &r, fs);
  for (int i = 0; i < 5; i++)
    if (has_stage(s, stages[i])) fuzz_annotate(s, stages[i], &r, fs);
  int64_t nd = N * C * H * W, nw = K * (dw ? 1 : C) * R * S, no = N * K * OH * OW;
  float *d = st_alloc_f32(nd), *w = st_alloc_f32(nw), *o = st_alloc_f32(no), *ref = st_alloc_f32(no);
  ref_fill_uniform(d, nd, seed, -1.0f, 1.0f);
  ref_fill_uniform(w, nw, seed + 1, -1.0f, 1.0f);
  ref_conv2d_nchw(&prm, d, w, NULL, ref);
  check_schedule(p, s, seed, dw ? "depthwise" : "conv2d", (void *[]){d, w, o}, o, ref, no, fs);
  free(d);
  free(w);
  free(o);
  free(ref);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_fuzz_conv2d_nchw_random_legal_schedules(void) {
  fuzz_stats fs = {0};
  for (uint64_t seed = first_seed(), end = seed + FUZZ_SCHEDULES; seed < end; seed++) fuzz_conv_one(seed, false, &fs);
  check_stats("conv2d", &fs);
}

static void test_fuzz_depthwise_random_legal_schedules(void) {
  fuzz_stats fs = {0};
  for (uint64_t seed = first_seed(), end = seed + FUZZ_SCHEDULES; seed < end; seed++) fuzz_conv_one(seed, true, &fs);
  check_stats("depthwise", &fs);
}

/* ---- rfactor: a split half of a reduction axis factored out, then anything ---- */

typedef struct rf_program {
  tsl_te_program *p;
  const char *stage;                 /* the reduction stage */
  const char *const *tensors;        /* inputs, for prefetch */
  int ntensors;
  int64_t nin[2], nout;              /* element counts */
} rf_program;

/* One of matmul, conv2d NCHW, row sum, row max, of random small shape. */
static rf_program rf_pick(rng *r, int which) {
  static const char *const mm_in[2] = {"A", "B"}, *const conv_in[2] = {"data", "weight"}, *const row_in[1] = {"A"};
  rf_program q = {0};
  if (which == 0) {
    int64_t M = 1 + rnd(r, 9), N = 1 + rnd(r, 20), K = 2 + rnd(r, 40);
    q = (rf_program){st_matmul(M, N, K), "C", mm_in, 2, {M * K, K * N}, M * N};
  } else if (which == 1) {
    int64_t C = 2 + rnd(r, 12), H = 3 + rnd(r, 6), W = 3 + rnd(r, 8), K = 1 + rnd(r, 4), pad = rnd(r, 2);
    int64_t OH = H + 2 * pad - 2, OW = W + 2 * pad - 2;
    q = (rf_program){st_conv_padded(1, C, H, W, K, 3, 3, pad, 1), "out", conv_in, 2, {C * H * W, K * C * 9},
                     K * OH * OW};
  } else {
    int64_t M = 1 + rnd(r, 6), N = 2 + rnd(r, 300);
    q = (rf_program){which == 2 ? st_row_sum(M, N) : st_row_max(M, N), which == 2 ? "rsum" : "rmax", row_in, 1,
                     {M * N, 0}, M};
  }
  return q;
}

static void fuzz_rfactor_one(uint64_t seed, fuzz_stats *fs, int *rfactored, int *rf_parallel) {
  rng r = {seed * 6151 + 5};
  st_arena a = st_arena_begin();
  rf_program q = rf_pick(&r, (int)(seed % 4));
  tsl_schedule *s = NULL;
  if (!q.p || tsl_schedule_create(q.p, &s) != TSL_OK) {
    fs->failures++;
    st_arena_end(a);
    return;
  }
  if (seed % 4 == 1 && chance(&r, 40)) applied(tsl_schedule_compute_root(s, "padded"), fs);
  /* split a random reduction axis and factor one half out */
  const tsl_stage *st = tsl_schedule_stage(s, q.stage);
  int nred = st->nroot - st->op->naxis;
  char k[64], half[80];
  snprintf(k, sizeof k, "%s", st->iters[st->op->naxis + rnd(&r, nred)].name);
  bool split = chance(&r, 30) ? applied(tsl_schedule_split_nparts(s, q.stage, k, 1 + rnd(&r, 5)), fs)
                              : applied(tsl_schedule_split(s, q.stage, k, 1 + rnd(&r, 9)), fs);
  snprintf(half, sizeof half, "%s.%s", k, chance(&r, 60) ? "outer" : "inner");
  bool rf = split && applied(tsl_schedule_rfactor(s, q.stage, half, NULL), fs);
  *rfactored += rf;
  char rfname[64], rflocal[80];
  snprintf(rfname, sizeof rfname, "%s.rf", q.stage);
  snprintf(rflocal, sizeof rflocal, "%s.local", rfname);
  bool cw = rf && chance(&r, 30) && applied(tsl_schedule_cache_write(s, rfname, "local", NULL), fs);
  fs->cache_write += cw;
  if (rf && chance(&r, 50)) { /* the point of rfactor: the factored axis in parallel */
    bool ok = applied(tsl_schedule_parallel(s, rfname, half), fs);
    fs->parallel += ok;
    *rf_parallel += ok;
  }
  const char *stages[3] = {q.stage, rfname, rflocal};
  fuzz_stages(s, stages, 3, &r, fs);
  if (cw && chance(&r, 70)) fuzz_attach(s, rflocal, (const char *[]){rfname}, 1, &r, fs);
  if (rf && chance(&r, 25)) fuzz_attach(s, rfname, stages, 1, &r, fs);
  for (int i = 0; i < 3; i++)
    if (has_stage(s, stages[i])) fuzz_storage(s, stages[i], q.tensors, q.ntensors, &r, fs);
  for (int i = 0; i < 3; i++)
    if (has_stage(s, stages[i])) fuzz_annotate(s, stages[i], &r, fs);
  float *in0 = st_alloc_f32(q.nin[0]), *in1 = st_alloc_f32(q.nin[1] ? q.nin[1] : 1);
  float *out = st_alloc_f32(q.nout), *want = st_alloc_f32(q.nout);
  ref_fill_uniform(in0, q.nin[0], seed, -1.0f, 1.0f);
  ref_fill_uniform(in1, q.nin[1], seed + 1, -1.0f, 1.0f);
  if (!st_interpret_f32(q.p, (float *[]){in0, in1}, want)) fs->failures++;
  void *data[3] = {in0, q.ntensors == 2 ? (void *)in1 : (void *)out, out};
  check_schedule(q.p, s, seed, q.stage, data, out, want, q.nout, fs);
  free(in0);
  free(in1);
  free(out);
  free(want);
  tsl_schedule_free(s);
  st_arena_end(a);
}

static void test_fuzz_rfactor_random_legal_schedules(void) {
  fuzz_stats fs = {0};
  int rfactored = 0, rf_parallel = 0;
  for (uint64_t seed = first_seed(), end = seed + FUZZ_SCHEDULES; seed < end; seed++)
    fuzz_rfactor_one(seed, &fs, &rfactored, &rf_parallel);
  CU_ASSERT_EQUAL(fs.schedules, FUZZ_SCHEDULES);
  CU_ASSERT_EQUAL(fs.failures, 0);
  CU_ASSERT_TRUE(rfactored >= FUZZ_SCHEDULES * 3 / 4);
  CU_ASSERT_TRUE(rf_parallel >= FUZZ_SCHEDULES / 5);
  CU_ASSERT_TRUE(fs.vectorize >= FUZZ_SCHEDULES / 4);
  CU_ASSERT_TRUE(fs.compute_at >= FUZZ_SCHEDULES / 10);
  CU_ASSERT_TRUE(fs.guarded >= FUZZ_SCHEDULES / 4);
  if (fs.failures || getenv("TSL_FUZZ_STATS"))
    fprintf(stderr,
            "\nfuzz rfactor: %d schedules, %d failed; %d steps (%d refused): rfactor %d (parallel %d), compute_at %d, "
            "cache_write %d, vectorize %d, unroll %d, parallel %d, tail splits %d\n",
            fs.schedules, fs.failures, fs.steps, fs.refused, rfactored, rf_parallel, fs.compute_at, fs.cache_write,
            fs.vectorize, fs.unroll, fs.parallel, fs.tail_split);
}

/* ---- class 16: parallel loops give the same bits on any number of threads ---- */

static bool run_with_threads(int threads, const tsl_func *f, void *const *data) {
  if (tsl_set_num_threads(threads) != TSL_OK) return false;
  return st_run(f, data);
}

static void test_C16_one_and_many_threads_bit_identical(void) {
  st_arena a = st_arena_begin();
  int saved = tsl_get_num_threads();
  /* conv: parallel over a fused outer axis, a packed weight tile per iteration;
   * matmul: parallel rows with more threads than iterations */
  ref_conv2d_params prm = {2, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  tsl_te_program *cp = st_conv_padded(2, 3, 9, 11, 5, 3, 3, 1, 1);
  const char *ctext = "cache_write(out, local)\n"
                      "fuse(out, n, k)\n"
                      "split(out, x, 4)\n"
                      "compute_at(out.local, out, x.outer)\n"
                      "vectorize(out.local, x)\n"
                      "parallel(out, n.k.fused)\n";
  tsl_te_program *mp = st_matmul(3, 37, 29);
  const char *mtext = "split(C, j, 8)\nreorder(C, i, j.outer, k, j.inner)\nvectorize(C, j.inner)\nparallel(C, i)\n";
  struct {
    tsl_te_program *p;
    const char *text;
    int64_t n0, n1, nout;
  } cases[2] = {{cp, ctext, 2 * 3 * 9 * 11, 5 * 3 * 9, 2 * 5 * 9 * 11}, {mp, mtext, 3 * 29, 29 * 37, 3 * 37}};
  for (int c = 0; c < 2; c++) {
    tsl_schedule *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_schedule_from_text(cases[c].p, cases[c].text, &s), TSL_OK);
    tsl_func *f = st_lower_host(s, c ? "threads_mm" : "threads_conv", TSL_TAIL_PARTITION);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_TRUE(st_count(f->body).parallel >= 1);
    float *x = st_alloc_f32(cases[c].n0), *y = st_alloc_f32(cases[c].n1);
    float *o1 = st_alloc_f32(cases[c].nout), *on = st_alloc_f32(cases[c].nout), *ref = st_alloc_f32(cases[c].nout);
    ref_fill_uniform(x, cases[c].n0, 41, -1.0f, 1.0f);
    ref_fill_uniform(y, cases[c].n1, 42, -1.0f, 1.0f);
    if (c == 0) ref_conv2d_nchw(&prm, x, y, NULL, ref);
    else ref_matmul(3, 37, 29, x, y, ref);
    CU_ASSERT_TRUE(run_with_threads(1, f, (void *[]){x, y, o1}));
    CU_ASSERT_TRUE(run_with_threads(8, f, (void *[]){x, y, on}));
    CU_ASSERT_EQUAL(memcmp(o1, on, sizeof(float) * (size_t)cases[c].nout), 0);
    CU_ASSERT_TRUE(ref_max_rel_error(on, ref, cases[c].nout) < 1e-5);
    free(x);
    free(y);
    free(o1);
    free(on);
    free(ref);
    tsl_schedule_free(s);
  }
  tsl_set_num_threads(saved);
  st_arena_end(a);
}

static int cleanup(void) {
  st_jit_release();
  return 0;
}

void tsl_tests_schedule_fuzz(void) {
  CU_pSuite s = CU_add_suite("schedule/fuzz", NULL, cleanup);
  CU_add_test(s, "test_fuzz_matmul_random_legal_schedules", test_fuzz_matmul_random_legal_schedules);
  CU_add_test(s, "test_fuzz_conv2d_nchw_random_legal_schedules", test_fuzz_conv2d_nchw_random_legal_schedules);
  CU_add_test(s, "test_fuzz_depthwise_random_legal_schedules", test_fuzz_depthwise_random_legal_schedules);
  CU_add_test(s, "test_fuzz_rfactor_random_legal_schedules", test_fuzz_rfactor_random_legal_schedules);
  CU_add_test(s, "test_C16_one_and_many_threads_bit_identical", test_C16_one_and_many_threads_bit_identical);
}
