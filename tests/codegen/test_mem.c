/* Codegen of loads and stores: every element type, contiguous vectors at aligned
 * and unaligned offsets, gathers, scatters, predicated (masked) accesses, and the
 * vector tail that must not touch memory past a buffer's end (C01). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/codegen/cg_util.h"

#define N 64

/* The body of one region: `base` is io * L, the region's output starts at off. */
typedef tsl_stmt *(*region_body)(tsl_expr *base, int L, int64_t off, void *ctx);

/* for each region r (lanes 1, 4, 8, 16): for io in [0, n/L): body(io*L, L, r*n). */
static tsl_stmt *regions(int64_t n, region_body fn, void *ctx) {
  tsl_stmt *loops[CG_NREGIONS];
  for (int r = 0; r < CG_NREGIONS; r++) {
    int L = cg_region_lanes[r];
    tsl_expr *io = tsl_var("io", TSL_I64);
    loops[r] = tsl_for(io, tsl_i64(0), tsl_i64(n / L), TSL_FOR_SERIAL, fn(tsl_mul(io, tsl_i64(L)), L, r * n, ctx));
  }
  return tsl_seq(CG_NREGIONS, loops);
}

static tsl_status run2(tsl_func *f, void *a, void *b) {
  void *p[2] = {a, b};
  return cg_run(f, (void *[]){&p[0], &p[1]});
}

static tsl_status run3(tsl_func *f, void *a, void *b, void *c) {
  void *p[3] = {a, b, c};
  return cg_run(f, (void *[]){&p[0], &p[1], &p[2]});
}

/* ---- scalar accesses of every type ---- */

static void test_scalar_load_store_every_type(void) {
  tsl_type types[5] = {TSL_I8, TSL_U16, TSL_I64, TSL_F64, TSL_BOOL};
  tsl_buffer *bufs[10];
  tsl_stmt *stores[5];
  tsl_expr *i = tsl_var("i", TSL_I64);
  for (int k = 0; k < 5; k++) {
    bufs[2 * k] = cg_buf("in", types[k], N);
    bufs[2 * k + 1] = cg_buf("out", types[k], N);
    tsl_expr *x = cg_ld(bufs[2 * k], i);
    tsl_expr *v = tsl_type_is_bool(types[k]) ? tsl_not(x)
                  : tsl_type_is_float(types[k]) ? tsl_add(x, tsl_float(types[k], 1.5))
                                                 : tsl_add(x, tsl_int(types[k], 1));
    stores[k] = cg_st(bufs[2 * k + 1], i, v);
  }
  tsl_func *f = cg_func("scalar_types", 10, bufs, tsl_for(i, tsl_i64(0), tsl_i64(N), TSL_FOR_SERIAL, tsl_seq(5, stores)));
  int8_t *a = cg_alloc(N), *oa = cg_alloc(N);
  uint16_t *b = cg_alloc(N * 2), *ob = cg_alloc(N * 2);
  int64_t *c = cg_alloc(N * 8), *oc = cg_alloc(N * 8);
  double *d = cg_alloc(N * 8), *od = cg_alloc(N * 8);
  uint8_t *e = cg_alloc(N), *oe = cg_alloc(N);
  for (int k = 0; k < N; k++) {
    a[k] = (int8_t)(k * 5 - 128), b[k] = (uint16_t)(65535 - k * 1000), c[k] = (int64_t)k << 40, d[k] = k * 0.25;
    e[k] = k % 3 == 0;
  }
  void *p[10] = {a, oa, b, ob, c, oc, d, od, e, oe}, *args[10];
  for (int k = 0; k < 10; k++) args[k] = &p[k];
  CU_ASSERT_EQUAL_FATAL(cg_run(f, args), TSL_OK);
  for (int k = 0; k < N; k++) {
    CU_ASSERT_EQUAL(oa[k], (int8_t)(uint8_t)(a[k] + 1));
    CU_ASSERT_EQUAL(ob[k], (uint16_t)(b[k] + 1));
    CU_ASSERT_EQUAL(oc[k], c[k] + 1);
    CU_ASSERT_EQUAL(od[k], d[k] + 1.5);
    CU_ASSERT_EQUAL(oe[k], !e[k]);
  }
  free(a), free(oa), free(b), free(ob), free(c), free(oc), free(d), free(od), free(e), free(oe);
}

