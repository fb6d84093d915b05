/* Sketch generation and random knob filling (see sketch.h; Ansor section 4, TVM
 * src/auto_scheduler/search_policy/sketch_policy_rules.cc). */
#include "tuner/sketch.h"
#include "tuner/sketch_sampler.h"

#include "schedule/axis_access.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN TSL_SKETCH_NAME_LEN
/* Shortest contiguous axis worth vectorizing when shorter than the lanes (a partial
 * vector, as the generic default schedule does: ops/nn/default_schedule.c). */
#define MIN_VECTOR_EXTENT 4
/* Iterations of a parallel loop beyond which outer loops are not fused into it (as in
 * the generic default schedule). */
#define PARALLEL_ITERS 64
/* Stages doing fewer element operations run serially under the generic rule (a launch
 * on the thread pool costs about a microsecond; ops/nn/default_schedule.c). */
#define MIN_PARALLEL_WORK 16384
#define MAX_AXES TSL_SKETCH_MAX_AXES

static const char *rule_names[] = {"none",    "tile", "tile_cache", "rfactor_outer", "rfactor_inner",
                                   "spatial", "at",   "generic",    "tile_pack"};

const char *tsl_sketch_rule_name(tsl_sketch_rule r) {
  return (int)r >= 0 && (size_t)r < sizeof rule_names / sizeof rule_names[0] ? rule_names[r] : "?";
}

/* ---- what the rules look at ---- */

static bool is_reduction(const tsl_stage *st) { return st->nroot > st->op->naxis; }

static int64_t spatial_points(const tsl_stage *st) {
  int64_t n = 1;
  for (int d = 0; d < st->op->naxis; d++) n *= st->iters[d].extent;
  return n;
}

static int64_t reduce_points(const tsl_stage *st) {
  int64_t n = 1;
  for (int d = st->op->naxis; d < st->nroot; d++) n *= st->iters[d].extent;
  return n;
}

/* Ansor's "only large axis is the reduction" condition for rfactor. */
static bool wants_rfactor(const tsl_stage *st) { return spatial_points(st) <= 64 && reduce_points(st) >= 128; }

/* Whether a contiguous axis of this extent is worth a vector of `lanes`. */
static bool vector_worthy(int64_t extent, int64_t lanes) {
  return lanes > 1 && extent >= (lanes < MIN_VECTOR_EXTENT ? lanes : MIN_VECTOR_EXTENT);
}

/* The reduction axis (root index) that is contiguous in memory and at least `lanes`
 * long, the longest such; -1 when there is none. */
static int contiguous_reduce_axis(const tsl_schedule *s, const tsl_stage *st, int64_t lanes) {
  bool contig[TSL_AXIS_ACCESS_MAX];
  if (tsl_axis_contiguous(s, st, contig) != TSL_OK) {
    tsl_clear_error();
    return -1;
  }
  int best = -1;
  for (int a = st->op->naxis; a < st->nroot && a < TSL_AXIS_ACCESS_MAX; a++)
    if (contig[a] && st->iters[a].extent >= lanes && (best < 0 || st->iters[a].extent > st->iters[best].extent))
      best = a;
  return best;
}

/* Whether the innermost spatial axis of st is contiguous in memory and long enough to
 * vectorize (axis_access.h): only then does tiling vectorize it. */
bool tsl_sketch_spatial_vectorizable(const tsl_schedule *s, const tsl_stage *st, int64_t lanes) {
  bool contig[TSL_AXIS_ACCESS_MAX];
  int last = st->op->naxis - 1;
  if (last < 0 || tsl_axis_contiguous(s, st, contig) != TSL_OK) {
    tsl_clear_error();
    return false;
  }
  return contig[last] && vector_worthy(st->iters[last].extent, lanes);
}

/* The rules that apply to stage i of the default schedule s, the default (the first
 * sketch's choice) first. A reduction whose innermost spatial axis cannot be vectorized
 * (a row reduction: the rows are strided) but whose reduction runs along memory starts
 * with rfactor on the inner half of that axis: vector accumulators along the
 * reduction (Ansor's rfactor rule, TVM's cross-thread / vectorized reduction). */
static int stage_rules(const tsl_schedule *s, int i, int64_t lanes, tsl_sketch_rule *r) {
  const tsl_stage *st = s->stages[i];
  if (st->attach == TSL_ATTACH_INLINE) return r[0] = TSL_SKETCH_NONE, 1;
  if (st->op->naxis + (st->nroot - st->op->naxis) > MAX_AXES) return r[0] = TSL_SKETCH_NONE, 1;
  int n = 0;
  if (is_reduction(st)) {
    bool vec_red = !tsl_sketch_spatial_vectorizable(s, st, lanes) && contiguous_reduce_axis(s, st, lanes) >= 0;
    if (vec_red) r[n++] = TSL_SKETCH_RFACTOR_INNER;
    r[n++] = TSL_SKETCH_GENERIC;
    if (!st->is_output) r[n++] = TSL_SKETCH_AT;
    r[n++] = TSL_SKETCH_TILE;
    if (st->is_output) r[n++] = TSL_SKETCH_TILE_CACHE;
    if (tsl_sketch_tile_pack_applies(s, i, lanes)) r[n++] = TSL_SKETCH_TILE_PACK;
    if (wants_rfactor(st)) {
      r[n++] = TSL_SKETCH_RFACTOR_OUTER;
      if (!vec_red) r[n++] = TSL_SKETCH_RFACTOR_INNER;
    }
  } else {
    r[n++] = TSL_SKETCH_GENERIC;
    if (!st->is_output) r[n++] = TSL_SKETCH_AT;
    r[n++] = TSL_SKETCH_SPATIAL;
  }
  return n;
}

