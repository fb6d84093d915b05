/* Sketch generation (tuner/sketch.h) for operators written in the DSL with no template,
 * as a new user writes them: the space is non-empty, has the rules each operator calls
 * for, and at least 50 sampled candidates per operator (seeded, spread over the sketches)
 * build and give the interpreter's result (dsl/te_interp.h). The auto-scheduler's template
 * (tuner/autosched.h): 50 seeded configs of its space per operator give the interpreter's
 * result; the tuner searches it (evolution) and the dispatcher applies its records, or
 * its default without; the evolutionary search (tuner/search.h) on a known cost. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/build.h"
#include "codegen/jit.h"
#include "dsl/parser.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "runtime/module.h"
#include "schedule/axis_access.h"
#include "schedule/lower.h"
#include "tessel/tensor.h"
#include "ops/nn/default_schedule.h"
#include "ops/registry.h"
#include "tuner/autosched.h"
#include "tuner/dispatch.h"
#include "tuner/search.h"
#include "tuner/sketch.h"
#include "tuner/tune.h"
#include "tuner_tests.h"

#define SKETCH_SAMPLES 50

static const char ops_text[] =
    "op sk_matmul(A: f32[M, K], B: f32[K, N])\n"
    "  C[i, j] = sum(k: A[i, k] * B[k, j])\n"
    "op sk_softmax(X: f32[M, N])\n"
    "  mx[i] = max(j: X[i, j])\n"
    "  e[i, j] = exp(X[i, j] - mx[i])\n"
    "  s[i] = sum(j: e[i, j])\n"
    "  out[i, j] = e[i, j] / s[i]\n"
    "op sk_chsum(X: f32[N, C, H, W])\n"
    "  out[c] = sum(n, h, w: X[n, c, h, w])\n"
    "op sk_conv(data: f32[N, C, H, W], weight: f32[K, C, R, S])\n"
    "  padded[n, c, y, x] = select(y >= 1 && y < H + 1 && x >= 1 && x < W + 1,\n"
    "                              data[n, c, y - 1, x - 1], 0.0)\n"
    "    where y < H + 2, x < W + 2\n"
    "  out[n, k, y, x] = sum(c, r, s: padded[n, c, y + r, x + s] * weight[k, c, r, s])\n"
    "    where y < H + 3 - R, x < W + 3 - S\n"
    "op sk_depthwise(data: f32[N, C, H, W], weight: f32[C, R, S])\n"
    "  padded[n, c, y, x] = select(y >= 2 && y < H + 2 && x >= 2 && x < W + 2,\n"
    "                              data[n, c, y - 2, x - 2], 0.0)\n"
    "    where y < H + 4, x < W + 4\n"
    "  out[n, c, y, x] = sum(r, s: padded[n, c, y + r, x + s] * weight[c, r, s])\n"
    "    where y < H + 5 - R, x < W + 5 - S\n"
    "op sk_rowmax(X: f32[M, N])\n"
    "  out[i] = max(j: X[i, j])\n"
    "op sk_softplus(X: f32[M, N])\n"
    "  out[i, j] = log(1.0 + exp(X[i, j]))\n";

/* Reductions for the contiguity checks: a column sum (its spatial axis runs along
 * memory) and a layer norm over the channel blocks of NCHW[16]c (C = 32) whose scale is
 * read at a clamped index that the axes' ranges make the plain one (the graph
 * compiler's layer_norm_nchwc kernel). */
static const char contig_text[] =
    "op sk_colsum(X: f32[M, N])\n"
    "  out[j] = sum(i: X[i, j])\n"
    "op sk_ln_nchwc(x0: f32[N, CB, P, L], g: f32[C])\n"
    "  s1[n, i, c] = sum(cb: x0[n, cb, i, c])\n"
    "  sm[n, i] = sum(c: s1[n, i, c])\n"
    "  out[n, cb, i, c] = select(cb*16 + c < 32, (x0[n, cb, i, c] - sm[n, i] / 32) * g[min(cb*16 + c, 31)], 0.0)\n";

/* The arguments of p (at most 4): its inputs seeded random in [-1, 1) from `seed`, its
 * outputs allocated, and in ref[] the outputs the interpreter computes from them. */
static void interpreted_args(const tsl_te_program *p, uint64_t seed, tsl_tensor **args, tsl_tensor **ref) {
  int nargs = p->ninputs + p->noutputs;
  CU_ASSERT_FATAL(nargs <= 4);
  for (int i = 0; i < nargs; i++) {
    const tsl_buffer *b = i < p->ninputs ? p->inputs[i]->buf : p->outputs[i - p->ninputs]->buf;
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, b->ndim, b->shape, &args[i]), TSL_OK);
    tsl_status st = i < p->ninputs ? tsl_tensor_fill_random(args[i], seed + (uint64_t)i, -1.0, 1.0)
                                   : tsl_tensor_new(TSL_DTYPE_F32, b->ndim, b->shape, &ref[i]);
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  }
  CU_ASSERT_EQUAL_FATAL(tsl_te_interpret(p, (const tsl_tensor *const *)args, ref + p->ninputs), TSL_OK);
}

/* Samples n candidates of p (sketch = seed mod the sketch count, among the sketches using
 * rule `only` when it is not TSL_SKETCH_NONE; with tpl, the auto-scheduler's template:
 * seeded configs of its space), builds each with the host JIT, runs it and compares with
 * the interpreter: floats within 1e-5 of the output's magnitude. Returns how many
 * matched; counts the sketches that used rule `want`. */
