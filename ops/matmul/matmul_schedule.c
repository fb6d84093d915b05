/* The matmul schedule template (see matmul.h): knobs -> schedule steps. */
#include "ops/matmul/matmul_schedule.h"

#include <string.h>

enum { NAME_MAX_LEN = 128 };

typedef char axis_name[NAME_MAX_LEN];

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* A block size for an extent, a multiple of `unit` between target/2 and target, whose
 * tail block wastes the fewest unit-sized iterations. Lowering gives the tail block
 * the loops of a full block with guards, so a tail of w elements runs b/unit inner
 * iterations of which only ceil(w/unit) do work; for columns the idle ones are masked
 * vector code. So N = 1000 with 16-column panels gets blocks of 48 (tail 40: 3 of 3
 * panels busy) rather than 64 (tail 40: 3 of 4). Ties go to the larger block. */
static int64_t fitted_block(int64_t extent, int64_t target, int64_t unit) {
  if (target >= extent) return extent;
  int64_t best = target / unit * unit, best_waste = INT64_MAX;
  for (int64_t b = best; b >= unit && 2 * b >= target; b -= unit) {
    int64_t w = extent % b;
    int64_t waste = w == 0 ? 0 : b / unit - ceil_div(w, unit);
    if (waste < best_waste) {
      best_waste = waste;
      best = b;
    }
  }
  return best > 0 ? best : unit;
}

tsl_matmul_knobs tsl_matmul_default_knobs(const tsl_target *t, int64_t M, int64_t N, int64_t K) {
  tsl_matmul_knobs k;
  int64_t lanes = tsl_target_f32_lanes(t);
  bool wide_file = tsl_target_vector_registers(t) >= 32;
  int64_t l1 = t && t->l1d_bytes > 0 ? t->l1d_bytes : 32 * 1024;
  int64_t l2 = t && t->l2_bytes > 0 ? t->l2_bytes : 512 * 1024;
  const int64_t elem = 4;
  M = max64(M, 1);
  N = max64(N, 1);
  K = max64(K, 1);
  k.vec = lanes;
  /* 16 vector registers: 6 x 2 accumulators + 2 B vectors + 1 broadcast. 32 registers:
   * 12 x 2 accumulators. */
  k.mr = wide_file ? 12 : 6;
  k.nr = 2 * lanes;
  k.ku = 1;
  k.parallel = true;
  k.pack_b = TSL_MATMUL_PACK_BLOCK;
  /* Whole-K register blocks (cache_c) while one A row strip and one B panel, (mr + nr)
   * x K, fit half of L2: C is then written once and never read. On Zen 3 this was
   * 1.1-1.3x faster at 1024 than k blocks with C accumulated in memory. */
  k.cache_c = (k.mr + k.nr) * K * elem <= l2 / 2;
  if (k.cache_c) {
    /* the mc x K block of A, and the K x nc block of B, each in half of L2 */
    k.kc = K;
    k.mc = fitted_block(M, max64(k.mr, l2 / 2 / (K * elem) / k.mr * k.mr), k.mr);
    k.nc = fitted_block(N, max64(k.nr, l2 / 2 / (K * elem) / k.nr * k.nr), k.nr);
    k.pack_a = false;
  } else {
    /* the kc x nr panel of B in half of L1, the mc x kc block of A and the kc x nc
     * block of B each in half of L2 */
    k.kc = fitted_block(K, max64(16, l1 / 2 / (k.nr * elem)), 1);
    k.mc = fitted_block(M, max64(k.mr, l2 / 2 / (k.kc * elem) / k.mr * k.mr), k.mr);
    k.nc = fitted_block(N, max64(k.nr, l2 / 2 / (k.kc * elem) / k.nr * k.nr), k.nr);
    k.pack_a = true;
  }
  return k;
}

tsl_status tsl_matmul_knobs_check(const tsl_matmul_knobs *k, int64_t M, int64_t N, int64_t K) {
  (void)K;
  if (!k) return tsl_error(TSL_ERR_INVALID, "matmul template: no knobs");
  const struct {
    const char *name;
    int64_t v;
  } pos[] = {{"mr", k->mr}, {"nr", k->nr}, {"vec", k->vec}, {"kc", k->kc},
             {"mc", k->mc}, {"nc", k->nc}, {"ku", k->ku}};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
    if (pos[i].v < 1)
      return tsl_error(TSL_ERR_INVALID, "matmul template: knob %s = %lld (must be >= 1)", pos[i].name,
                       (long long)pos[i].v);
  if (k->pack_b != TSL_MATMUL_PACK_NONE && k->pack_b != TSL_MATMUL_PACK_PANEL && k->pack_b != TSL_MATMUL_PACK_BLOCK)
    return tsl_error(TSL_ERR_INVALID, "matmul template: knob pack_b = %d (must be none 0, panel 1 or block 2)",
                     (int)k->pack_b);
  if (k->nr % k->vec != 0)
    return tsl_error(TSL_ERR_INVALID, "matmul template: knob nr = %lld is not a multiple of vec = %lld",
                     (long long)k->nr, (long long)k->vec);
  if (k->mc < M && k->mc % k->mr != 0)
    return tsl_error(TSL_ERR_INVALID, "matmul template: knob mc = %lld is not a multiple of mr = %lld",
                     (long long)k->mc, (long long)k->mr);
  if (k->nc < N && k->nc % k->nr != 0)
    return tsl_error(TSL_ERR_INVALID, "matmul template: knob nc = %lld is not a multiple of nr = %lld",
                     (long long)k->nc, (long long)k->nr);
  return TSL_OK;
}