tsl_status tsl_sketch_generate(const tsl_te_program *p, const tsl_target *t, tsl_sketch_list *out) {
  memset(out, 0, sizeof *out);
  tsl_schedule *s = NULL;
  tsl_status rc = tsl_schedule_create(p, &s);
  if (rc != TSL_OK) return rc;
  if (s->nstages > TSL_SKETCH_MAX_STAGES) {
    int n = s->nstages;
    tsl_schedule_free(s);
    return tsl_error(TSL_ERR_UNSUPPORTED, "sketch: %s has %d stages (at most %d)", p->name ? p->name : "program", n,
                     TSL_SKETCH_MAX_STAGES);
  }
  tsl_sketch_rule rules[TSL_SKETCH_MAX_STAGES][TSL_SKETCH_RULE_COUNT];
  int nrules[TSL_SKETCH_MAX_STAGES], pick[TSL_SKETCH_MAX_STAGES] = {0};
  for (int i = 0; i < s->nstages; i++) nrules[i] = stage_rules(s, i, tsl_target_f32_lanes(t), rules[i]);
  /* the product of the choices, last stage fastest, first TSL_SKETCH_MAX */
  for (;;) {
    tsl_sketch *sk = &out->sketches[out->n++];
    sk->nstages = s->nstages;
    for (int i = 0; i < s->nstages; i++) sk->rule[i] = rules[i][pick[i]];
    int i = s->nstages - 1;
    while (i >= 0 && ++pick[i] == nrules[i]) pick[i--] = 0;
    if (i < 0 || out->n == TSL_SKETCH_MAX) break;
  }
  tsl_schedule_free(s);
  return TSL_OK;
}

/* ---- sampling ---- */

/* dst (NAME_LEN bytes) = src, cut to fit. */
void tsl_sketch_copy_name(char *dst, const char *src) {
  size_t n = strnlen(src, NAME_LEN - 1);
  memcpy(dst, src, n);
  dst[n] = 0;
}

typedef tsl_sketch_sampler sampler;

static uint64_t next_rand(sampler *c) { /* splitmix64 */
  uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* A choice among n: from the decision list when given (value v of 0..15 picks
 * floor(v * n / 16)), else from the seed. */
int tsl_sketch_rnd(sampler *c, int n) {
  if (n <= 1) return 0;
  if (c->decisions) {
    int v = c->decisions[c->next++ % c->ndecisions];
    return (int)((int64_t)v * n / TSL_SKETCH_DECISION_VALUES);
  }
  return (int)(next_rand(c) % (uint64_t)n);
}
/* true with probability pct% (the larger decision values say yes) */
bool tsl_sketch_chance(sampler *c, int pct) { return tsl_sketch_rnd(c, 100) >= 100 - pct; }

/* true when applied; a refusal is false; other errors are kept in c->err. */
bool tsl_sketch_step(sampler *c, tsl_step_kind k, int nnames, const char *const *names, int nints, const int64_t *ints) {
  if (c->err != TSL_OK) return false;
  tsl_step_arg args[2 * MAX_AXES + 4];
  for (int i = 0; i < nnames; i++) args[i] = (tsl_step_arg){false, names[i], 0};
  for (int i = 0; i < nints; i++) args[nnames + i] = (tsl_step_arg){true, NULL, ints[i]};
  tsl_step st = {k, nnames + nints, args};
  tsl_status rc = tsl_schedule_apply(c->s, &st);
  if (rc == TSL_ERR_SCHEDULE) return false;
  if (rc != TSL_OK) c->err = rc;
  return rc == TSL_OK;
}

bool tsl_sketch_step1(sampler *c, tsl_step_kind k, const char *stage, const char *axis) {
  const char *n[2] = {stage, axis};
  return tsl_sketch_step(c, k, axis ? 2 : 1, n, 0, NULL);
}

/* Leaf k of stage's name, copied (a refused step frees the old strings). */
void tsl_sketch_leaf_name(sampler *c, const char *stage, int k, char *out) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  tsl_sketch_copy_name(out, st && k >= 0 && k < st->nleaf ? st->iters[st->leaf[k]].name : "");
}

int tsl_sketch_leaf_pos(sampler *c, const char *stage, const char *axis) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  int it = st ? tsl_stage_iter_index(st, axis) : -1;
  for (int k = 0; st && it >= 0 && k < st->nleaf; k++)
    if (st->leaf[k] == it) return k;
  return -1;
}

/* A random divisor of n no larger than cap (1 when none). */
int64_t tsl_sketch_divisor(sampler *c, int64_t n, int64_t cap) {
  int64_t d[64];
  int nd = 0;
  for (int64_t f = 1; f <= n && f <= cap && nd < 64; f++)
    if (n % f == 0) d[nd++] = f;
  return nd ? d[tsl_sketch_rnd(c, nd)] : 1;
}

/* The innermost tile of the vectorized axis: a multiple of the lanes when the extent
 * allows (dividing it when one does), else a divisor. */
