/* The tile_pack sketch rule (see sketch.h): a register-tiled, packed schedule of an
 * output reduction whose innermost spatial axis runs along memory, the structure of a
 * BLIS / GotoBLAS kernel (Goto and van de Geijn, "Anatomy of high-performance matrix
 * multiplication", TOMS 2008; Low et al., "Analytical modeling is enough for
 * high-performance BLIS", TOMS 2016) derived for any such TE stage, with the knobs left
 * to the sampler:
 *   - the register tile: mr steps of a "row" axis (a spatial axis other than the vector
 *     one, picked by a knob) times nv = m * lanes steps of the vector axis (the innermost
 *     spatial axis, or by a knob a spatial axis along which an input's dimension runs,
 *     that input then packed with that dimension innermost and the accumulators stored
 *     with the vector axis innermost: a conv's output channels, as oneDNN's blocked
 *     kernels), with
 *     mr * m accumulators + m operand vectors + 1 broadcast within the target's vector
 *     registers (16 or 32);
 *   - cache_write: the stage becomes a copy of a local buffer; the local stage is
 *     computed at the innermost block loop of the copy and accumulates one register
 *     tile over the whole reduction (reductions outermost, the row loop and the vector
 *     tiles unrolled, the lanes vectorized);
 *   - two tile levels above the register tile (an L2 block of tiles and the tiles in
 *     it), their loop orders knobs, the outer level run in parallel (all of it fused,
 *     or the blocks of the other axes inside a serial loop over the vector axis' blocks);
 *   - packing (a knob): an input the local stage reads is copied per iteration of a
 *     block loop over an axis it depends on (cache_read + compute_at), so the tile's
 *     loads walk a compact buffer, stored (storage_order, a knob) in the order the
 *     tile's loops walk it (conv weights W[k][c][r][s] as [c][r][s][k] per block of
 *     k); the copy is vectorized where contiguous, and run in parallel when it sits
 *     outside the parallel loop.
 * Every choice goes through the sampler (tuner/sketch_sampler.h), so seeds and decision
 * lists fill it like the other rules. */
#include <stdio.h>
#include <string.h>

#include "schedule/axis_access.h"
#include "tuner/register_tile.h"
#include "tuner/sketch_sampler.h"

#define NAME_LEN TSL_SKETCH_NAME_LEN
#define MAX_AXES TSL_SKETCH_MAX_AXES
/* Most blocks of an axis (a power of two). */
#define MAX_BLOCK_PARTS 64

bool tsl_sketch_tile_pack_applies(const tsl_schedule *s, int i, int64_t lanes) {
  const tsl_stage *st = s->stages[i];
  return st->attach != TSL_ATTACH_INLINE && st->is_output && st->nroot > st->op->naxis && st->nroot <= MAX_AXES &&
         tsl_sketch_spatial_vectorizable(s, st, lanes);
}

/* The register tile: nv steps of the vector axis (vectors * lanes, or the whole axis
 * when shorter than the lanes) and mr rows, one of the tiles that fit the registers and
 * divide the extents (tuner/register_tile.h). */
static void register_tile(tsl_sketch_sampler *c, int64_t vext, int64_t rext, int64_t *nv, int64_t *mr) {
  tsl_register_tile tiles[TSL_REGISTER_TILE_MAX];
  int n = 0;
  tsl_status st = tsl_register_tiles(c->lanes, c->vregs > 0 ? c->vregs : 16, vext, rext, tiles, &n);
  if (st != TSL_OK) {
    if (c->err == TSL_OK) c->err = st;
    *nv = vext < c->lanes ? vext : c->lanes, *mr = 1;
    return;
  }
  tsl_register_tile t = tiles[tsl_sketch_rnd(c, n)];
  *nv = vext < c->lanes ? vext : t.vectors * c->lanes;
  *mr = t.rows;
}

/* A count of register tiles per block: the ntiles tiles cut into a power-of-two number
 * of parts (at most MAX_BLOCK_PARTS) of equal size but for the last, so that parallel
 * blocks get even work (1024 rows in tiles of 13: 2 parts of 40 and 39 tiles, not one
 * block of 64 tiles and a tail of 15). */