/* Is e a read of buf at exactly (x, y)? */
static bool reads_at(const tsl_expr *e, const tsl_buffer *buf, const tsl_expr *x, const tsl_expr *y) {
  return e->kind == TSL_E_LOAD && e->load.buf == buf && e->load.nindex == 2 && !e->load.predicate &&
         e->load.index[0] == x && e->load.index[1] == y;
}

/* Is op's body sum(k: A[i, k] * B[k, j]) (either operand order), without a condition? */
static bool is_product_of_reads(const tsl_te_op *op, const tsl_buffer *a, const tsl_buffer *b) {
  const tsl_expr *body = op->body;
  if (!body || body->kind != TSL_E_REDUCE || body->reduce.combiner != TSL_REDUCE_SUM ||
      body->reduce.condition || body->reduce.naxes != 1)
    return false;
  const tsl_expr *src = body->reduce.source;
  if (src->kind != TSL_E_MUL) return false;
  const tsl_expr *i = op->axis[0].var, *j = op->axis[1].var, *k = body->reduce.axes[0].var;
  const tsl_expr *x = src->bin.a, *y = src->bin.b;
  return (reads_at(x, a, i, k) && reads_at(y, b, k, j)) || (reads_at(y, a, i, k) && reads_at(x, b, k, j));
}

tsl_status tsl_matmul_shape(const tsl_te_program *p, int64_t *M, int64_t *N, int64_t *K) {
  if (!p || !M || !N || !K) return tsl_error(TSL_ERR_INVALID, "matmul template: NULL argument");
  if (p->noutputs != 1 || p->ninputs != 2)
    return tsl_error(TSL_ERR_INVALID, "matmul template: program %s has %d inputs and %d outputs (want 2 and 1)",
                     p->name ? p->name : "?", p->ninputs, p->noutputs);
  const tsl_te_op *op = p->outputs[0]->op;
  if (!op || op->kind != TSL_TE_COMPUTE || op->naxis != 2 || op->nreduce != 1)
    return tsl_error(TSL_ERR_INVALID,
                     "matmul template: the output of %s is not a reduction over one axis into a matrix",
                     p->name ? p->name : "?");
  const tsl_buffer *a = p->inputs[0]->buf, *b = p->inputs[1]->buf, *c = p->outputs[0]->buf;
  if (p->inputs[0]->op->kind != TSL_TE_PLACEHOLDER || p->inputs[1]->op->kind != TSL_TE_PLACEHOLDER ||
      a->ndim != 2 || b->ndim != 2)
    return tsl_error(TSL_ERR_INVALID, "matmul template: inputs of %s are not two matrices",
                     p->name ? p->name : "?");
  if (a->shape[1] != b->shape[0] || c->shape[0] != a->shape[0] || c->shape[1] != b->shape[1] ||
      op->reduce_axis[0].extent != a->shape[1])
    return tsl_error(TSL_ERR_INVALID,
                     "matmul template: shapes A %lldx%lld, B %lldx%lld, C %lldx%lld are not A[M,K] B[K,N] C[M,N]",
                     (long long)a->shape[0], (long long)a->shape[1], (long long)b->shape[0],
                     (long long)b->shape[1], (long long)c->shape[0], (long long)c->shape[1]);
  if (!is_product_of_reads(op, a, b))
    return tsl_error(TSL_ERR_INVALID, "matmul template: the output of %s is not sum(k: A[i, k] * B[k, j])",
                     p->name ? p->name : "?");
  *M = a->shape[0];
  *K = a->shape[1];
  *N = b->shape[1];
  return TSL_OK;
}

/* Writes "<axis><suffix>" into out; false when it does not fit. */
static bool derived_name(axis_name out, const char *axis, const char *suffix) {
  size_t a = strlen(axis), b = strlen(suffix);
  if (a + b + 1 > NAME_MAX_LEN) return false;
  memmove(out, axis, a);
  memcpy(out + a, suffix, b + 1);
  return true;
}