static int check_candidates(const tsl_te_program *p, tsl_jit *jit, int n, tsl_sketch_rule want, int *used_want,
                            const tsl_template *tpl, tsl_sketch_rule only) {
  const tsl_target *t = tsl_jit_target(jit);
  tsl_sketch_list sl;
  CU_ASSERT_EQUAL_FATAL(tsl_sketch_generate(p, t, &sl), TSL_OK);
  CU_ASSERT_FATAL(sl.n >= 1);
  *used_want = 0;
  int pick[TSL_SKETCH_MAX], npick = 0;
  for (int k = 0; k < sl.n; k++) {
    bool has_only = only == TSL_SKETCH_NONE;
    for (int i = 0; i < sl.sketches[k].nstages; i++) {
      *used_want += sl.sketches[k].rule[i] == want;
      has_only |= sl.sketches[k].rule[i] == only;
    }
    if (has_only) pick[npick++] = k;
  }
  CU_ASSERT_FATAL(npick >= 1);
  int nargs = p->ninputs + p->noutputs;
  tsl_tensor *args[4] = {0}, *ref[4] = {0};
  interpreted_args(p, 31, args, ref);
  int64_t nout = tsl_tensor_numel(ref[nargs - 1]);
  double scale = 1.0;
  for (int64_t e = 0; e < nout; e++) scale = fmax(scale, fabs(tsl_tensor_get_f64(ref[nargs - 1], e)));
  int good = 0;
  for (int c = 0; c < n; c++) {
    int ski = pick[c % npick];
    const tsl_sketch *sk = &sl.sketches[ski];
    tsl_schedule *s = NULL;
    tsl_module *m = NULL;
    const tsl_kernel *k = NULL;
    tsl_status st;
    if (tpl) {
      tsl_config_space sp;
      tsl_config cfg;
      uint64_t r = (uint64_t)c * 0x9e3779b97f4a7c15ull + 12345;
      st = tpl->space(p, t, &sp);
      if (st == TSL_OK) st = tsl_config_from_index(&sp, (int64_t)((r ^ (r >> 29)) % (uint64_t)tsl_space_size(&sp)), &cfg);
      if (st == TSL_OK) st = tpl->apply(p, t, &sp, &cfg, &s);
    } else {
      st = tsl_sketch_sample(p, t, sk, (uint64_t)c + 1, &s);
    }
    if (st == TSL_OK && getenv("TSL_SKETCH_TRACE")) { /* which candidate a slow or failing build is */
      char *text = tsl_schedule_to_string(s);
      fprintf(stderr, "\n%s candidate %d (sketch %d):\n%s", p->name, c, ski, text ? text : "");
      free(text);
    }
    if (st == TSL_OK) st = tsl_module_new(&m);
    if (st == TSL_OK) st = tsl_build(s, p->name, jit, m, NULL, NULL);
    if (st == TSL_OK) st = tsl_module_get_kernel(m, p->name, &k);
    memset(args[nargs - 1]->data, 0xff, (size_t)nout * sizeof(float)); /* NaN: every element must be written */
    if (st == TSL_OK) st = tsl_kernel_call_tensors(k, args, nargs);
    double worst = st == TSL_OK ? 0 : INFINITY;
    for (int64_t e = 0; st == TSL_OK && e < nout; e++) {
      double d = fabs(tsl_tensor_get_f64(args[nargs - 1], e) - tsl_tensor_get_f64(ref[nargs - 1], e)) / scale;
      worst = isnan(d) ? INFINITY : fmax(worst, d);
    }
    if (!(worst <= 1e-5)) {
      char *text = s ? tsl_schedule_to_string(s) : NULL;
      printf("\n  %s candidate %d (sketch %d): %s, error %g; schedule:\n%s", p->name, c, ski,
             st == TSL_OK ? "wrong result" : tsl_last_error(), worst, text ? text : "(none)");
      free(text);
    }
    good += worst <= 1e-5;
    tsl_module_free(m);
    tsl_schedule_free(s);
  }
  for (int i = 0; i < nargs; i++) {
    tsl_tensor_free(args[i]);
    tsl_tensor_free(ref[i]);
  }
  return good;
}

/* An operator of ops_text at given input shapes, and a rule its sketches must use. */
typedef struct sketch_case {
  const char *op;
  int ninputs;
  int64_t shapes[2][4];
  int ndims[2];
  tsl_sketch_rule want;
} sketch_case;

/* The program of case c (fatal on error). */
static tsl_te_program *case_program(const tsl_dsl_module *mod, const sketch_case *c) {
  const int64_t *sh[2] = {c->shapes[0], c->shapes[1]};
  tsl_te_program *p = NULL;
  tsl_status st = tsl_dsl_instantiate(tsl_dsl_module_find(mod, c->op), c->ninputs, sh, c->ndims, 0, NULL, &p);
  if (st != TSL_OK) printf("\n  %s: %s\n", c->op, tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  return p;
}

/* The operators of ops_text, a current arena and a JIT for the host (host_env_close
 * frees them). */
typedef struct host_env {
  tsl_dsl_module *mod;
  tsl_arena *arena, *prev;
  tsl_jit *jit;
} host_env;

static void host_env_open(host_env *e) {
  memset(e, 0, sizeof *e);
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(ops_text, "sketch_ops.tsl", &e->mod), TSL_OK);
  e->arena = tsl_arena_new();
  e->prev = tsl_arena_set_current(e->arena);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&host, &e->jit), TSL_OK);
}