static int64_t block_tiles(tsl_sketch_sampler *c, int64_t ntiles) {
  int64_t opts[8];
  int n = 0;
  for (int64_t parts = 1; parts <= ntiles && parts <= MAX_BLOCK_PARTS && n < 8; parts *= 2)
    opts[n++] = (ntiles + parts - 1) / parts;
  return n ? opts[tsl_sketch_rnd(c, n)] : 1;
}

/* Splits root axis `axis` (extent ext) into the block level (lv[0], blocks of
 * tiles * reg), the tile level (lv[1], tiles of reg) and the register level (lv[2]);
 * a level that would be one iteration is left out (""), the register level too when
 * reg is 1. */
static void split3(tsl_sketch_sampler *c, const char *stage, const char *axis, int64_t ext, int64_t reg,
                   int64_t tiles, char lv[3][NAME_LEN]) {
  char rest[NAME_LEN];
  tsl_sketch_copy_name(rest, axis);
  lv[0][0] = lv[1][0] = lv[2][0] = 0;
  int64_t block = reg * tiles;
  const char *n[2] = {stage, rest};
  if (block < ext) {
    int pos = tsl_sketch_leaf_pos(c, stage, rest);
    if (pos >= 0 && tsl_sketch_step(c, TSL_STEP_SPLIT, 2, n, 1, &block)) {
      tsl_sketch_leaf_name(c, stage, pos, lv[0]);
      tsl_sketch_leaf_name(c, stage, pos + 1, rest);
    }
  }
  if (reg > 1 && reg < (block < ext ? block : ext)) {
    int pos = tsl_sketch_leaf_pos(c, stage, rest);
    if (pos >= 0 && tsl_sketch_step(c, TSL_STEP_SPLIT, 2, n, 1, &reg)) {
      tsl_sketch_leaf_name(c, stage, pos, lv[1]);
      tsl_sketch_leaf_name(c, stage, pos + 1, lv[2]);
      return;
    }
  }
  tsl_sketch_copy_name(reg > 1 ? lv[2] : lv[1], rest);
}

/* The local stage: the spatial axes other than the row and vector (v) ones, the
 * reductions, then the row axis (unrolled), the vector tiles (unrolled) and the lanes
 * (their name to vi, vectorized by the caller once the packs have their layout). Its
 * axes are the stage's root axes, over the region of one register tile. */
static void schedule_local(tsl_sketch_sampler *c, const char *local, int row, int v, int nv_tiles, char *vi) {
  const tsl_stage *st = tsl_schedule_stage(c->s, local);
  vi[0] = 0;
  if (!st) return;
  int nsp = st->op->naxis, nr = st->nroot;
  char roots[MAX_AXES][NAME_LEN], vo[NAME_LEN] = "";
  for (int a = 0; a < nr; a++) tsl_sketch_copy_name(roots[a], st->iters[a].name);
  tsl_sketch_copy_name(vi, roots[v]);
  int pos = tsl_sketch_leaf_pos(c, local, vi);
  int64_t lanes = c->lanes;
  const char *n[2] = {local, roots[v]};
  if (nv_tiles > 1 && pos >= 0 && tsl_sketch_step(c, TSL_STEP_SPLIT, 2, n, 1, &lanes)) {
    tsl_sketch_leaf_name(c, local, pos, vo);
    tsl_sketch_leaf_name(c, local, pos + 1, vi);
  }
  char order[MAX_AXES + 1][NAME_LEN];
  int no = 0;
  for (int a = 0; a < nsp; a++)
    if (a != row && a != v) tsl_sketch_copy_name(order[no++], roots[a]);
  for (int a = nsp; a < nr; a++) tsl_sketch_copy_name(order[no++], roots[a]);
  if (row >= 0) tsl_sketch_copy_name(order[no++], roots[row]);
  if (vo[0]) tsl_sketch_copy_name(order[no++], vo);
  tsl_sketch_copy_name(order[no++], vi);
  tsl_sketch_reorder(c, local, no, order);
  if (row >= 0) tsl_sketch_step1(c, TSL_STEP_UNROLL, local, roots[row]);
  if (vo[0]) tsl_sketch_step1(c, TSL_STEP_UNROLL, local, vo);
}

/* A vector axis other than the innermost spatial one: a spatial axis a (at least `lanes`
 * long) that some input of stage reads along one of its dimensions by a alone (conv
 * weights W[k][c][r][s] along the output channels k), so that packing that input in the
 * order the tile walks it (storage_order) makes the vector loads contiguous, the local
 * accumulators stored with a innermost. -1 when there is none. */