static tsl_status copy_name(axis_name out, const char *name) {
  if (derived_name(out, name, "")) return TSL_OK;
  return tsl_error(TSL_ERR_INVALID, "matmul template: stage name %s is too long", name);
}

/* Splits `axis` by factor; writes the names split() gives the halves to outer/inner. */
static tsl_status split(tsl_schedule *s, const char *stage, const char *axis, int64_t factor, axis_name outer,
                        axis_name inner) {
  axis_name parent;
  if (!derived_name(parent, axis, "") || !derived_name(outer, parent, ".outer") ||
      !derived_name(inner, parent, ".inner"))
    return tsl_error(TSL_ERR_INVALID, "matmul template: axis name %s of stage %s is too long", axis, stage);
  return tsl_schedule_split(s, stage, parent, factor);
}

/* Vectorizes the innermost axis of a cache stage (axes ax0, ax1) by vec lanes. */
static tsl_status vectorize_copy(tsl_schedule *s, const char *stage, int64_t vec) {
  if (vec <= 1) return TSL_OK;
  axis_name o, in;
  tsl_status st = split(s, stage, "ax1", vec, o, in);
  if (st == TSL_OK) st = tsl_schedule_vectorize(s, stage, in);
  return st;
}

/* Attaches a cache stage at the innermost present loop among candidates (outermost
 * first; "" = absent); none present: it stays at the root. */
static tsl_status attach(tsl_schedule *s, const char *cache, const char *stage, int n, const char *const *cands) {
  for (int i = n - 1; i >= 0; i--)
    if (cands[i][0]) return tsl_schedule_compute_at(s, cache, stage, cands[i]);
  return TSL_OK;
}

/* The micro-kernel stage C.local (cache_c): k outermost, then the unrolled register
 * block. Its axes are C's root axes (names ai, aj, ak). */
static tsl_status schedule_local(tsl_schedule *s, const char *local, const char *ai, const char *aj,
                                 const char *ak, const tsl_matmul_knobs *k) {
  axis_name jv, jl, kk, ku = "";
  tsl_status st = split(s, local, aj, k->vec, jv, jl);
  if (st == TSL_OK && k->ku > 1) st = split(s, local, ak, k->ku, kk, ku);
  else derived_name(kk, ak, "");
  const char *order[5];
  int n = 0;
  order[n++] = kk;
  if (ku[0]) order[n++] = ku;
  order[n++] = ai;
  order[n++] = jv;
  order[n++] = jl;
  if (st == TSL_OK) st = tsl_schedule_reorder(s, local, n, order);
  if (st == TSL_OK && ku[0]) st = tsl_schedule_unroll(s, local, ku);
  if (st == TSL_OK) st = tsl_schedule_unroll(s, local, ai);
  if (st == TSL_OK) st = tsl_schedule_unroll(s, local, jv);
  if (st == TSL_OK && k->vec > 1) st = tsl_schedule_vectorize(s, local, jl);
  return st;
}