static void host_env_close(host_env *e) {
  tsl_jit_free(e->jit);
  tsl_arena_set_current(e->prev);
  tsl_arena_free(e->arena);
  tsl_dsl_module_free(e->mod);
}

static void test_sketch_candidates_match_interpreter(void) {
  host_env e;
  host_env_open(&e);
  tsl_dsl_module *mod = e.mod;
  tsl_jit *jit = e.jit;
  static const sketch_case cases[] = {
      {"sk_matmul", 2, {{24, 20}, {20, 40}}, {2, 2}, TSL_SKETCH_TILE_CACHE},
      {"sk_softmax", 1, {{6, 50}}, {2}, TSL_SKETCH_AT},
      {"sk_chsum", 1, {{2, 8, 10, 10}}, {4}, TSL_SKETCH_RFACTOR_INNER},
      {"sk_conv", 2, {{1, 4, 8, 9}, {6, 4, 3, 3}}, {4, 4}, TSL_SKETCH_TILE},
      {"sk_depthwise", 2, {{1, 6, 9, 7}, {6, 5, 5}}, {4, 3}, TSL_SKETCH_TILE_CACHE},
      {"sk_rowmax", 1, {{6, 200}}, {2}, TSL_SKETCH_RFACTOR_OUTER},
      {"sk_softplus", 1, {{7, 45}}, {2}, TSL_SKETCH_SPATIAL},
  };
  /* pass 0: the sketches sampled from seeds; pass 1: the auto-scheduler's template */
  for (size_t i = 0, pass = 0; pass < 2; i = (i + 1) % (sizeof cases / sizeof cases[0]), pass += i == 0) {
    const tsl_template *tpl = NULL;
    if (pass) CU_ASSERT_EQUAL_FATAL(tsl_autosched_template(cases[i].op, &tpl), TSL_OK);
    tsl_te_program *p = case_program(mod, &cases[i]);
    int used = 0, good = check_candidates(p, jit, SKETCH_SAMPLES, cases[i].want, &used, tpl, TSL_SKETCH_NONE);
    if (good != SKETCH_SAMPLES || !used)
      printf("\n  %s%s: %d of %d candidates match; rule %s in %d sketches\n", cases[i].op, pass ? " (auto template)" : "",
             good, SKETCH_SAMPLES, tsl_sketch_rule_name(cases[i].want), used);
    CU_ASSERT_EQUAL(good, SKETCH_SAMPLES);
    CU_ASSERT_TRUE(used > 0);
  }
  host_env_close(&e);
}

/* How many of n seeded samples of p's sketches with rule `rule` print `step`. */
static int samples_with_step(const tsl_te_program *p, const tsl_target *t, tsl_sketch_rule rule, int n,
                             const char *step) {
  tsl_sketch_list sl;
  CU_ASSERT_EQUAL_FATAL(tsl_sketch_generate(p, t, &sl), TSL_OK);
  int hits = 0;
  for (int k = 0; k < sl.n; k++) {
    bool has = false;
    for (int i = 0; i < sl.sketches[k].nstages; i++) has |= sl.sketches[k].rule[i] == rule;
    for (int c = 0; has && c < n; c++) {
      tsl_schedule *s = NULL;
      if (tsl_sketch_sample(p, t, &sl.sketches[k], (uint64_t)c + 1, &s) != TSL_OK) continue;
      char *text = tsl_schedule_to_string(s);
      hits += text && strstr(text, step) != NULL;
      free(text);
      tsl_schedule_free(s);
    }
  }
  return hits;
}

/* A channel sum's rfactor_inner sketches: some samples rfactor the partial results again
 * (k independent vector accumulators, tuner/sketch.c accumulators_split), and 50 seeded
 * candidates of those sketches each give the interpreter's result. */
static void test_rfactor_accumulators_sketched_and_correct(void) {
  host_env e;
  host_env_open(&e);
  static const sketch_case cs = {"sk_chsum", 1, {{2, 8, 10, 12}}, {4}, TSL_SKETCH_RFACTOR_INNER};
  tsl_te_program *p = case_program(e.mod, &cs);
  int used = 0;
  int good = check_candidates(p, e.jit, SKETCH_SAMPLES, cs.want, &used, NULL, TSL_SKETCH_RFACTOR_INNER);
  CU_ASSERT_EQUAL(good, SKETCH_SAMPLES);
  CU_ASSERT_TRUE(samples_with_step(p, tsl_jit_target(e.jit), TSL_SKETCH_RFACTOR_INNER, SKETCH_SAMPLES,
                                   "rfactor(out.rf, ") > 0);
  host_env_close(&e);
}

/* The tile_pack sketches (register tile, cache_write, L1/L2 tiles, a packed input) of a
 * matmul and an NCHW conv, with extents that leave tails at 8 and 16 lanes and that the
 * row tiles do not divide: the space has them, and 50 seeded candidates of them each give
 * the interpreter's result (with packing in some, an input packed in every layout the
 * seeds pick, storage_order among them). */