static int packed_vector_axis(tsl_sketch_sampler *c, const tsl_stage *st) {
  int nsp = st->op->naxis, found[MAX_AXES], n = 0;
  for (int a = 0; a < nsp - 1 && a < MAX_AXES; a++) {
    if (st->iters[a].extent < c->lanes) continue;
    bool ok = false;
    for (int i = 0; i < st->op->ninputs && !ok; i++) {
      const tsl_buffer *b = st->op->inputs[i]->buf;
      const tsl_stage *in = tsl_schedule_stage_of_op(c->s, st->op->inputs[i]->op);
      unsigned dd[TSL_AXIS_ACCESS_MAX];
      if ((in && in->attach == TSL_ATTACH_INLINE) || b->ndim > TSL_AXIS_ACCESS_MAX ||
          tsl_axis_read_dim_deps(c->s, st, b, dd) != TSL_OK) {
        tsl_clear_error();
        continue;
      }
      for (int d = 0; d < b->ndim && !ok; d++) ok = dd[d] == (1u << a);
    }
    if (ok) found[n++] = a;
  }
  return n ? found[tsl_sketch_rnd(c, n)] : -1;
}

/* The inputs of the local stage worth packing (placeholders or stages that are not
 * inlined), names copied, those read along the vector axis v first (the tile's vector
 * loads: packing them makes the loads of successive reduction steps close in memory);
 * returns their count, the number of those along v in *nvec. */
static int pack_candidates(tsl_sketch_sampler *c, const char *local, int v, char names[][NAME_LEN], int cap,
                           int *nvec) {
  const tsl_stage *st = tsl_schedule_stage(c->s, local);
  int n = 0;
  *nvec = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; st && i < st->op->ninputs && n < cap; i++) {
      const tsl_stage *in = tsl_schedule_stage_of_op(c->s, st->op->inputs[i]->op);
      unsigned deps = 0;
      if ((in && in->attach == TSL_ATTACH_INLINE) ||
          tsl_axis_read_deps(c->s, st, st->op->inputs[i]->buf, &deps) != TSL_OK) {
        tsl_clear_error();
        continue;
      }
      if (((deps >> v) & 1u) == (pass == 0 ? 1u : 0u)) tsl_sketch_copy_name(names[n++], st->op->inputs[i]->buf->name);
    }
    if (pass == 0) *nvec = n;
  }
  return n;
}

/* cache_read of tensor `tensor` for the local stage: the copy's name to packed ("" when
 * refused), the local stage's root axes its reads depend on to *deps. */
static void pack_read(tsl_sketch_sampler *c, const char *local, const char *tensor, char *packed, unsigned *deps) {
  packed[0] = 0;
  const tsl_stage *ls = tsl_schedule_stage(c->s, local);
  const tsl_buffer *buf = NULL;
  for (int i = 0; ls && i < ls->op->ninputs && !buf; i++)
    if (strcmp(ls->op->inputs[i]->buf->name, tensor) == 0) buf = ls->op->inputs[i]->buf;
  if (!buf || tsl_axis_read_deps(c->s, ls, buf, deps) != TSL_OK) {
    tsl_clear_error();
    return;
  }
  const char *args[3] = {tensor, "local", local};
  if (!tsl_sketch_step(c, TSL_STEP_CACHE_READ, 3, args, 0, NULL)) return;
  /* the new stage: the one copying buf and nothing else */
  for (int i = 0; i < c->s->nstages; i++) {
    const tsl_stage *ps = c->s->stages[i];
    if (ps->op->ninputs == 1 && ps->op->inputs[0]->buf == buf && strstr(ps->name, ".local"))
      tsl_sketch_copy_name(packed, ps->name);
  }
}

/* The storage order of the pack `packed` that walks it the way the local stage does:
 * its dimensions sorted (stably) by the innermost loop of `local` over an axis their
 * index depends on, so the dimension read by the innermost loop is contiguous (weights
 * W[k][c][r][s] read with the reductions c r s outside the unrolled row loop over k
 * pack as [c][r][s][k]; A[i][k] of a matmul read by the row loop inside k packs as
 * [k][i], BLIS' packed A). order[] gets the buffer's dimensions outermost first;
 * returns false when the order is the identity or cannot be derived. */