int64_t tsl_sketch_vector_tile(sampler *c, int64_t n) {
  int64_t m[3] = {c->lanes, 2 * (int64_t)c->lanes, 4 * (int64_t)c->lanes};
  int nm = 0, ndiv = 0;
  for (int i = 0; i < 3; i++) nm += m[i] <= n, ndiv += m[i] <= n && n % m[i] == 0;
  if (ndiv && tsl_sketch_chance(c, 80)) {
    int64_t pick[3];
    int np = 0;
    for (int i = 0; i < 3; i++)
      if (m[i] <= n && n % m[i] == 0) pick[np++] = m[i];
    return pick[tsl_sketch_rnd(c, np)];
  }
  if (nm && tsl_sketch_chance(c, 60)) return m[tsl_sketch_rnd(c, nm)]; /* a tail */
  return tsl_sketch_divisor(c, n, 4 * (int64_t)c->lanes);
}

/* Splits leaf `axis` of stage into nlev levels with the given inner sizes (sizes[l] =
 * extent of level l for l >= 1; level 0 takes the rest); level names to names[l]. */
void tsl_sketch_split_levels(sampler *c, const char *stage, const char *axis, int nlev, const int64_t *sizes,
                         char names[][NAME_LEN]) {
  char cur[NAME_LEN];
  tsl_sketch_copy_name(cur, axis);
  for (int l = 0; l < nlev - 1; l++) {
    int64_t inner = 1;
    for (int m = l + 1; m < nlev; m++) inner *= sizes[m];
    int pos = tsl_sketch_leaf_pos(c, stage, cur);
    const char *n[2] = {stage, cur};
    if (inner > 1 && pos >= 0 && tsl_sketch_step(c, TSL_STEP_SPLIT, 2, n, 1, &inner)) {
      tsl_sketch_leaf_name(c, stage, pos, names[l]);
      tsl_sketch_leaf_name(c, stage, pos + 1, cur);
    } else {
      names[l][0] = 0; /* level absent: the axis stays whole at the innermost level */
    }
  }
  tsl_sketch_copy_name(names[nlev - 1], cur);
}

/* tsl_sketch_reorder(stage, the nonempty names in order). */
void tsl_sketch_reorder(sampler *c, const char *stage, int n, char names[][NAME_LEN]) {
  const char *args[4 * MAX_AXES + 1];
  int m = 0;
  args[m++] = stage;
  for (int i = 0; i < n; i++)
    if (names[i][0]) args[m++] = names[i];
  if (m > 2) tsl_sketch_step(c, TSL_STEP_REORDER, m, args, 0, NULL);
}

/* Fuses the first n leaves (the outer tile level) while the fused loop is shorter than
 * PARALLEL_ITERS and runs the result in parallel. Fusing no more than the threads need
 * keeps the later outer loops as attach points (a producer computed at a fused loop of
 * rows and columns would be recomputed for every column tile). */
void tsl_sketch_fuse_parallel(sampler *c, const char *stage, int n) {
  char a[NAME_LEN], b[NAME_LEN];
  for (int i = 1; i < n; i++) {
    tsl_sketch_leaf_name(c, stage, 0, a);
    tsl_sketch_leaf_name(c, stage, 1, b);
    const char *args[3] = {stage, a, b};
    const tsl_stage *st = tsl_schedule_stage(c->s, stage);
    if (st->iters[st->leaf[0]].extent >= PARALLEL_ITERS || st->iters[st->leaf[1]].is_reduce ||
        !tsl_sketch_step(c, TSL_STEP_FUSE, 3, args, 0, NULL))
      break;
  }
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  if (st->nleaf && !st->iters[st->leaf[0]].is_reduce && tsl_sketch_chance(c, 90)) {
    tsl_sketch_leaf_name(c, stage, 0, a);
    tsl_sketch_step1(c, TSL_STEP_PARALLEL, stage, a);
  }
}

/* The root axes iter `it` of st is made of (bit a for root a). */
unsigned tsl_sketch_leaf_roots(const tsl_stage *st, int it) {
  if (it < st->nroot) return it < 32 ? 1u << it : 0;
  for (int r = 0; r < st->nrels; r++) {
    const tsl_iter_relation *rel = &st->rels[r];
    if (rel->kind == TSL_REL_SPLIT && (rel->inner == it || rel->outer == it)) return tsl_sketch_leaf_roots(st, rel->parent);
    if (rel->kind == TSL_REL_FUSE && rel->fused == it) return tsl_sketch_leaf_roots(st, rel->outer) | tsl_sketch_leaf_roots(st, rel->inner);
  }
  return ~0u;
}

/* The root axis whose unit steps iter `it` of st makes (it is the root, or the inner
 * part of splits or fuses of it); -1 for an outer part of a split (it moves by the inner
 * part's extent). *fused: the roots of the outermost fuse on the way (0 when none). */
static int unit_root(const tsl_stage *st, int it, unsigned *fused) {
  *fused = 0;
  while (it >= st->nroot) {
    int next = -1;
    for (int r = 0; r < st->nrels && next < 0; r++) {
      const tsl_iter_relation *rel = &st->rels[r];
      if (rel->kind == TSL_REL_SPLIT && rel->inner == it) next = rel->parent;
      if (rel->kind == TSL_REL_FUSE && rel->fused == it) {
        *fused = tsl_sketch_leaf_roots(st, it);
        next = rel->inner;
      }
    }
    if (next < 0) return -1;
    it = next;
  }
  return it;
}