static void test_sketch_tile_pack_candidates_match_interpreter(void) {
  host_env e;
  host_env_open(&e);
  tsl_dsl_module *mod = e.mod;
  tsl_jit *jit = e.jit;
  static const sketch_case cases[] = {
      {"sk_matmul", 2, {{30, 17}, {17, 72}}, {2, 2}, TSL_SKETCH_TILE_PACK},
      {"sk_matmul", 2, {{64, 32}, {32, 48}}, {2, 2}, TSL_SKETCH_TILE_PACK},
      {"sk_conv", 2, {{1, 3, 7, 21}, {20, 3, 3, 3}}, {4, 4}, TSL_SKETCH_TILE_PACK},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tsl_te_program *p = case_program(mod, &cases[i]);
    int used = 0;
    int good = check_candidates(p, jit, SKETCH_SAMPLES, TSL_SKETCH_TILE_PACK, &used, NULL, TSL_SKETCH_TILE_PACK);
    if (good != SKETCH_SAMPLES) printf("\n  %s: %d of %d tile_pack candidates match\n", cases[i].op, good, SKETCH_SAMPLES);
    CU_ASSERT_EQUAL(good, SKETCH_SAMPLES);
    CU_ASSERT_TRUE(used > 0);
    /* the conv's weights W[k][c][r][s], read along k by the row tile or the vector axis,
     * pack as [c][r][s][k] in some candidates, and some take the output channels k as
     * the vector axis (accumulators stored k innermost) */
    if (strcmp(cases[i].op, "sk_conv") == 0)
      CU_ASSERT_TRUE(samples_with_step(p, tsl_jit_target(jit), TSL_SKETCH_TILE_PACK, SKETCH_SAMPLES,
                                       "storage_order(weight.local, ax1, ax2, ax3, ax0)") > 0 &&
                     samples_with_step(p, tsl_jit_target(jit), TSL_SKETCH_TILE_PACK, SKETCH_SAMPLES,
                                       "storage_order(out.local, n, y, x, k)") > 0);
  }
  host_env_close(&e);
}

/* The same program, sketch and seed give the same schedule text. */
static void test_sketch_sampling_is_deterministic(void) {
  tsl_dsl_module *mod = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(ops_text, "sketch_ops.tsl", &mod), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &host), TSL_OK);
  const int64_t a[] = {64, 48}, b[] = {48, 40};
  const int64_t *sh[2] = {a, b};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(tsl_dsl_module_find(mod, "sk_matmul"), 2, sh, (int[]){2, 2}, 0, NULL, &p),
                        TSL_OK);
  tsl_sketch_list sl;
  CU_ASSERT_EQUAL_FATAL(tsl_sketch_generate(p, &host, &sl), TSL_OK);
  /* matmul 64x40: generic (the default), tile, tile_cache, tile_pack (no rfactor: the
   * spatial part is large) */
  CU_ASSERT_EQUAL(sl.n, 4);
  CU_ASSERT_EQUAL(sl.sketches[0].rule[sl.sketches[0].nstages - 1], TSL_SKETCH_GENERIC);
  for (int k = 0; k < sl.n; k++) {
    tsl_schedule *s1 = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_sketch_sample(p, &host, &sl.sketches[k], 9, &s1), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_sketch_sample(p, &host, &sl.sketches[k], 9, &s2), TSL_OK);
    char *t1 = tsl_schedule_to_string(s1), *t2 = tsl_schedule_to_string(s2);
    CU_ASSERT_STRING_EQUAL(t1, t2);
    if (!strstr(t1, "parallel(") || !strstr(t1, "vectorize("))
      printf("\n  sketch %d (%s): no parallel or vectorize step:\n%s", k,
             tsl_sketch_rule_name(sl.sketches[k].rule[sl.sketches[k].nstages - 1]), t1);
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, "parallel("));
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, "vectorize("));
    free(t1);
    free(t2);
    tsl_schedule_free(s1);
    tsl_schedule_free(s2);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_dsl_module_free(mod);
}

/* At 4, 8 and 16 lanes (NEON, AVX2, AVX-512 targets; lowered, not run: the host may lack
 * them) every sampled candidate of every operator lowers, and the sampled vector tiles
 * follow the target's lanes. */
static void test_sketch_candidates_lower_at_every_lane_count(void) {
  tsl_dsl_module *mod = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(ops_text, "sketch_ops.tsl", &mod), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  const char *targets[3] = {"armv8", "x86-64-avx2", "x86-64-avx512"};
  const int64_t a[] = {32, 64}, b[] = {64, 48};
  const int64_t *sh[2] = {a, b};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(tsl_dsl_module_find(mod, "sk_matmul"), 2, sh, (int[]){2, 2}, 0, NULL, &p),
                        TSL_OK);
  for (int ti = 0; ti < 3; ti++) {
    tsl_target t;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[ti], &t), TSL_OK);
    int lanes = tsl_target_f32_lanes(&t), lane_multiple = 0;
    tsl_sketch_list sl;
    CU_ASSERT_EQUAL_FATAL(tsl_sketch_generate(p, &t, &sl), TSL_OK);
    tsl_lower_options o = tsl_lower_options_default();
    o.vector_bits = t.vector_bits;
    for (int c = 0; c < 20; c++) {
      tsl_schedule *s = NULL;
      tsl_func *f = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_sketch_sample(p, &t, &sl.sketches[c % sl.n], (uint64_t)c + 1, &s), TSL_OK);
      tsl_status st = tsl_lower_with(s, "sk_lanes", &o, &f);
      if (st != TSL_OK) printf("\n  %s candidate %d: %s\n", targets[ti], c, tsl_last_error());
      CU_ASSERT_EQUAL(st, TSL_OK);
      for (int i = 0; i < s->nstages; i++) {
        const tsl_stage *stg = s->stages[i];
        for (int k = 0; k < stg->nleaf; k++) {
          const tsl_stage_iter *it = &stg->iters[stg->leaf[k]];
          lane_multiple += it->annotation == TSL_FOR_VECTORIZED && it->extent % lanes == 0;
        }
      }
      tsl_schedule_free(s);
    }
    /* N = 48 is a multiple of 4, 8 and 16: most vector tiles are lane multiples */
    CU_ASSERT_TRUE(lane_multiple >= 10);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_dsl_module_free(mod);
}