/* ---- contiguous vectors at unaligned offsets ---- */

typedef struct bufpair {
  tsl_buffer *in, *out, *idx;
} bufpair;

static tsl_stmt *body_unaligned(tsl_expr *base, int L, int64_t off, void *ctx) {
  bufpair *b = ctx;
  /* in[base + 3 ...] * 2 -> out[off + base + 1 ...]: neither offset is a multiple of
   * the vector, so claiming the buffer's 64-byte alignment would be wrong. */
  tsl_expr *v = tsl_mul(cg_ldv(b->in, tsl_add(base, tsl_i64(3)), L), cg_bc(tsl_f32(2.0f), L));
  return cg_stv(b->out, tsl_add(base, tsl_i64(off + 1)), L, v);
}

static void test_vector_load_store_at_unaligned_offsets(void) {
  bufpair b = {cg_buf("in", TSL_F32, N + 16), cg_buf("out", TSL_F32, CG_NREGIONS * N + 16), NULL};
  tsl_func *f = cg_func("unaligned", 2, (tsl_buffer *[]){b.in, b.out}, regions(N, body_unaligned, &b));
  float *in = cg_alloc((N + 16) * 4), *out = cg_alloc((CG_NREGIONS * N + 16) * 4);
  for (int k = 0; k < N + 16; k++) in[k] = (float)k;
  CU_ASSERT_EQUAL_FATAL(run2(f, in, out), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int k = 0; k < N; k++) CU_ASSERT_EQUAL(out[r * N + k + 1], 2.0f * in[k + 3]);
  CU_ASSERT_EQUAL(out[0], 0.0f);
  free(in), free(out);
}

/* ---- gathers and scatters ---- */

static tsl_stmt *body_gather(tsl_expr *base, int L, int64_t off, void *ctx) {
  bufpair *b = ctx;
  tsl_expr *index = cg_ldv(b->idx, base, L); /* i32 lanes: a data-dependent gather */
  tsl_expr *strided_idx = L == 1 ? tsl_mul(base, tsl_i64(2)) : tsl_ramp(tsl_mul(base, tsl_i64(2)), tsl_i64(2), L);
  tsl_expr *v = tsl_sub(tsl_load(b->in, 1, &index, NULL), tsl_load(b->in, 1, &strided_idx, NULL));
  return cg_stv(b->out, tsl_add(base, tsl_i64(off)), L, v);
}

static tsl_stmt *body_scatter(tsl_expr *base, int L, int64_t off, void *ctx) {
  bufpair *b = ctx;
  tsl_expr *index = tsl_add(tsl_cast(TSL_I64, cg_ldv(b->idx, base, L)), cg_bc(tsl_i64(off * 2), L));
  return tsl_store(b->out, 1, &index, cg_ldv(b->in, base, L), NULL);
}

static tsl_stmt *body_splat(tsl_expr *base, int L, int64_t off, void *ctx) {
  bufpair *b = ctx;
  tsl_expr *io = tsl_div(base, tsl_i64(L));
  tsl_expr *index = cg_bc(io, L);
  return cg_stv(b->out, tsl_add(base, tsl_i64(off)), L, tsl_load(b->in, 1, &index, NULL));
}