static bool pack_order(tsl_sketch_sampler *c, const char *local, const char *packed, int *order) {
  const tsl_stage *ls = tsl_schedule_stage(c->s, local), *ps = tsl_schedule_stage(c->s, packed);
  if (!ls || !ps || ls->nroot > MAX_AXES) return false;
  int nd = ps->op->naxis;
  unsigned dd[TSL_AXIS_ACCESS_MAX];
  if (nd > TSL_AXIS_ACCESS_MAX || tsl_axis_read_dim_deps(c->s, ls, ps->op->output->buf, dd) != TSL_OK) {
    tsl_clear_error();
    return false;
  }
  int pos[MAX_AXES], key[TSL_AXIS_ACCESS_MAX];
  for (int a = 0; a < ls->nroot; a++) pos[a] = -1;
  for (int k = 0; k < ls->nleaf; k++) {
    unsigned roots = tsl_sketch_leaf_roots(ls, ls->leaf[k]);
    for (int a = 0; a < ls->nroot; a++)
      if (roots >> a & 1u) pos[a] = k;
  }
  bool identity = true;
  for (int d = 0; d < nd; d++) {
    key[d] = -1;
    for (int a = 0; a < ls->nroot; a++)
      if ((dd[d] >> a & 1u) && pos[a] > key[d]) key[d] = pos[a];
    int j = d;
    while (j > 0 && key[order[j - 1]] > key[d]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = d;
  }
  for (int d = 0; d < nd; d++) identity = identity && order[d] == d;
  return !identity;
}

/* Places the pack `packed`: attached at a loop of the copy stage among its first
 * `nouter` leaves over an axis in deps (the outermost most often; none: the whole tensor
 * once, at the root), stored in the order the local stage walks it (pack_order: a knob,
 * always when order_always),
 * its innermost stored axis vectorized when contiguous and its outer one parallel when
 * it sits outside the stage's parallel loop (position par_pos, -1 when none). */
static void pack_place(tsl_sketch_sampler *c, const char *stage, const char *local, const char *packed, unsigned deps,
                       int nouter, int par_pos, int64_t width, int64_t nv, bool order_always) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  int cand[MAX_AXES * 3], ncand = 0;
  for (int k = 0; k < nouter && k < st->nleaf; k++)
    if (tsl_sketch_leaf_roots(st, st->leaf[k]) & deps) cand[ncand++] = k;
  int at = -1;
  if (ncand) at = cand[tsl_sketch_chance(c, 60) ? 0 : tsl_sketch_rnd(c, ncand)];
  if (at >= 0) {
    char loop[NAME_LEN];
    tsl_sketch_leaf_name(c, stage, at, loop);
    const char *ca[3] = {packed, stage, loop};
    if (!tsl_sketch_step(c, TSL_STEP_COMPUTE_AT, 3, ca, 0, NULL)) at = -1;
  }
  const tsl_stage *ps = tsl_schedule_stage(c->s, packed);
  /* order: the pack's dimensions as stored, outermost first (the identity unless a
   * storage_order step is applied) */
  int nd = ps->op->naxis, order[TSL_AXIS_ACCESS_MAX], walk[TSL_AXIS_ACCESS_MAX];
  for (int d = 0; d < nd && d < TSL_AXIS_ACCESS_MAX; d++) order[d] = walk[d] = d;
  if (pack_order(c, local, packed, walk) && (order_always || tsl_sketch_chance(c, 75))) {
    static _Thread_local char names[TSL_AXIS_ACCESS_MAX][NAME_LEN];
    const char *args[TSL_AXIS_ACCESS_MAX + 1] = {packed};
    for (int d = 0; d < nd; d++) {
      tsl_sketch_copy_name(names[d], ps->iters[walk[d]].name);
      args[d + 1] = names[d];
    }
    if (tsl_sketch_step(c, TSL_STEP_STORAGE_ORDER, nd + 1, args, 0, NULL)) {
      for (int d = 0; d < nd; d++) order[d] = walk[d];
      /* the copy's loops in the storage order: its writes walk the pack */
      tsl_sketch_reorder(c, packed, nd, names);
    }
  }
  /* rows of a packed block read along the vector axis padded by one register tile (as
   * the hand template's B blocks): successive reduction steps' vector loads then fall on
   * different L1 sets even when the block width is a multiple of the set stride */
  ps = tsl_schedule_stage(c->s, packed);
  if (nd >= 2 && width > nv && tsl_sketch_chance(c, 75)) {
    const char *sa[2] = {packed, ps->iters[order[nd - 2]].name};
    int64_t align[2] = {width, nv};
    tsl_sketch_step(c, TSL_STEP_STORAGE_ALIGN, 2, sa, 2, align);
  }
  /* the copy: its innermost axis by the lanes, vectorized; parallel outside the loops
   * that run in parallel */
  ps = tsl_schedule_stage(c->s, packed);
  char last[NAME_LEN], first[NAME_LEN];
  tsl_sketch_leaf_name(c, packed, ps->nleaf - 1, last);
  tsl_sketch_leaf_name(c, packed, 0, first);
  int64_t lanes = c->lanes;
  const char *sn[2] = {packed, last};
  int pos = ps->nleaf - 1;
  if (ps->iters[ps->leaf[pos]].extent > lanes && tsl_sketch_step(c, TSL_STEP_SPLIT, 2, sn, 1, &lanes)) pos++;
  if (tsl_sketch_leaf_contiguous(c, packed, pos)) {
    tsl_sketch_leaf_name(c, packed, pos, last);
    tsl_sketch_step1(c, TSL_STEP_VECTORIZE, packed, last);
  }
  if (par_pos >= 0 && at < par_pos && pos > 0) tsl_sketch_step1(c, TSL_STEP_PARALLEL, packed, first);
}