/* Whether leaf k of stage walks memory contiguously: it makes unit steps of a spatial
 * root axis that is contiguous in every access of the stage (axis_access.h), through a
 * fuse only of consecutive spatial axes that fuse into a contiguous one
 * (tsl_axis_fusable). Only such a leaf is vectorized: a vector along a strided axis is
 * a gather. */
bool tsl_sketch_leaf_contiguous(sampler *c, const char *stage, int k) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  if (!st || k < 0 || k >= st->nleaf) return false;
  unsigned fused = 0;
  int r = unit_root(st, st->leaf[k], &fused);
  bool contig[TSL_AXIS_ACCESS_MAX], ok = true;
  if (r < 0 || r >= st->op->naxis || r >= TSL_AXIS_ACCESS_MAX) return false;
  if (fused) {
    int first = r;
    while (first > 0 && (fused >> (first - 1) & 1u)) first--;
    /* the fused roots must be exactly first..r */
    if (fused != ((r + 1 < 32 ? (1u << (r + 1)) : 0u) - (1u << first))) return false;
    if (tsl_axis_fusable(c->s, st, first, r, &ok) != TSL_OK) {
      tsl_clear_error();
      return false;
    }
    return ok;
  }
  if (tsl_axis_contiguous(c->s, st, contig) != TSL_OK) {
    tsl_clear_error();
    return false;
  }
  return contig[r];
}

/* Vectorizes the innermost leaf when it walks memory contiguously and is short;
 * unrolls some short spatial leaves just outside it when `unroll` (at most 16 copies
 * in all: compile time). */
static void tsl_sketch_annotate_inner(sampler *c, const char *stage, bool unroll) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  char a[NAME_LEN];
  int k = st->nleaf - 1;
  const tsl_stage_iter *it = &st->iters[st->leaf[k]];
  if (!it->is_reduce && it->extent > 1 && it->extent <= 64 && tsl_sketch_leaf_contiguous(c, stage, k) && tsl_sketch_chance(c, 90)) {
    tsl_sketch_leaf_name(c, stage, k, a);
    tsl_sketch_step1(c, TSL_STEP_VECTORIZE, stage, a);
  }
  int64_t copies = 1;
  for (k = k - 1; unroll && k > 0 && tsl_sketch_chance(c, 50); k--) {
    st = tsl_schedule_stage(c->s, stage);
    it = &st->iters[st->leaf[k]];
    if (it->is_reduce || it->extent > 8 || copies * it->extent > 16 || it->annotation != TSL_FOR_SERIAL) break;
    copies *= it->extent;
    tsl_sketch_leaf_name(c, stage, k, a);
    tsl_sketch_step1(c, TSL_STEP_UNROLL, stage, a);
  }
}

/* Root axis names of a stage (copied). */
static int root_names(sampler *c, const char *stage, char names[][NAME_LEN], int *nspatial) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  for (int i = 0; i < st->nroot; i++) tsl_sketch_copy_name(names[i], st->iters[i].name);
  *nspatial = st->op->naxis;
  return st->nroot;
}

/* Tile sizes of a spatial axis of extent n over nlev levels (sizes[1..]); the last
 * axis' innermost level is the vector tile. */
static void spatial_sizes(sampler *c, int64_t n, int nlev, bool vec, int64_t *sizes) {
  int64_t rem = n;
  for (int l = nlev - 1; l >= 1; l--) {
    int64_t f = l == nlev - 1 && vec ? tsl_sketch_vector_tile(c, rem) : tsl_sketch_divisor(c, rem, l == nlev - 1 ? 8 : 16);
    sizes[l] = f;
    rem = (rem + f - 1) / f;
  }
  sizes[0] = rem;
}

/* Multi-level tiling: spatial axes in nsl levels, reduction axes in nrl levels, loops
 * ordered by `pattern` ('S' or 'R' per level, outermost first; "SSRSRS" for Ansor's CPU
 * structure); extents from the stage's nominal axes or tile[] when given. Returns the
 * number of loops of the first spatial level (fused by the caller). */
static int multi_level_tile(sampler *c, const char *stage, const char *pattern, const int64_t *tile) {
  char roots[MAX_AXES][NAME_LEN];
  int nsp = 0, nr = root_names(c, stage, roots, &nsp);
  bool vec = tsl_sketch_spatial_vectorizable(c->s, tsl_schedule_stage(c->s, stage), c->lanes);
  int nsl = 0, nrl = 0;
  for (const char *p = pattern; *p; p++) *p == 'S' ? nsl++ : nrl++;
  static _Thread_local char lv[MAX_AXES][6][NAME_LEN];
  for (int a = 0; a < nr; a++) {
    const tsl_stage *st = tsl_schedule_stage(c->s, stage);
    bool red = a >= nsp;
    int nlev = red ? nrl : nsl;
    int64_t n = tile && !red ? tile[a] : st->iters[a].extent, sizes[6] = {0};
    if (red) {
      int64_t rem = n;
      for (int l = nlev - 1; l >= 1; l--) sizes[l] = tsl_sketch_divisor(c, rem, 16), rem /= sizes[l];
      sizes[0] = rem;
    } else {
      spatial_sizes(c, n, nlev, vec && a == nsp - 1, sizes);
    }
    if (nlev <= 1) tsl_sketch_copy_name(lv[a][0], roots[a]);
    else tsl_sketch_split_levels(c, stage, roots[a], nlev, sizes, lv[a]);
  }
  char order[4 * MAX_AXES][NAME_LEN];
  int no = 0, sl = 0, rl = 0;
  for (const char *p = pattern; *p; p++) {
    bool red = *p == 'R';
    int l = red ? rl++ : sl++;
    for (int a = red ? nsp : 0; a < (red ? nr : nsp); a++) tsl_sketch_copy_name(order[no++], lv[a][l]);
  }
  tsl_sketch_reorder(c, stage, no, order);
  int nouter = 0;
  for (int a = 0; a < nsp; a++) nouter += lv[a][0][0] != 0;
  return nouter;
}