static void test_gather_scatter_and_broadcast_index(void) {
  int32_t *idx = cg_alloc(N * 4);
  float *in = cg_alloc(2 * N * 4), *og = cg_alloc(CG_NREGIONS * N * 4), *os = cg_alloc(2 * CG_NREGIONS * N * 4),
        *ob = cg_alloc(CG_NREGIONS * N * 4);
  for (int k = 0; k < N; k++) idx[k] = (k * 37 + 11) % N; /* a permutation of 0..N-1 */
  for (int k = 0; k < 2 * N; k++) in[k] = (float)(k * k % 101);
  bufpair g = {cg_buf("in", TSL_F32, 2 * N), cg_buf("out", TSL_F32, CG_NREGIONS * N), cg_buf("idx", TSL_I32, N)};
  tsl_func *fg = cg_func("gather", 3, (tsl_buffer *[]){g.in, g.out, g.idx}, regions(N, body_gather, &g));
  CU_ASSERT_EQUAL_FATAL(run3(fg, in, og, idx), TSL_OK);
  bufpair s = {cg_buf("in", TSL_F32, 2 * N), cg_buf("out", TSL_F32, 2 * CG_NREGIONS * N), cg_buf("idx", TSL_I32, N)};
  tsl_func *fs = cg_func("scatter", 3, (tsl_buffer *[]){s.in, s.out, s.idx}, regions(N, body_scatter, &s));
  CU_ASSERT_EQUAL_FATAL(run3(fs, in, os, idx), TSL_OK);
  bufpair p = {cg_buf("in", TSL_F32, 2 * N), cg_buf("out", TSL_F32, CG_NREGIONS * N), NULL};
  tsl_func *fb = cg_func("splat_index", 2, (tsl_buffer *[]){p.in, p.out}, regions(N, body_splat, &p));
  CU_ASSERT_EQUAL_FATAL(run2(fb, in, ob), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++) {
    int L = cg_region_lanes[r];
    for (int k = 0; k < N; k++) {
      CU_ASSERT_EQUAL(og[r * N + k], in[idx[k]] - in[2 * k]);
      CU_ASSERT_EQUAL(os[2 * r * N + idx[k]], in[k]);
      CU_ASSERT_EQUAL(ob[r * N + k], in[k / L]);
    }
  }
  free(idx), free(in), free(og), free(os), free(ob);
}

/* ---- predication ---- */

typedef struct masked_ctx {
  tsl_buffer *in, *out;
  int64_t limit;
} masked_ctx;

static tsl_expr *lane_index(tsl_expr *base, int L) { return L == 1 ? base : tsl_ramp(base, tsl_i64(1), L); }

/* out[off + k] = (k < limit ? in[k] : 0) through a predicated load; then a
 * predicated store writes 7 only where k is even (odd slots keep their old value). */
static tsl_stmt *body_masked(tsl_expr *base, int L, int64_t off, void *ctx) {
  masked_ctx *m = ctx;
  tsl_expr *k = lane_index(base, L);
  tsl_expr *in_range = tsl_lt(k, cg_bc(tsl_i64(m->limit), L));
  tsl_expr *v = tsl_load(m->in, 1, &k, in_range);
  tsl_expr *at = lane_index(tsl_add(base, tsl_i64(off)), L);
  tsl_stmt *a = tsl_store(m->out, 1, &at, v, NULL);
  tsl_expr *at2 = lane_index(tsl_add(base, tsl_i64(off + CG_NREGIONS * N)), L);
  tsl_expr *even = tsl_eq(tsl_mod(k, cg_bc(tsl_i64(2), L)), cg_bc(tsl_i64(0), L));
  tsl_stmt *b = tsl_store(m->out, 1, &at2, cg_bc(tsl_i32(7), L), even);
  return tsl_seq2(a, b);
}

/* The same through a gather/scatter: indices reversed. */
static tsl_stmt *body_masked_gather(tsl_expr *base, int L, int64_t off, void *ctx) {
  masked_ctx *m = ctx;
  tsl_expr *k = lane_index(base, L);
  tsl_expr *rev = tsl_sub(cg_bc(tsl_i64(N - 1), L), k);
  tsl_expr *in_range = tsl_lt(rev, cg_bc(tsl_i64(m->limit), L));
  tsl_expr *v = tsl_load(m->in, 1, &rev, in_range);
  tsl_expr *at = tsl_add(rev, cg_bc(tsl_i64(off), L));
  tsl_expr *odd = tsl_eq(tsl_mod(k, cg_bc(tsl_i64(2), L)), cg_bc(tsl_i64(1), L));
  return tsl_store(m->out, 1, &at, v, odd);
}