/* Vector accesses of lowered IR: `unit` those whose flattened index is a ramp of stride
 * 1 (or a broadcast: one element), `other` the rest (strided ramps, gathers). */
typedef struct vec_count {
  int unit, other;
} vec_count;

static void count_index(const tsl_expr *index, vec_count *vc) {
  if (!index || index->type.lanes <= 1) return;
  int64_t stride = 0;
  bool unit = (index->kind == TSL_E_RAMP && tsl_expr_is_const_int(index->ramp.stride, &stride) && stride == 1) ||
              index->kind == TSL_E_BROADCAST;
  if (unit) vc->unit++;
  else vc->other++;
}

static void count_expr(const tsl_expr *e, vec_count *vc) {
  if (!e) return;
  switch (e->kind) {
  case TSL_E_INT:
  case TSL_E_FLOAT:
  case TSL_E_VAR: return;
  case TSL_E_NOT:
  case TSL_E_CAST: count_expr(e->un.a, vc); return;
  case TSL_E_SELECT:
    count_expr(e->select.cond, vc);
    count_expr(e->select.t, vc);
    count_expr(e->select.f, vc);
    return;
  case TSL_E_BROADCAST: count_expr(e->broadcast.value, vc); return;
  case TSL_E_RAMP: return;
  case TSL_E_LOAD:
    for (int i = 0; i < e->load.nindex; i++) count_index(e->load.index[i], vc);
    count_expr(e->load.predicate, vc);
    return;
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs; i++) count_expr(e->call.args[i], vc);
    return;
  case TSL_E_LET:
    count_expr(e->let.value, vc);
    count_expr(e->let.body, vc);
    return;
  case TSL_E_REDUCE: return;
  default:
    count_expr(e->bin.a, vc);
    count_expr(e->bin.b, vc);
    return;
  }
}

static void count_stmt(const tsl_stmt *s, vec_count *vc) {
  if (!s) return;
  switch (s->kind) {
  case TSL_S_FOR: count_stmt(s->loop.body, vc); return;
  case TSL_S_STORE:
    for (int i = 0; i < s->store.nindex; i++) count_index(s->store.index[i], vc);
    count_expr(s->store.value, vc);
    return;
  case TSL_S_ALLOCATE: count_stmt(s->allocate.body, vc); return;
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) count_stmt(s->seq.stmts[i], vc);
    return;
  case TSL_S_IF:
    count_expr(s->if_.cond, vc);
    count_stmt(s->if_.then_case, vc);
    count_stmt(s->if_.else_case, vc);
    return;
  case TSL_S_LET:
    count_expr(s->let.value, vc);
    count_stmt(s->let.body, vc);
    return;
  case TSL_S_EVALUATE: count_expr(s->evaluate.value, vc); return;
  }
}

typedef tsl_status (*schedule_fn)(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out);

/* The schedule `sched` gives p on the host, built and run on seeded inputs, equals the
 * interpreter within 1e-5 of the output's magnitude. */