static void rule_tile(sampler *c, const char *stage) {
  int nsp = multi_level_tile(c, stage, "SSRSRS", NULL);
  tsl_sketch_fuse_parallel(c, stage, nsp);
  tsl_sketch_annotate_inner(c, stage, true);
}

static void rule_tile_cache(sampler *c, const char *stage) {
  const char *n[2] = {stage, "local"};
  char local[NAME_LEN];
  snprintf(local, sizeof local, "%s.local", stage);
  if (!tsl_sketch_step(c, TSL_STEP_CACHE_WRITE, 2, n, 0, NULL)) {
    rule_tile(c, stage);
    return;
  }
  /* the copy: S0 S1 | S2 S3 as two levels, the local stage at its outer tile loop */
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  int nsp = st->op->naxis;
  int64_t tile[MAX_AXES];
  bool vec = tsl_sketch_spatial_vectorizable(c->s, st, c->lanes);
  for (int a = 0; a < nsp; a++) {
    int64_t sizes[4];
    spatial_sizes(c, st->iters[a].extent, 4, vec && a == nsp - 1, sizes);
    tile[a] = sizes[2] * sizes[3];
    if (tile[a] > st->iters[a].extent) tile[a] = st->iters[a].extent;
  }
  static _Thread_local char lv[2 * MAX_AXES][NAME_LEN];
  char roots[MAX_AXES][NAME_LEN];
  root_names(c, stage, roots, &nsp);
  for (int a = 0; a < nsp; a++) {
    char two[2][NAME_LEN];
    tsl_sketch_split_levels(c, stage, roots[a], 2, (int64_t[]){0, tile[a]}, two);
    tsl_sketch_copy_name(lv[a], two[0]);
    tsl_sketch_copy_name(lv[nsp + a], two[1]);
  }
  tsl_sketch_reorder(c, stage, 2 * nsp, lv);
  int nouter = 0;
  for (int a = 0; a < nsp; a++) nouter += lv[a][0] != 0;
  tsl_sketch_fuse_parallel(c, stage, nouter);
  /* the local stage at the (fused) outer tile loop: one tile per iteration */
  char at[NAME_LEN];
  tsl_sketch_leaf_name(c, stage, 0, at);
  const char *args[3] = {local, stage, at};
  if (nouter > 0) tsl_sketch_step(c, TSL_STEP_COMPUTE_AT, 3, args, 0, NULL);
  tsl_sketch_annotate_inner(c, stage, false);
  /* the local stage: R0 S2 R1 S3 over one tile */
  multi_level_tile(c, local, "RSRS", tile);
  tsl_sketch_annotate_inner(c, local, true);
}

static bool rule_at(sampler *c, const char *stage);

/* Independent vector accumulators for the partial results of rule_rfactor (inner): one
 * vector accumulator along `half` (the vectorized inner part of the contiguous reduction
 * axis) adds one vector per step, a chain of add latencies. The longest other reduction
 * axis of rf that 2 divides is split by k (2, or a knob's 4 where 4 divides) and
 * rfactor'ed again (rfactor must follow its split, before rf is reordered): rf.rf holds k
 * vectors (stored with `half` innermost), its k loop unrolled inside the reduction, and rf
 * sums the k partials. The split's inner name to inner; false when not applied. A
 * channel sum of 1x256x56x56 with 4 accumulators of 8 lanes: 0.034 ms against 0.054 with
 * one. */
static bool accumulators_split(sampler *c, const char *rf, char *inner) {
  const tsl_stage *st = tsl_schedule_stage(c->s, rf);
  int ra = -1;
  for (int a = st->op->naxis; a < st->nroot; a++)
    if (st->iters[a].extent >= 8 && st->iters[a].extent % 2 == 0 && (ra < 0 || st->iters[a].extent > st->iters[ra].extent))
      ra = a;
  if (ra < 0) return false;
  int64_t k = st->iters[ra].extent % 4 == 0 && tsl_sketch_chance(c, 50) ? 4 : 2;
  char axis[NAME_LEN];
  tsl_sketch_copy_name(axis, st->iters[ra].name);
  snprintf(inner, NAME_LEN, "%.*s.inner", NAME_LEN - 8, axis);
  const char *sp[2] = {rf, axis}, *rfa[2] = {rf, inner};
  return tsl_sketch_step(c, TSL_STEP_SPLIT, 2, sp, 1, &k) && tsl_sketch_step(c, TSL_STEP_RFACTOR, 2, rfa, 0, NULL);
}

/* rf.rf of accumulators_split once rf is scheduled: its other spatial axes, the
 * reduction, the k accumulators unrolled, `half` vectorized; stored [..., k, half];
 * computed at rf's outer loop when rf has one besides its two. */