static void test_masked_loads_read_zero_and_masked_stores_leave_memory(void) {
  masked_ctx m = {cg_buf("in", TSL_I32, N), cg_buf("out", TSL_I32, 2 * CG_NREGIONS * N), 45};
  tsl_func *f = cg_func("masked", 2, (tsl_buffer *[]){m.in, m.out}, regions(N, body_masked, &m));
  masked_ctx g = {cg_buf("in", TSL_I32, N), cg_buf("out", TSL_I32, CG_NREGIONS * N), 45};
  tsl_func *fg = cg_func("masked_gather", 2, (tsl_buffer *[]){g.in, g.out}, regions(N, body_masked_gather, &g));
  int32_t *in = cg_alloc(N * 4), *out = cg_alloc(2 * CG_NREGIONS * N * 4), *og = cg_alloc(CG_NREGIONS * N * 4);
  for (int k = 0; k < N; k++) in[k] = k * 3 + 1;
  for (int k = 0; k < 2 * CG_NREGIONS * N; k++) out[k] = -5;
  for (int k = 0; k < CG_NREGIONS * N; k++) og[k] = -9;
  CU_ASSERT_EQUAL_FATAL(run2(f, in, out), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run2(fg, in, og), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int k = 0; k < N; k++) {
      CU_ASSERT_EQUAL(out[r * N + k], k < m.limit ? in[k] : 0);
      CU_ASSERT_EQUAL(out[CG_NREGIONS * N + r * N + k], k % 2 == 0 ? 7 : -5);
      int src = N - 1 - k; /* lane k of the reversed access */
      int want = k % 2 == 1 ? (src < g.limit ? in[src] : 0) : -9;
      CU_ASSERT_EQUAL(og[r * N + src], want);
    }
  free(in), free(out), free(og);
}

/* C01: a vector tail (extent 13, vectors of 8 and 16) reads and writes through a
 * mask and must not touch the page after the buffer, which is made inaccessible: any
 * unmasked access past the end would fault. */
static void test_C01_masked_tail_touches_no_memory_past_the_end(void) {
  long page = sysconf(_SC_PAGESIZE);
  char *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CU_ASSERT_FATAL(map != MAP_FAILED);
  CU_ASSERT_FATAL(mprotect(map + page, (size_t)page, PROT_NONE) == 0);
  /* 16 floats ending exactly at the guard page (64-byte aligned). */
  float *buf = (float *)(map + page - 64);
  for (int k = 0; k < 16; k++) buf[k] = (float)k + 0.5f;

  tsl_buffer *b = cg_buf("x", TSL_F32, 16);
  tsl_stmt *loops[2];
  int widths[2] = {8, 16};
  for (int w = 0; w < 2; w++) {
    int L = widths[w];
    /* elements 3 .. 3+13 of x in place: x[3 + t] = x[3 + t] * 2 for t < 13 */
    tsl_expr *io = tsl_var("io", TSL_I64);
    tsl_expr *t = tsl_ramp(tsl_mul(io, tsl_i64(L)), tsl_i64(1), L);
    tsl_expr *k = tsl_add(t, cg_bc(tsl_i64(3), L));
    tsl_expr *mask = tsl_lt(t, cg_bc(tsl_i64(13), L));
    tsl_expr *v = tsl_mul(tsl_load(b, 1, &k, mask), cg_bc(tsl_f32(2.0f), L));
    loops[w] = tsl_for(io, tsl_i64(0), tsl_i64((13 + L - 1) / L), TSL_FOR_SERIAL, tsl_store(b, 1, &k, v, mask));
  }
  tsl_func *f = cg_func("tail", 1, &b, tsl_seq(2, loops));
  void *p = buf;
  CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&p}), TSL_OK);
  for (int k = 0; k < 16; k++) CU_ASSERT_EQUAL(buf[k], k < 3 ? (float)k + 0.5f : ((float)k + 0.5f) * 4.0f);
  munmap(map, (size_t)page * 2);
}