static bool default_matches_interpreter(const tsl_te_program *p, schedule_fn sched, tsl_jit *jit) {
  int nargs = p->ninputs + p->noutputs;
  tsl_tensor *args[4] = {0}, *ref[4] = {0};
  interpreted_args(p, 7, args, ref);
  tsl_schedule *s = NULL;
  tsl_module *m = NULL;
  const tsl_kernel *k = NULL;
  tsl_status st = sched(p, tsl_jit_target(jit), &s);
  if (st == TSL_OK) st = tsl_module_new(&m);
  if (st == TSL_OK) st = tsl_build(s, p->name, jit, m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(m, p->name, &k);
  int64_t nout = tsl_tensor_numel(ref[nargs - 1]);
  memset(args[nargs - 1]->data, 0xff, (size_t)nout * sizeof(float)); /* NaN: every element must be written */
  if (st == TSL_OK) st = tsl_kernel_call_tensors(k, args, nargs);
  double scale = 1.0, worst = st == TSL_OK ? 0 : INFINITY;
  for (int64_t e = 0; e < nout; e++) scale = fmax(scale, fabs(tsl_tensor_get_f64(ref[nargs - 1], e)));
  for (int64_t e = 0; st == TSL_OK && e < nout; e++) {
    double d = fabs(tsl_tensor_get_f64(args[nargs - 1], e) - tsl_tensor_get_f64(ref[nargs - 1], e)) / scale;
    worst = isnan(d) ? INFINITY : fmax(worst, d);
  }
  if (!(worst <= 1e-5)) printf("\n  %s: %s, error %g", p->name, st == TSL_OK ? "wrong result" : tsl_last_error(), worst);
  tsl_module_free(m);
  tsl_schedule_free(s);
  for (int i = 0; i < nargs; i++) {
    tsl_tensor_free(args[i]);
    tsl_tensor_free(ref[i]);
  }
  return worst <= 1e-5;
}

/* The schedule `sched` gives (the graph compiler's kernel without records) vectorizes
 * only along memory: at 4, 8 and 16 lanes, every vector load and store of its lowered IR
 * reads or writes consecutive elements (a ramp of stride 1, or one element broadcast),
 * never a strided ramp or a gather; the row reductions (whose spatial axis is strided)
 * still get vectors, along the reduction (rfactor), the column sum along its spatial
 * axis, the layer norm's output along the channels despite the clamp of its scale's
 * index, and the stride-2 max pool none. On the host each equals the interpreter. */
static void check_vectorizes_only_contiguous_axes(schedule_fn sched) {
  static const char pool_text[] = "op sk_maxpool(data: f32[N, C, H, W])\n"
                                  "  out[n, c, y, x] = max(r, s: data[n, c, y * 2 + r, x * 2 + s])\n"
                                  "    where y < (H - 3) / 2 + 1, x < (W - 3) / 2 + 1, r < 3, s < 3\n";
  tsl_dsl_module *mod = NULL, *pool = NULL, *contig = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(ops_text, "sketch_ops.tsl", &mod), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(pool_text, "pool.tsl", &pool), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(contig_text, "contig.tsl", &contig), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  static const int64_t mm_a[] = {64, 48}, mm_b[] = {48, 40}, rows[] = {64, 200}, nchw[] = {1, 8, 17, 24},
                       conv_w[] = {8, 8, 3, 3}, dw_w[] = {8, 5, 5}, ln_x[] = {1, 2, 49, 16}, ln_g[] = {32};
  const struct {
    const tsl_dsl_module *mod;
    const char *op;
    int nin;
    const int64_t *shapes[2];
    int ndims[2];
    bool vectors; /* some vector access expected */
  } cases[] = {
      {NULL, "sk_matmul", 2, {mm_a, mm_b}, {2, 2}, true},   {NULL, "sk_rowmax", 1, {rows}, {2}, true},
      {NULL, "sk_softmax", 1, {rows}, {2}, true},           {NULL, "sk_chsum", 1, {nchw}, {4}, true},
      {NULL, "sk_conv", 2, {nchw, conv_w}, {4, 4}, true},   {NULL, "sk_depthwise", 2, {nchw, dw_w}, {4, 3}, true},
      {NULL, "sk_softplus", 1, {rows}, {2}, true},          {pool, "sk_maxpool", 1, {nchw}, {4}, false},
      {contig, "sk_colsum", 1, {rows}, {2}, true},          {contig, "sk_ln_nchwc", 2, {ln_x, ln_g}, {4, 1}, true},
  };
  const char *targets[3] = {"armv8", "x86-64-avx2", "x86-64-avx512"};
  tsl_target host;
  tsl_jit *jit = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&host, &jit), TSL_OK);
  for (int ti = 0; ti < 4; ti++) {
    tsl_target t = host;
    if (ti < 3) CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[ti], &t), TSL_OK);
    tsl_lower_options o = tsl_lower_options_default();
    o.vector_bits = t.vector_bits;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      const tsl_dsl_module *m = cases[i].mod ? cases[i].mod : mod;
      tsl_te_program *p = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(tsl_dsl_module_find(m, cases[i].op), cases[i].nin, cases[i].shapes,
                                                cases[i].ndims, 0, NULL, &p),
                            TSL_OK);
      if (ti == 3) { /* the host: the kernel's results */
        CU_ASSERT_TRUE(default_matches_interpreter(p, sched, jit));
        continue;
      }
      tsl_schedule *s = NULL;
      tsl_func *f = NULL;
      CU_ASSERT_EQUAL_FATAL(sched(p, &t, &s), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tsl_lower_with(s, "sk_contig", &o, &f), TSL_OK);
      vec_count vc = {0, 0};
      count_stmt(f->body, &vc);
      if (vc.other != 0 || (vc.unit > 0) != cases[i].vectors) {
        char *text = tsl_schedule_to_string(s);
        printf("\n  %s on %s: %d contiguous, %d strided vector accesses; schedule:\n%s", cases[i].op, targets[ti],
               vc.unit, vc.other, text ? text : "");
        free(text);
      }
      CU_ASSERT_EQUAL(vc.other, 0);
      CU_ASSERT_EQUAL(vc.unit > 0, cases[i].vectors);
      tsl_schedule_free(s);
    }
  }
  tsl_jit_free(jit);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_dsl_module_free(mod);
  tsl_dsl_module_free(pool);
  tsl_dsl_module_free(contig);
}

/* The auto-scheduler's default schedule (tuner/autosched.h). */
static void test_autosched_default_vectorizes_only_contiguous_axes(void) {
  check_vectorizes_only_contiguous_axes(tsl_autosched_default_schedule);
}

/* The generic default schedule of graph kernels (ops/nn/default_schedule.h), whose
 * reductions use the same contiguity analysis (schedule/axis_access.h). */
static void test_generic_default_vectorizes_only_contiguous_axes(void) {
  check_vectorizes_only_contiguous_axes(tsl_default_schedule);
}

/* Rows that are not a multiple of the lanes (W = 12 at 8 and 16 lanes) in planes that
 * are (12 x 12 = 144): the auto-scheduler's default (the generic sketch) fuses h and w,
 * which walk memory as one axis (schedule/axis_access.h: tsl_axis_fusable), and its
 * vectors are all full (no predicated lanes, the lowered IR has no "if"); a crop, whose
 * output rows (12) are shorter than its input rows (14), is not fused. On the host each
 * equals the interpreter. */