static void accumulators_finish(sampler *c, const char *rf, const char *half, const char *inner) {
  char rf2[NAME_LEN], outer_loop[NAME_LEN];
  snprintf(rf2, sizeof rf2, "%.*s.rf", NAME_LEN - 4, rf);
  const tsl_stage *st = tsl_schedule_stage(c->s, rf2);
  if (!st) return;
  static _Thread_local char order[MAX_AXES + 2][NAME_LEN], store[MAX_AXES + 2][NAME_LEN];
  int no = 0, ns = 0;
  for (int i = 0; i < st->nroot && no < MAX_AXES; i++)
    if (strcmp(st->iters[i].name, half) != 0 && strcmp(st->iters[i].name, inner) != 0) {
      tsl_sketch_copy_name(order[no++], st->iters[i].name);
      if (i < st->op->naxis) tsl_sketch_copy_name(store[ns++], st->iters[i].name);
    }
  tsl_sketch_copy_name(order[no++], inner);
  tsl_sketch_copy_name(order[no++], half);
  tsl_sketch_copy_name(store[ns++], inner);
  tsl_sketch_copy_name(store[ns++], half);
  tsl_sketch_reorder(c, rf2, no, order);
  const char *so[MAX_AXES + 3] = {rf2};
  for (int i = 0; i < ns; i++) so[i + 1] = store[i];
  tsl_sketch_step(c, TSL_STEP_STORAGE_ORDER, ns + 1, so, 0, NULL);
  tsl_sketch_step1(c, TSL_STEP_UNROLL, rf2, inner);
  if (tsl_sketch_leaf_contiguous(c, rf2, tsl_sketch_leaf_pos(c, rf2, half))) tsl_sketch_step1(c, TSL_STEP_VECTORIZE, rf2, half);
  st = tsl_schedule_stage(c->s, rf);
  if (st->nleaf > 2) {
    tsl_sketch_leaf_name(c, rf, 0, outer_loop);
    const char *at[3] = {rf2, rf, outer_loop};
    tsl_sketch_step(c, TSL_STEP_COMPUTE_AT, 3, at, 0, NULL);
  }
}

/* rfactor on the outer half of the largest reduction axis (the partial results in
 * parallel) or on the inner half of the contiguous one (vector accumulators along
 * memory); a non-output stage then goes to its consumer's outer tile loop and its
 * partial results to its own outer loop (one row's partials at a time). */
static void rule_rfactor(sampler *c, const char *stage, bool outer) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  int best = outer ? -1 : contiguous_reduce_axis(c->s, st, c->lanes);
  if (best < 0) {
    best = st->op->naxis;
    for (int a = st->op->naxis; a < st->nroot; a++)
      if (st->iters[a].extent > st->iters[best].extent) best = a;
  }
  char k[NAME_LEN], half[NAME_LEN + 8], rf[NAME_LEN + 8];
  snprintf(k, sizeof k, "%s", st->iters[best].name);
  int64_t f = tsl_sketch_vector_tile(c, st->iters[best].extent);
  const char *n[2] = {stage, k};
  snprintf(half, sizeof half, "%s.%s", k, outer ? "outer" : "inner");
  const char *h[2] = {stage, half};
  if (!tsl_sketch_step(c, TSL_STEP_SPLIT, 2, n, 1, &f) || !tsl_sketch_step(c, TSL_STEP_RFACTOR, 2, h, 0, NULL)) return;
  snprintf(rf, sizeof rf, "%s.rf", stage);
  char acc_inner[NAME_LEN] = "";
  bool acc = !outer && tsl_sketch_chance(c, 40) && accumulators_split(c, rf, acc_inner);
  st = tsl_schedule_stage(c->s, rf);
  /* C.rf: the factored axis outermost (parallel) or innermost (vectorized) */
  char order[MAX_AXES + 1][NAME_LEN];
  int no = 0;
  if (outer) tsl_sketch_copy_name(order[no++], half);
  for (int i = 0; i < st->nroot; i++)
    if (strcmp(st->iters[i].name, half) != 0) tsl_sketch_copy_name(order[no++], st->iters[i].name);
  if (!outer) tsl_sketch_copy_name(order[no++], half);
  tsl_sketch_reorder(c, rf, no, order);
  if (outer) {
    tsl_sketch_step1(c, TSL_STEP_PARALLEL, rf, half);
  } else {
    int naxis = st->op->naxis;
    if (tsl_sketch_leaf_contiguous(c, rf, tsl_sketch_leaf_pos(c, rf, half))) tsl_sketch_step1(c, TSL_STEP_VECTORIZE, rf, half);
    char at[NAME_LEN];
    tsl_sketch_leaf_name(c, stage, 0, at);
    const char *args[3] = {rf, stage, at};
    bool attached = !tsl_schedule_stage(c->s, stage)->is_output && rule_at(c, stage) && naxis > 1 &&
                    tsl_sketch_step(c, TSL_STEP_COMPUTE_AT, 3, args, 0, NULL);
    if (!attached) tsl_sketch_fuse_parallel(c, rf, naxis - 1);
    if (acc) accumulators_finish(c, rf, half, acc_inner);
  }
  tsl_sketch_annotate_inner(c, stage, true);
}