static void test_predicated_scalar_load_and_store(void) {
  tsl_buffer *in = cg_buf("in", TSL_I64, N), *out = cg_buf("out", TSL_I64, N);
  tsl_expr *i = tsl_var("i", TSL_I64);
  tsl_expr *pred = tsl_ge(cg_ld(in, i), tsl_i64(100));
  tsl_expr *idx = i;
  tsl_expr *v = tsl_add(tsl_load(in, 1, &idx, tsl_lt(i, tsl_i64(40))), tsl_i64(1));
  tsl_func *f = cg_func("pscalar", 2, (tsl_buffer *[]){in, out},
                        tsl_for(i, tsl_i64(0), tsl_i64(N), TSL_FOR_SERIAL, tsl_store(out, 1, &idx, v, pred)));
  int64_t *a = cg_alloc(N * 8), *o = cg_alloc(N * 8);
  for (int k = 0; k < N; k++) a[k] = k * 7, o[k] = -1;
  CU_ASSERT_EQUAL_FATAL(run2(f, a, o), TSL_OK);
  for (int k = 0; k < N; k++) CU_ASSERT_EQUAL(o[k], a[k] >= 100 ? (k < 40 ? a[k] : 0) + 1 : -1);
  free(a), free(o);
}

/* ---- fixed lane patterns: windows and shuffles instead of gathers ---- */

#define PATTERNS 6
#define PAT_M (3 * N) /* elements of the patterns' input */

/* Lane j of a vector of L lanes as an expression (0 for a scalar region). */
static tsl_expr *lane_ramp(int64_t start, int64_t stride, int L) {
  return L == 1 ? tsl_i64(start) : tsl_ramp(tsl_i64(start), tsl_i64(stride), L);
}

/* The upper clamp of pattern 4 (repeats at both ends). */
static int64_t clamp_top(int L) { return L > 3 ? L - 3 : 0; }

/* Pattern p's index of lane j at base (= io * L), written out for the reference. */
static int64_t pattern_index(int p, int64_t base, int64_t j, int L) {
  switch (p) {
  case 0: return base / 2 + j / 2 + (j % 2) * (PAT_M / 2);             /* interleave of two far windows */
  case 1: return PAT_M - 1 - (base + j);                                 /* reversed, ends on the last one */
  case 2: return PAT_M - 3 * N + 3 * (base + j);                         /* stride 3: up to 3 windows */
  case 3: return base / 4 + 11 * j;                                      /* stride 11: too many, a gather */
  case 4: return base + (j - 3 < 0 ? 0 : j - 3 > clamp_top(L) ? clamp_top(L) : j - 3); /* repeated lanes */
  default: return PAT_M - 2 * L + 2 + 2 * j; /* stride 2 under a fixed predicate; the last lane (off) is past the end */
  }
}

static tsl_expr *pattern_expr(int p, tsl_expr *base, int L) {
  switch (p) {
  case 0:
    return tsl_add(tsl_add(cg_bc(tsl_div(base, tsl_i64(2)), L), tsl_div(lane_ramp(0, 1, L), cg_bc(tsl_i64(2), L))),
                   tsl_mul(tsl_mod(lane_ramp(0, 1, L), cg_bc(tsl_i64(2), L)), cg_bc(tsl_i64(PAT_M / 2), L)));
  case 1:
    return tsl_sub(cg_bc(tsl_i64(PAT_M - 1), L), L == 1 ? base : tsl_ramp(base, tsl_i64(1), L));
  case 2:
    return tsl_add(cg_bc(tsl_i64(PAT_M - 3 * N), L),
                   L == 1 ? tsl_mul(base, tsl_i64(3)) : tsl_ramp(tsl_mul(base, tsl_i64(3)), tsl_i64(3), L));
  case 3: return tsl_add(cg_bc(tsl_div(base, tsl_i64(4)), L), lane_ramp(0, 11, L));
  case 4:
    return tsl_add(cg_bc(base, L), tsl_min(tsl_max(lane_ramp(-3, 1, L), cg_bc(tsl_i64(0), L)), cg_bc(tsl_i64(clamp_top(L)), L)));
  default: return tsl_add(cg_bc(tsl_add(tsl_div(base, tsl_i64(N)), tsl_i64(PAT_M - 2 * L + 2)), L), lane_ramp(0, 2, L));
  }
}

/* Pattern 5's predicate: lanes below L - 1 that are not 1 mod 3. */
static bool pattern_on(int p, int64_t j, int L) { return p != 5 || (j < L - 1 && j % 3 != 1); }