static void test_generic_fuses_rows_into_full_vectors(void) {
  static const char text[] = "op sk_gelu(X: f32[N, C, H, W])\n"
                             "  out[n, c, h, w] = 0.5 * X[n, c, h, w] * (1.0 + erf(X[n, c, h, w] * 0.70710678))\n"
                             "op sk_crop(X: f32[N, C, H, W])\n"
                             "  out[n, c, h, w] = X[n, c, h + 1, w + 1] * 2.0\n"
                             "    where h < H - 2, w < W - 2\n";
  tsl_dsl_module *mod = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(text, "rows.tsl", &mod), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  static const int64_t gelu_x[] = {1, 4, 12, 12}, crop_x[] = {1, 4, 14, 14};
  const char *targets[3] = {"x86-64-avx2", "x86-64-avx512", "host"};
  tsl_target host;
  tsl_jit *jit = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&host, &jit), TSL_OK);
  for (int op = 0; op < 2; op++) {
    const int64_t *sh[1] = {op == 0 ? gelu_x : crop_x};
    tsl_te_program *p = NULL;
    CU_ASSERT_EQUAL_FATAL(
        tsl_dsl_instantiate(tsl_dsl_module_find(mod, op == 0 ? "sk_gelu" : "sk_crop"), 1, sh, (int[]){4}, 0, NULL, &p),
        TSL_OK);
    tsl_schedule *s0 = NULL;
    bool fusable = true;
    CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s0), TSL_OK);
    const tsl_stage *out = s0->stages[s0->nstages - 1];
    CU_ASSERT_EQUAL(tsl_axis_fusable(s0, out, 2, 3, &fusable), TSL_OK);
    CU_ASSERT_EQUAL(fusable, op == 0);
    CU_ASSERT_EQUAL(tsl_axis_fusable(s0, out, 0, 3, &fusable), TSL_OK);
    CU_ASSERT_EQUAL(fusable, op == 0);
    CU_ASSERT_EQUAL(tsl_axis_fusable(s0, out, 3, 4, &fusable), TSL_ERR_INVALID);
    tsl_schedule_free(s0);
    for (int ti = 0; ti < 3; ti++) {
      tsl_target t;
      CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[ti], &t), TSL_OK);
      if (tsl_target_f32_lanes(&t) < 8) continue; /* 12 is a multiple of 4: nothing to fuse */
      tsl_lower_options o = tsl_lower_options_default();
      o.vector_bits = t.vector_bits;
      tsl_schedule *s = NULL;
      tsl_func *f = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_autosched_default_schedule(p, &t, &s), TSL_OK);
      char *st = tsl_schedule_to_string(s);
      CU_ASSERT_EQUAL_FATAL(tsl_lower_with(s, "sk_rows", &o, &f), TSL_OK);
      char *ir = tsl_stmt_to_string(f->body);
      bool fused = st && strstr(st, "fuse(out, h, w)"), vector = st && strstr(st, "vectorize(out, h.w.fused.inner)");
      bool tail = !ir || strstr(ir, " if ") || strstr(ir, "if (");
      if (fused != (op == 0) || (op == 0 && (!vector || tail)))
        printf("\n  %s on %s: schedule\n%s\nIR\n%s", p->name, targets[ti], st ? st : "", ir ? ir : "");
      CU_ASSERT_EQUAL(fused, op == 0);
      if (op == 0) CU_ASSERT_TRUE(vector && !tail);
      free(st);
      free(ir);
      tsl_schedule_free(s);
    }
    CU_ASSERT_TRUE(default_matches_interpreter(p, tsl_autosched_default_schedule, jit));
  }
  tsl_jit_free(jit);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_dsl_module_free(mod);
}

/* The tuner searches the auto-scheduler's template of an op with no schedule block
 * (tune-op --file's path) with the evolutionary search: every candidate checked by the
 * runner; the dispatcher then applies the best record, and without records the
 * template's default (the first sketch). */
static void test_autosched_tuned_then_dispatched(void) {
  tsl_dsl_module *mod = NULL;
  const tsl_op_info *info = NULL;
  const tsl_template *tpl = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse("op sk_tuned_rowmax(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n", "rowmax.tsl",
                                      &mod), TSL_OK);
  const tsl_dsl_op *def = tsl_dsl_module_op(mod, 0);
  CU_ASSERT_EQUAL_FATAL(tsl_op_register_user(def, tsl_dsl_op_text(def), &info), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_autosched_template("sk_tuned_rowmax", &tpl), TSL_OK);
  CU_ASSERT_STRING_EQUAL(tpl->name, "sk_tuned_rowmax.auto");
  char path[] = "/tmp/tessel-autosched-XXXXXX";
  int fd = mkstemp(path);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  const int64_t x[] = {32, 96};
  const int64_t *shapes[] = {x};
  const int nd[] = {2};
  tsl_workload w;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_init(&w, "sk_tuned_rowmax", 1, shapes, nd, 0, NULL), TSL_OK);
  tsl_tune_opts o = tsl_tune_opts_default();
  o.trials = 16;
  o.batch = 4;
  o.search = TSL_SEARCH_EVOLUTION;
  o.records_path = path;
  o.measure.time.repeat = 2;
  o.measure.time.min_repeat_ms = 0;
  tsl_tune_result res;
  CU_ASSERT_EQUAL_FATAL(tsl_tune_workload(&host, &w, &o, &res), TSL_OK);
  CU_ASSERT(res.found);
  CU_ASSERT_STRING_EQUAL(res.template_name, "sk_tuned_rowmax.auto");
  CU_ASSERT(res.trials >= 16);
  CU_ASSERT_EQUAL(res.errors, 0); /* every candidate built and matched the reference */
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, path, true, NULL), TSL_OK);
  CU_ASSERT(db->n >= 16);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info di;
  CU_ASSERT_EQUAL(tsl_dispatch_schedule(db, &host, &w, NULL, &p, &s, &di), TSL_OK);
  CU_ASSERT(di.tuned);
  CU_ASSERT_STRING_EQUAL(di.template_name, "sk_tuned_rowmax.auto");
  CU_ASSERT_STRING_EQUAL(di.config_str, res.config_str);
  tsl_schedule_free(s);
  s = NULL;
  CU_ASSERT_EQUAL(tsl_dispatch_schedule(NULL, &host, &w, NULL, &p, &s, &di), TSL_OK);
  CU_ASSERT(!di.tuned);
  CU_ASSERT_STRING_EQUAL(di.template_name, "sk_tuned_rowmax.auto");
  CU_ASSERT_PTR_NOT_NULL(strstr(di.config_str, "sketch=0,d0=8,"));
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_records_free(db);
  unlink(path);
}