/* The spatial root axes first..nsp-1 of stage (nsp its spatial axes) fused into one leaf
 * when the innermost one is not a multiple of the lanes: first is the outermost axis whose
 * fusion with the axes inside it walks memory in unit steps (schedule/axis_access.h:
 * tsl_axis_fusable), the fewest that make the fused extent a multiple of the lanes. A 56
 * wide row of 16 lanes is 3 vectors and an 8-lane tail; 56 x 56 fused is 196 full
 * vectors. The fused leaf's name to out and *first the number of spatial axes left
 * outside it; false (nothing done) when no such fusion exists. */
static bool fuse_for_lanes(sampler *c, const char *stage, int nsp, char *out, int *first) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  int last = nsp - 1, f = -1;
  int64_t ext = st->iters[last].extent;
  if (last < 1 || ext % c->lanes == 0) return false;
  for (int a = last - 1; a >= 0 && f < 0; a--) {
    bool ok = false;
    if (tsl_axis_fusable(c->s, st, a, last, &ok) != TSL_OK) {
      tsl_clear_error();
      return false;
    }
    if (!ok) return false;
    ext *= st->iters[a].extent;
    if (ext % c->lanes == 0) f = a;
  }
  if (f < 0) return false;
  char roots[MAX_AXES][NAME_LEN], cur[NAME_LEN];
  int n = 0;
  root_names(c, stage, roots, &n);
  tsl_sketch_copy_name(cur, roots[f]);
  for (int a = f + 1; a <= last; a++) {
    const char *args[3] = {stage, cur, roots[a]};
    int pos = tsl_sketch_leaf_pos(c, stage, cur);
    if (pos < 0 || !tsl_sketch_step(c, TSL_STEP_FUSE, 3, args, 0, NULL)) return false;
    tsl_sketch_leaf_name(c, stage, pos, cur);
  }
  tsl_sketch_copy_name(out, cur);
  *first = f;
  return true;
}

/* The generic default schedule's structure (ops/nn/default_schedule.c): the innermost
 * spatial axis, when contiguous, split by the lanes and vectorized with the reduction
 * axes just outside it (vector accumulators), the outer spatial axes fused into one
 * parallel loop unless the stage is small. Where the stage has one spatial axis its
 * vector split's outer part is the parallel loop, outside the reduction (the generic
 * default puts it inside, one parallel launch per reduction step). An innermost axis
 * that is not a multiple of the lanes is first fused with the axes outside it where
 * that keeps it contiguous (fuse_for_lanes). A strided innermost axis stays scalar: the
 * spatial axes in order, then the reduction. */
static void rule_generic(sampler *c, const char *stage) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  char roots[MAX_AXES][NAME_LEN], order[MAX_AXES + 1][NAME_LEN], vin[NAME_LEN] = "", vout[NAME_LEN] = "";
  char vax[NAME_LEN];
  int nsp = 0, nr = root_names(c, stage, roots, &nsp);
  if (nsp == 0) return;
  int64_t work = 1;
  for (int a = 0; a < nr && work < MIN_PARALLEL_WORK; a++) work *= st->iters[a].extent;
  bool vec = tsl_sketch_spatial_vectorizable(c->s, st, c->lanes);
  /* the vector axis: the innermost spatial one, or it fused with the ones outside it */
  int nout = nsp - 1;
  tsl_sketch_copy_name(vax, roots[nsp - 1]);
  if (vec) (void)fuse_for_lanes(c, stage, nsp, vax, &nout);
  st = tsl_schedule_stage(c->s, stage);
  int vit = tsl_stage_iter_index(st, vax);
  if (vec && vit >= 0 && st->iters[vit].extent > c->lanes) {
    int pos = tsl_sketch_leaf_pos(c, stage, vax);
    const char *n[2] = {stage, vax};
    int64_t f = c->lanes;
    if (pos >= 0 && tsl_sketch_step(c, TSL_STEP_SPLIT, 2, n, 1, &f)) {
      tsl_sketch_leaf_name(c, stage, pos, vout);
      tsl_sketch_leaf_name(c, stage, pos + 1, vin);
    }
  } else if (vec) {
    tsl_sketch_copy_name(vin, vax);
  }
  int no = 0, nouter;
  if (!vin[0]) { /* scalar: the initial order */
    nouter = nsp;
  } else {
    for (int a = 0; a < nout; a++) tsl_sketch_copy_name(order[no++], roots[a]);
    if (nout == 0 && vout[0]) tsl_sketch_copy_name(order[no++], vout);
    nouter = no;
    for (int a = nsp; a < nr; a++) tsl_sketch_copy_name(order[no++], roots[a]);
    if (nout > 0 && vout[0]) tsl_sketch_copy_name(order[no++], vout);
    tsl_sketch_copy_name(order[no++], vin);
    tsl_sketch_reorder(c, stage, no, order);
    int k = tsl_sketch_leaf_pos(c, stage, vin);
    if (tsl_sketch_leaf_contiguous(c, stage, k)) tsl_sketch_step1(c, TSL_STEP_VECTORIZE, stage, vin);
  }
  if (work >= MIN_PARALLEL_WORK && nouter > 0) tsl_sketch_fuse_parallel(c, stage, nouter);
}

static void rule_spatial(sampler *c, const char *stage) {
  int nsp = multi_level_tile(c, stage, "SS", NULL);
  tsl_sketch_fuse_parallel(c, stage, nsp);
  tsl_sketch_annotate_inner(c, stage, true);
}