static tsl_expr *pattern_predicate(int p, int L) {
  if (p != 5) return NULL;
  tsl_expr *j = lane_ramp(0, 1, L);
  return tsl_and(tsl_lt(j, cg_bc(tsl_i64(L - 1), L)), tsl_ne(tsl_mod(lane_ramp(0, 1, L), cg_bc(tsl_i64(3), L)), cg_bc(tsl_i64(1), L)));
}

static tsl_stmt *body_patterns(tsl_expr *base, int L, int64_t off, void *ctx) {
  bufpair *b = ctx;
  tsl_stmt *st[PATTERNS];
  for (int p = 0; p < PATTERNS; p++) {
    tsl_expr *idx = pattern_expr(p, base, L);
    st[p] = cg_stv(b->out, tsl_add(base, tsl_i64(p * CG_NREGIONS * N + off)), L,
                   tsl_load(b->in, 1, &idx, pattern_predicate(p, L)));
  }
  return tsl_seq(PATTERNS, st);
}

/* Vector loads whose lanes read a scalar plus per-lane constants (an interleave, a
 * reversal, strides 3 and 11, clamped repeats, stride 2 under a predicate fixed per lane
 * whose off lanes read 0 and may point past the end) give what the lanes index, and read
 * nothing past the input's end (a guard page follows it: the windows between the lanes'
 * addresses never leave the buffer). */
static void test_fixed_lane_patterns_read_their_lanes_only(void) {
  long page = sysconf(_SC_PAGESIZE);
  char *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CU_ASSERT_FATAL(map != MAP_FAILED);
  CU_ASSERT_FATAL(mprotect(map + page, (size_t)page, PROT_NONE) == 0);
  float *in = (float *)(map + page - PAT_M * 4), *out = cg_alloc(PATTERNS * CG_NREGIONS * N * 4);
  for (int k = 0; k < PAT_M; k++) in[k] = (float)(k * 7 % 191) + 0.25f;
  bufpair b = {cg_buf("in", TSL_F32, PAT_M), cg_buf("out", TSL_F32, PATTERNS * CG_NREGIONS * N), NULL};
  tsl_func *f = cg_func("lane_patterns", 2, (tsl_buffer *[]){b.in, b.out}, regions(N, body_patterns, &b));
  CU_ASSERT_EQUAL_FATAL(run2(f, in, out), TSL_OK);
  for (int p = 0; p < PATTERNS; p++)
    for (int r = 0; r < CG_NREGIONS; r++) {
      int L = cg_region_lanes[r];
      for (int64_t k = 0; k < N; k++) {
        int64_t base = k / L * L, want = pattern_index(p, base, k - base, L);
        bool on = pattern_on(p, k - base, L);
        CU_ASSERT_FATAL(!on || (want >= 0 && want < PAT_M));
        CU_ASSERT_EQUAL(out[(p * CG_NREGIONS + r) * N + k], on ? in[want] : 0.0f);
      }
    }
  free(out);
  munmap(map, (size_t)page * 2);
}

void cg_add_memory_tests(void) {
  CU_pSuite s = CU_add_suite("codegen_memory", cg_suite_init, cg_suite_clean);
  CU_add_test(s, "test_scalar_load_store_every_type", test_scalar_load_store_every_type);
  CU_add_test(s, "test_vector_load_store_at_unaligned_offsets", test_vector_load_store_at_unaligned_offsets);
  CU_add_test(s, "test_gather_scatter_and_broadcast_index", test_gather_scatter_and_broadcast_index);
  CU_add_test(s, "test_masked_loads_read_zero_and_masked_stores_leave_memory",
              test_masked_loads_read_zero_and_masked_stores_leave_memory);
  CU_add_test(s, "test_C01_masked_tail_touches_no_memory_past_the_end",
              test_C01_masked_tail_touches_no_memory_past_the_end);
  CU_add_test(s, "test_predicated_scalar_load_and_store", test_predicated_scalar_load_and_store);
  CU_add_test(s, "test_fixed_lane_patterns_read_their_lanes_only", test_fixed_lane_patterns_read_their_lanes_only);
}