/* A known cost over 4 knobs of 16 values (a bowl, minimum 1 at (11, 3, 7, 13)): the
 * evolutionary search proposes each config at most once, only points of the space, and
 * with the model's guidance finds a cheaper config in 96 trials than random search with
 * the same seed (deterministic: seeded searches and model). */
static double bowl(const tsl_config *c) {
  static const int64_t best[4] = {11, 3, 7, 13};
  double d = 1;
  for (int k = 0; k < 4; k++) d += (double)((c->values[k] - best[k]) * (c->values[k] - best[k]));
  return d;
}

static double search_best(tsl_search_kind kind, bool *unique) {
  tsl_config_space sp;
  memset(&sp, 0, sizeof sp);
  int64_t v[16];
  for (int i = 0; i < 16; i++) v[i] = i;
  for (int k = 0; k < 4; k++) {
    char name[8];
    snprintf(name, sizeof name, "k%d", k);
    CU_ASSERT_EQUAL_FATAL(tsl_space_add_knob(&sp, name, TSL_KNOB_SPLIT, 16, v), TSL_OK);
  }
  tsl_search *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_search_new(kind, &sp, 7, &s), TSL_OK);
  static int64_t seen[96];
  double best = INFINITY;
  int n = 0;
  *unique = true;
  while (n < 96) {
    tsl_config c[8];
    double cost[8];
    int got = tsl_search_next(s, c, 8);
    CU_ASSERT_FATAL(got > 0);
    for (int i = 0; i < got && n < 96; i++, n++) {
      seen[n] = tsl_config_index(&sp, &c[i]);
      CU_ASSERT(seen[n] >= 0);
      for (int j = 0; j < n; j++) *unique &= seen[j] != seen[n];
      cost[i] = bowl(&c[i]);
      best = fmin(best, cost[i]);
    }
    CU_ASSERT_EQUAL(tsl_search_update(s, c, cost, got), TSL_OK);
  }
  tsl_search_free(s);
  return best;
}

static void test_evolution_search_beats_random_on_a_known_cost(void) {
  tsl_search_kind k;
  CU_ASSERT_TRUE(tsl_search_kind_parse("evolution", &k) && k == TSL_SEARCH_EVOLUTION);
  bool u_evo = false, u_rand = false;
  double evo = search_best(TSL_SEARCH_EVOLUTION, &u_evo), rnd = search_best(TSL_SEARCH_RANDOM, &u_rand);
  if (!(evo < rnd)) printf("\n  best cost: evolution %g, random %g\n", evo, rnd);
  CU_ASSERT(u_evo && u_rand);
  CU_ASSERT(evo < rnd);
}

void tsl_tests_tuner_sketch(void) {
  CU_pSuite s = CU_add_suite("tuner/sketch", NULL, NULL);
  CU_add_test(s, "test_sketch_candidates_match_interpreter", test_sketch_candidates_match_interpreter);
  CU_add_test(s, "test_sketch_tile_pack_candidates_match_interpreter",
              test_sketch_tile_pack_candidates_match_interpreter);
  CU_add_test(s, "test_rfactor_accumulators_sketched_and_correct", test_rfactor_accumulators_sketched_and_correct);
  CU_add_test(s, "test_sketch_sampling_is_deterministic", test_sketch_sampling_is_deterministic);
  CU_add_test(s, "test_sketch_candidates_lower_at_every_lane_count", test_sketch_candidates_lower_at_every_lane_count);
  CU_add_test(s, "test_autosched_default_vectorizes_only_contiguous_axes",
              test_autosched_default_vectorizes_only_contiguous_axes);
  CU_add_test(s, "test_generic_default_vectorizes_only_contiguous_axes",
              test_generic_default_vectorizes_only_contiguous_axes);
  CU_add_test(s, "test_generic_fuses_rows_into_full_vectors", test_generic_fuses_rows_into_full_vectors);
  CU_add_test(s, "test_autosched_tuned_then_dispatched", test_autosched_tuned_then_dispatched);
  CU_add_test(s, "test_evolution_search_beats_random_on_a_known_cost", test_evolution_search_beats_random_on_a_known_cost);
}