/* Does stage j read buf, directly or through stages inlined into it? */
static bool reads(const tsl_schedule *s, const tsl_stage *st, const tsl_buffer *buf, int depth) {
  for (int i = 0; depth < 16 && i < st->op->ninputs; i++) {
    if (st->op->inputs[i]->buf == buf) return true;
    const tsl_stage *in = tsl_schedule_stage_of_op(s, st->op->inputs[i]->op);
    if (in && in->attach == TSL_ATTACH_INLINE && reads(s, in, buf, depth + 1)) return true;
  }
  return false;
}

/* compute_at into the last consumer's outer tile loop (or a random loop above its
 * innermost). */
static bool rule_at(sampler *c, const char *stage) {
  const tsl_stage *self = tsl_schedule_stage(c->s, stage);
  int si = tsl_schedule_stage_index(c->s, stage), consumer = -1;
  for (int j = si + 1; j < c->s->nstages; j++) {
    const tsl_stage *o = c->s->stages[j];
    if (o->attach != TSL_ATTACH_INLINE && reads(c->s, o, self->op->output->buf, 0)) consumer = j;
  }
  if (consumer < 0) return false;
  const tsl_stage *cs = c->s->stages[consumer];
  /* the outer loops of the consumer over axes its reads of this stage depend on: at any
   * loop inside one over another axis, the stage would be recomputed on each iteration */
  unsigned deps = 0;
  if (tsl_axis_read_deps(c->s, cs, self->op->output->buf, &deps) != TSL_OK) {
    tsl_clear_error();
    return false;
  }
  int nk = 0;
  while (nk < cs->nleaf - 1 && !cs->iters[cs->leaf[nk]].is_reduce && (tsl_sketch_leaf_roots(cs, cs->leaf[nk]) & ~deps) == 0)
    nk++;
  if (nk == 0) return false;
  int k = tsl_sketch_chance(c, 60) ? 0 : tsl_sketch_rnd(c, nk);
  char at[NAME_LEN], cname[NAME_LEN];
  snprintf(cname, sizeof cname, "%s", cs->name);
  tsl_sketch_leaf_name(c, cname, k, at);
  const char *args[3] = {stage, cname, at};
  return tsl_sketch_step(c, TSL_STEP_COMPUTE_AT, 3, args, 0, NULL);
}

static tsl_status sample(const tsl_te_program *p, const tsl_sketch *sk, sampler c, tsl_schedule **out) {
  *out = NULL;
  tsl_status rc = tsl_schedule_create(p, &c.s);
  if (rc != TSL_OK) return rc;
  if (c.s->nstages != sk->nstages) {
    tsl_schedule_free(c.s);
    return tsl_error(TSL_ERR_INVALID, "sketch: made for %d stages, %s has %d", sk->nstages,
                     p->name ? p->name : "program", c.s->nstages);
  }
  char names[TSL_SKETCH_MAX_STAGES][NAME_LEN];
  for (int i = 0; i < sk->nstages; i++) tsl_sketch_copy_name(names[i], c.s->stages[i]->name);
  /* consumers first: a stage's loops exist before producers are attached to them */
  for (int i = sk->nstages - 1; i >= 0 && c.err == TSL_OK; i--) {
    switch (sk->rule[i]) {
    case TSL_SKETCH_NONE:
    case TSL_SKETCH_RULE_COUNT: break;
    case TSL_SKETCH_TILE: rule_tile(&c, names[i]); break;
    case TSL_SKETCH_TILE_CACHE: rule_tile_cache(&c, names[i]); break;
    case TSL_SKETCH_RFACTOR_OUTER: rule_rfactor(&c, names[i], true); break;
    case TSL_SKETCH_RFACTOR_INNER: rule_rfactor(&c, names[i], false); break;
    case TSL_SKETCH_SPATIAL: rule_spatial(&c, names[i]); break;
    case TSL_SKETCH_GENERIC: rule_generic(&c, names[i]); break;
    case TSL_SKETCH_AT: (void)rule_at(&c, names[i]); break;
    case TSL_SKETCH_TILE_PACK: tsl_sketch_rule_tile_pack(&c, names[i]); break;
    }
  }
  if (c.err != TSL_OK) {
    tsl_schedule_free(c.s);
    return c.err;
  }
  *out = c.s;
  return TSL_OK;
}

tsl_status tsl_sketch_sample(const tsl_te_program *p, const tsl_target *t, const tsl_sketch *sk, uint64_t seed,
                             tsl_schedule **out) {
  sampler c = {NULL, seed * 0x2545f4914f6cdd1dull + 7, tsl_target_f32_lanes(t), tsl_target_vector_registers(t),
               TSL_OK, NULL, 0, 0};
  return sample(p, sk, c, out);
}

tsl_status tsl_sketch_sample_decisions(const tsl_te_program *p, const tsl_target *t, const tsl_sketch *sk,
                                       const int *decisions, int n, tsl_schedule **out) {
  *out = NULL;
  if (!decisions || n <= 0) return tsl_error(TSL_ERR_INVALID, "sketch: no decisions given");
  for (int i = 0; i < n; i++)
    if (decisions[i] < 0 || decisions[i] >= TSL_SKETCH_DECISION_VALUES)
      return tsl_error(TSL_ERR_INVALID, "sketch: decision %d is %d (0..%d)", i, decisions[i],
                       TSL_SKETCH_DECISION_VALUES - 1);
  sampler c = {NULL, 0, tsl_target_f32_lanes(t), tsl_target_vector_registers(t), TSL_OK, decisions, n, 0};
  return sample(p, sk, c, out);
}