void tsl_sketch_rule_tile_pack(tsl_sketch_sampler *c, const char *stage) {
  const tsl_stage *st = tsl_schedule_stage(c->s, stage);
  int nsp = st->op->naxis, v = nsp - 1;
  /* the vector axis: the innermost spatial one, or (a knob) one that a packed input
   * reads contiguously once stored in the tile's order */
  int pv = tsl_sketch_chance(c, 50) ? packed_vector_axis(c, st) : -1;
  if (pv >= 0) v = pv;
  char roots[MAX_AXES][NAME_LEN], local[NAME_LEN];
  int64_t ext[MAX_AXES];
  for (int a = 0; a < nsp; a++) {
    tsl_sketch_copy_name(roots[a], st->iters[a].name);
    ext[a] = st->iters[a].extent;
  }
  /* the row axis: a spatial axis other than the vector one, longer than 1 */
  int rows[MAX_AXES], nrows = 0;
  for (int a = 0; a < nsp; a++)
    if (a != v && ext[a] > 1) rows[nrows++] = a;
  int row = nrows ? rows[tsl_sketch_rnd(c, nrows)] : -1;
  int64_t nv, mr;
  register_tile(c, ext[v], row >= 0 ? ext[row] : 1, &nv, &mr);

  const char *cw[2] = {stage, "local"};
  if (!tsl_sketch_step(c, TSL_STEP_CACHE_WRITE, 2, cw, 0, NULL)) return;
  snprintf(local, sizeof local, "%s.local", stage);
  char packs[4][NAME_LEN], packed[NAME_LEN] = "";
  unsigned deps = 0;
  int nvec = 0, npacks = pack_candidates(c, local, v, packs, 4, &nvec);
  if (pv >= 0 && nvec) {
    /* the input read along v packed (its vector loads contiguous), the accumulators
     * stored with v innermost */
    pack_read(c, local, packs[tsl_sketch_rnd(c, nvec)], packed, &deps);
    const tsl_stage *ls = tsl_schedule_stage(c->s, local);
    static _Thread_local char lnames[MAX_AXES][NAME_LEN];
    const char *largs[MAX_AXES + 1] = {local};
    int nl = 0;
    for (int a = 0; a < nsp; a++)
      if (a != v) tsl_sketch_copy_name(lnames[nl++], ls->iters[a].name);
    tsl_sketch_copy_name(lnames[nl++], ls->iters[v].name);
    for (int a = 0; a < nl; a++) largs[a + 1] = lnames[a];
    tsl_sketch_step(c, TSL_STEP_STORAGE_ORDER, nl + 1, largs, 0, NULL);
  } else if (npacks && tsl_sketch_chance(c, 75)) {
    int k = nvec && tsl_sketch_chance(c, 75) ? tsl_sketch_rnd(c, nvec) : tsl_sketch_rnd(c, npacks);
    pack_read(c, local, packs[k], packed, &deps);
  }

  /* the copy stage's three levels per axis */
  static _Thread_local char lv[MAX_AXES][3][NAME_LEN];
  int64_t vtiles = 1;
  for (int a = 0; a < nsp; a++) {
    int64_t reg = a == v ? nv : a == row ? mr : 1;
    int64_t tiles = block_tiles(c, (ext[a] + reg - 1) / reg);
    if (a == v) vtiles = tiles;
    split3(c, stage, roots[a], ext[a], reg, tiles, lv[a]);
  }
  /* block loops (the vector axis' first, serial, or all in order, fused), tile loops
   * (the vector axis' first or in order), register tile in order */
  bool v_outer = tsl_sketch_chance(c, 50), v_tiles_first = tsl_sketch_chance(c, 50);
  static _Thread_local char order[3 * MAX_AXES][NAME_LEN];
  int no = 0, nblock = 0, ntile = 0;
  for (int l = 0; l < 3; l++) {
    bool vfirst = (l == 0 && v_outer) || (l == 1 && v_tiles_first);
    if (vfirst && lv[v][l][0]) tsl_sketch_copy_name(order[no++], lv[v][l]);
    for (int a = 0; a < nsp; a++)
      if (!(vfirst && a == v) && lv[a][l][0]) tsl_sketch_copy_name(order[no++], lv[a][l]);
    if (l == 0) nblock = no;
    if (l == 1) ntile = no - nblock;
  }
  tsl_sketch_reorder(c, stage, no, order);
  /* parallel: the block loops fused, or those inside the vector axis' block loop (the
   * tile loops fused when every block is a whole axis) */
  int par_pos = -1;
  bool v_block = v_outer && lv[v][0][0] && nblock > 1;
  if (v_block) {
    char a[NAME_LEN], b[NAME_LEN];
    for (int i = 2; i < nblock; i++) {
      tsl_sketch_leaf_name(c, stage, 1, a);
      tsl_sketch_leaf_name(c, stage, 2, b);
      const char *fa[3] = {stage, a, b};
      if (!tsl_sketch_step(c, TSL_STEP_FUSE, 3, fa, 0, NULL)) break;
    }
    tsl_sketch_leaf_name(c, stage, 1, a);
    if (tsl_sketch_step1(c, TSL_STEP_PARALLEL, stage, a)) par_pos = 1;
  } else if (nblock > 0 || ntile > 0) {
    tsl_sketch_fuse_parallel(c, stage, nblock > 0 ? nblock : ntile);
    st = tsl_schedule_stage(c->s, stage);
    char first[NAME_LEN];
    tsl_sketch_leaf_name(c, stage, 0, first);
    if (st->iters[st->leaf[0]].annotation == TSL_FOR_PARALLEL || tsl_sketch_step1(c, TSL_STEP_PARALLEL, stage, first))
      par_pos = 0;
  }
  /* the local stage at the innermost tile loop (or block loop) */
  st = tsl_schedule_stage(c->s, stage);
  int nreg = 0;
  for (int a = 0; a < nsp; a++) nreg += lv[a][2][0] != 0;
  int nouter = st->nleaf - nreg;
  if (nouter > 0) {
    char at[NAME_LEN];
    tsl_sketch_leaf_name(c, stage, nouter - 1, at);
    const char *ca[3] = {local, stage, at};
    if (!tsl_sketch_step(c, TSL_STEP_COMPUTE_AT, 3, ca, 0, NULL)) nouter = 0;
  }
  /* the copy out of the register tile: its vector axis vectorized */
  st = tsl_schedule_stage(c->s, stage);
  if (lv[v][2][0] && tsl_sketch_leaf_contiguous(c, stage, st->nleaf - 1)) {
    char last[NAME_LEN];
    tsl_sketch_leaf_name(c, stage, st->nleaf - 1, last);
    tsl_sketch_step1(c, TSL_STEP_VECTORIZE, stage, last);
  }
  char vi[NAME_LEN];
  schedule_local(c, local, row, v, (int)(nv / c->lanes), vi);
  if (packed[0]) {
    int64_t width = ext[v] < nv * vtiles ? ext[v] : nv * vtiles;
    pack_place(c, stage, local, packed, deps, nouter, par_pos, width, nv, pv >= 0);
  }
  if (vi[0] && tsl_sketch_leaf_contiguous(c, local, tsl_sketch_leaf_pos(c, local, vi)))
    tsl_sketch_step1(c, TSL_STEP_VECTORIZE, local, vi);
}