static tsl_status apply_template(tsl_schedule *s, const tsl_te_program *p, const tsl_matmul_knobs *k, int64_t M,
                                 int64_t N, int64_t K) {
  const tsl_stage *cs = s->stages[s->nstages - 1];
  axis_name stage, ai, aj, ak;
  if (!derived_name(stage, cs->name, "") || !derived_name(ai, cs->iters[0].name, "") ||
      !derived_name(aj, cs->iters[1].name, "") || !derived_name(ak, cs->iters[2].name, ""))
    return tsl_error(TSL_ERR_INVALID, "matmul template: names of stage %s are too long", cs->name);
  const char *a_name = p->inputs[0]->buf->name, *b_name = p->inputs[1]->buf->name;

  /* cache stages first: cache_write wants an unscheduled stage, and both rewrite the
   * reads of the stage before its loops are split */
  /* the names are copied at once: later steps may move the strings s owns */
  axis_name c_local = "", b_local = "", a_local = "", compute;
  const char *made = NULL;
  tsl_status st = TSL_OK;
  if (k->cache_c && (st = tsl_schedule_cache_write(s, stage, "local", &made)) == TSL_OK)
    st = copy_name(c_local, made);
  if (st == TSL_OK) st = copy_name(compute, c_local[0] ? c_local : stage);
  const char *readers[1] = {compute};
  if (st == TSL_OK && k->pack_b != TSL_MATMUL_PACK_NONE &&
      (st = tsl_schedule_cache_read(s, b_name, "local", 1, readers, &made)) == TSL_OK)
    st = copy_name(b_local, made);
  if (st == TSL_OK && k->pack_a && (st = tsl_schedule_cache_read(s, a_name, "local", 1, readers, &made)) == TSL_OK)
    st = copy_name(a_local, made);

  /* C's loops, outermost first: jc pc ic jr ir kk ku ii jv jl ("" when absent; with
   * cache_c there are no k loops in C, its ii jv jl copy C.local out) */
  axis_name ic = "", jc = "", pc = "", jr, ir, kk = "", ku = "", ii, jv, jl, rest, tmp;
  bool has_ic = k->mc < M, has_jc = k->nc < N, has_pc = !k->cache_c && k->kc < K;
  if (st == TSL_OK && has_ic) st = split(s, stage, ai, k->mc, ic, rest);
  else derived_name(rest, ai, "");
  if (st == TSL_OK) st = split(s, stage, rest, k->mr, ir, ii);
  if (st == TSL_OK && has_jc) st = split(s, stage, aj, k->nc, jc, rest);
  else derived_name(rest, aj, "");
  if (st == TSL_OK) st = split(s, stage, rest, k->nr, jr, tmp);
  if (st == TSL_OK) st = split(s, stage, tmp, k->vec, jv, jl);
  if (!k->cache_c) {
    if (st == TSL_OK && has_pc) st = split(s, stage, ak, k->kc, pc, rest);
    else derived_name(rest, ak, "");
    if (st == TSL_OK && k->ku > 1) st = split(s, stage, rest, k->ku, kk, ku);
    else derived_name(kk, rest, "");
  }
  const char *all[10] = {jc, pc, ic, jr, ir, kk, ku, ii, jv, jl};
  const char *order[10];
  int n = 0;
  for (int i = 0; i < 10; i++)
    if (all[i][0]) order[n++] = all[i];
  if (st == TSL_OK) st = tsl_schedule_reorder(s, stage, n, order);
  if (st == TSL_OK) st = tsl_schedule_unroll(s, stage, ii);
  if (st == TSL_OK) st = tsl_schedule_unroll(s, stage, jv);
  if (st == TSL_OK && ku[0]) st = tsl_schedule_unroll(s, stage, ku);
  if (st == TSL_OK && k->vec > 1) st = tsl_schedule_vectorize(s, stage, jl);
  if (st == TSL_OK && k->parallel) st = tsl_schedule_parallel(s, stage, has_ic ? ic : has_jc ? jc : ir);

  if (st == TSL_OK && c_local[0]) {
    st = tsl_schedule_compute_at(s, c_local, stage, ir);
    if (st == TSL_OK) st = schedule_local(s, c_local, ai, aj, ak, k);
  }
  if (st == TSL_OK && b_local[0]) {
    if (k->pack_b == TSL_MATMUL_PACK_PANEL) {
      st = tsl_schedule_compute_at(s, b_local, stage, jr);
    } else {
      const char *cands[2] = {jc, pc};
      st = attach(s, b_local, stage, 2, cands);
      /* rows nr floats longer than the block, so a panel's rows spread over L1 sets */
      int64_t width = min64(k->nc, N);
      if (st == TSL_OK && width > k->nr) st = tsl_schedule_storage_align(s, b_local, "ax0", width, k->nr);
      /* the block is packed outside the parallel row blocks: share the copy too */
      if (st == TSL_OK && k->parallel && has_ic) st = tsl_schedule_parallel(s, b_local, "ax0");
    }
    if (st == TSL_OK) st = vectorize_copy(s, b_local, k->vec);
  }
  if (st == TSL_OK && a_local[0]) {
    const char *cands[3] = {jc, pc, ic};
    st = attach(s, a_local, stage, 3, cands);
    if (st == TSL_OK) st = vectorize_copy(s, a_local, k->vec);
  }
  return st;
}

tsl_status tsl_matmul_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_matmul_knobs *knobs,
                               tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "matmul template: NULL result");
  *out = NULL;
  int64_t M, N, K;
  tsl_status st = tsl_matmul_shape(p, &M, &N, &K);
  if (st != TSL_OK) return st;
  tsl_matmul_knobs k = knobs ? *knobs : tsl_matmul_default_knobs(t, M, N, K);
  if ((st = tsl_matmul_knobs_check(&k, M, N, K)) != TSL_OK) return st;
  /* clamp to the shape: no loop longer than its extent */
  k.mr = min64(k.mr, M);
  k.vec = min64(k.vec, N);
  k.nr = min64(k.nr, ceil_div(N, k.vec) * k.vec);
  if (k.nr % k.vec) k.nr = k.vec;
  k.kc = min64(k.kc, K);
  k.ku = min64(k.ku, k.cache_c ? K : k.kc);
  if (k.mc < M && k.mc < k.mr) k.mc = M;
  if (k.nc < N && k.nc < k.nr) k.nc = N;

  tsl_schedule *s = NULL;
  if ((st = tsl_schedule_create(p, &s)) != TSL_OK) return st;
  if ((st = apply_template(s, p, &k, M, N, K)) != TSL_OK) {
    tsl_schedule_free(s);
    return st;
  }
  *out = s;
  return TSL_OK;
}
