/* The bitserial conv2d schedule template (see bitserial.h). */
#include "ops/binary/bitserial.h"

#include <string.h>

#include "ops/tpl_util.h"

tsl_bitserial_knobs tsl_bitserial_default_knobs(const tsl_target *t, int64_t R, int64_t S) {
  int64_t words = tsl_target_f32_lanes(t) / 2; /* 64-bit words a vector holds */
  tsl_bitserial_knobs k = {words * 2, true, R * S <= 25, true, 16, 0, 0};
  return k;
}

/* Nest 1's default pixels per register tile (bitserial.h): the tile's accumulators
 * (ow_block x the oc_block / 64-bit-lanes vectors) fill half the vector registers, the
 * rest holding the weight vectors and broadcast data words; at most 8. Among the widths
 * from half that up to it, the one with the fewest tiles along the row, then the least
 * overhang (7 at rows of 7, 14 and 28). */
static int64_t auto_ow_block(const tsl_target *t, int64_t kb, int64_t OW) {
  int64_t words = tsl_target_f32_lanes(t) / 2, vecs = kb > words ? kb / words : 1;
  int64_t want = tsl_target_vector_registers(t) / 2 / vecs;
  want = want < 1 ? 1 : want > 8 ? 8 : want;
  if (want >= OW) return OW;
  int64_t best = want;
  for (int64_t d = want; d >= (want + 1) / 2; d--) {
    int64_t tiles = (OW + d - 1) / d, best_tiles = (OW + best - 1) / best;
    if (tiles < best_tiles || (tiles == best_tiles && tiles * d < best_tiles * best)) best = d;
  }
  return best;
}

tsl_status tsl_bitserial_knobs_check(const tsl_bitserial_knobs *k) {
  if (!k) return tsl_error(TSL_ERR_INVALID, "bitserial template: NULL knobs");
  if (k->tile_x < 1 || k->tile_x > 64)
    return tsl_error(TSL_ERR_INVALID, "bitserial template: knob tile_x = %lld outside [1, 64]", (long long)k->tile_x);
  if (k->vectorize && k->tile_x < 2)
    return tsl_error(TSL_ERR_INVALID, "bitserial template: knob vectorize needs tile_x >= 2");
  if (k->oc_block < 0 || k->oc_block > 64)
    return tsl_error(TSL_ERR_INVALID, "bitserial template: knob oc_block = %lld outside [0, 64]",
                     (long long)k->oc_block);
  if (k->ow_block < 0 || k->ow_block > 16)
    return tsl_error(TSL_ERR_INVALID, "bitserial template: knob ow_block = %lld outside [0, 16]",
                     (long long)k->ow_block);
  if (k->fuse_rows < -1 || k->fuse_rows > 1)
    return tsl_error(TSL_ERR_INVALID, "bitserial template: knob fuse_rows = %d outside [-1, 1]", k->fuse_rows);
  return TSL_OK;
}

/* fuse_rows 0: rows of at least this many output pixels compute acc row by row. Measured
 * here (bench/binary column xr: one process, 1 thread, bresnet18's 1-bit convs):
 * 1.02-1.26x at 56, 28 and 14 pixels a row; 0.9x at 7 in scratch runs (there the whole acc
 * fits in L2 anyway and 7 rows are a poorer unit of parallel work than the channel blocks). */
enum { FUSE_ROWS_MIN_OW = 14 };

/* Nest 2 (acc[n, k, y, x]): the step list, applied in order; the first refusal stops it. */
static tsl_status apply_kyx(tsl_schedule *s, const tsl_bitserial_knobs *k, bool planes) {
  tsl_status st = TSL_OK;
  if (k->tile_x > 1) {
    st = tsl_schedule_split(s, "acc", "x", k->tile_x);
    static const char *const order_planes[] = {"n", "k", "y", "x.outer", "b", "c", "r", "s", "x.inner"};
    static const char *const order[] = {"n", "k", "y", "x.outer", "c", "r", "s", "x.inner"};
    if (st == TSL_OK)
      st = planes ? tsl_schedule_reorder(s, "acc", 9, order_planes) : tsl_schedule_reorder(s, "acc", 8, order);
  }
  if (st == TSL_OK && k->unroll_kernel) st = tsl_schedule_unroll(s, "acc", "r");
  if (st == TSL_OK && k->unroll_kernel) st = tsl_schedule_unroll(s, "acc", "s");
  if (st == TSL_OK && k->vectorize) st = tsl_schedule_vectorize(s, "acc", "x.inner");
  if (st == TSL_OK && k->parallel) {
    static const char *const outer[] = {"k", "n"};
    st = tsl_schedule_reorder(s, "acc", 2, outer);
    if (st == TSL_OK) st = tsl_schedule_parallel(s, "acc", "k");
  }
  return st;
}

/* Nest 1 (acc[n, y, x, k]): the register tile, then the apop and epilogue loops. */
static tsl_status apply_yxk(tsl_schedule *s, const tsl_te_program *p, const tsl_bitserial_knobs *k, bool planes,
                            int64_t K, int64_t OW) {
  int64_t kb = k->oc_block, xb = k->ow_block;
  while (kb > 1 && K % kb != 0) kb /= 2;
  if (xb > OW) xb = OW;
  tpl_builder b = {s, TSL_OK, "bitserial template"};
  /* the glue stages fold into the epilogue that reads them (one pass over acc) */
  static const char *const glue_stages[] = {"glued", "q"};
  for (int i = 0; i < 2; i++)
    if (tsl_schedule_stage(s, glue_stages[i])) tpl_compute_inline(&b, glue_stages[i]);
  const char *out = p->outputs[0]->op ? p->outputs[0]->op->name : NULL;
  tsl_stage *os = out && strcmp(out, "acc") != 0 ? tsl_schedule_stage(s, out) : NULL;
  bool has_rows = os && tsl_stage_iter_index(os, "y") >= 0 && tsl_stage_iter_index(os, "n") >= 0;
  bool rows = has_rows && (k->fuse_rows > 0 || (k->fuse_rows == 0 && OW >= FUSE_ROWS_MIN_OW));
  tpl_name local;
  tpl_cache_write(&b, "acc", local);
  tpl_split(&b, "acc", "k", kb);
  tpl_split(&b, "acc", "x", xb);
  /* per row: the channel block outside the pixels, so its weights stay in L1 along the row */
  if (rows)
    tpl_reorder(&b, "acc", 6, (const char *const[]){"n", "y", "k.outer", "x.outer", "x.inner", "k.inner"});
  else
    tpl_reorder(&b, "acc", 6, (const char *const[]){"n", "k.outer", "y", "x.outer", "x.inner", "k.inner"});
  tpl_compute_at(&b, local, "acc", "x.outer");
  if (planes)
    tpl_reorder(&b, local, 8, (const char *const[]){"n", "y", "b", "c", "r", "s", "x", "k"});
  else
    tpl_reorder(&b, local, 7, (const char *const[]){"n", "y", "c", "r", "s", "x", "k"});
  if (k->unroll_kernel) {
    tpl_unroll(&b, local, "r");
    tpl_unroll(&b, local, "s");
  }
  if (xb > 1) tpl_unroll(&b, local, "x");
  if (k->vectorize && kb > 1) {
    tpl_vectorize(&b, local, "k");
    tpl_vectorize(&b, "acc", "k.inner");
  }
  /* the epilogue's rows outermost (y takes n's place): the row loop is the parallel one
   * and, with rows, the one acc and apop are computed in */
  if (has_rows) tpl_reorder(&b, out, 2, (const char *const[]){"y", "n"});
  if (rows) {
    tpl_compute_at(&b, "acc", out, "y");
    if (tsl_schedule_stage(s, "apop")) tpl_compute_at(&b, "apop", out, "y");
  }
  if (k->parallel) {
    if (!rows) {
      tpl_parallel(&b, "acc", "k.outer");
      if (tsl_schedule_stage(s, "apop")) tpl_parallel(&b, "apop", "y");
    }
    if (has_rows) tpl_parallel(&b, out, "y");
  }
  return b.st;
}

tsl_status tsl_bitserial_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_bitserial_knobs *k,
                                  tsl_schedule **out) {
  if (out) *out = NULL;
  if (!p || !out) return tsl_error(TSL_ERR_INVALID, "bitserial template: NULL program or output");
  tsl_schedule *s = NULL;
  tsl_status st = tsl_schedule_create(p, &s);
  if (st != TSL_OK) return st;
  tsl_stage *acc = tsl_schedule_stage(s, "acc");
  if (!acc || tsl_stage_iter_index(acc, "c") < 0 || tsl_stage_iter_index(acc, "r") < 0 ||
      tsl_stage_iter_index(acc, "s") < 0 || tsl_stage_iter_index(acc, "x") < 0 || acc->niters < 4) {
    tsl_schedule_free(s);
    return tsl_error(TSL_ERR_INVALID, "bitserial template: the program is not a bitserial_conv2d (no stage acc "
                                      "with axes x, c, r, s)");
  }
  int ri = tsl_stage_iter_index(acc, "r"), si = tsl_stage_iter_index(acc, "s");
  tsl_bitserial_knobs kk = k ? *k : tsl_bitserial_default_knobs(t, acc->iters[ri].extent, acc->iters[si].extent);
  st = tsl_bitserial_knobs_check(&kk);
  if (kk.oc_block == 0) kk.oc_block = 16;
  int64_t ow = acc->iters[tsl_stage_iter_index(acc, "x")].extent;
  if (kk.ow_block == 0) {
    int64_t kb = kk.oc_block, K = acc->iters[3].extent;
    while (kb > 1 && K % kb != 0) kb /= 2;
    kk.ow_block = auto_ow_block(t, kb, ow);
  }
  bool planes = tsl_stage_iter_index(acc, "b") >= 0;
  bool yxk = strcmp(acc->iters[3].name, "k") == 0;
  if (st == TSL_OK && yxk) {
    st = apply_yxk(s, p, &kk, planes, acc->iters[3].extent, ow);
  } else if (st == TSL_OK) {
    /* A tile wider than the row leaves lanes that store to no column of their own (the
     * vectorizer refuses it): shrink the tile to the widest power of two inside the row. */
    while (kk.tile_x > ow && kk.tile_x > 1) kk.tile_x /= 2;
    if (kk.tile_x < 2) kk.vectorize = false;
    st = apply_kyx(s, &kk, planes);
  }
  if (st != TSL_OK) {
    tsl_schedule_free(s);
    return st;
  }
  *out = s;
  return TSL_OK;
}

/* ---- template adapters (schedule/template.h) ---- */

static tsl_status acc_extents(const tsl_te_program *p, bool *yxk, int64_t *K, int64_t *OW, int64_t *R, int64_t *S) {
  const tsl_te_op *acc = tpl_find_named(p, "acc");
  if (!acc || acc->naxis != 4)
    return tsl_error(TSL_ERR_INVALID, "bitserial template: the program has no 4-D stage acc");
  *yxk = strcmp(acc->axis[3].var->var.name, "k") == 0;
  *K = acc->axis[*yxk ? 3 : 1].extent;
  *OW = acc->axis[*yxk ? 2 : 3].extent;
  *R = *S = 1;
  for (int i = 0; i < acc->nreduce; i++) {
    if (strcmp(acc->reduce_axis[i].var->var.name, "r") == 0) *R = acc->reduce_axis[i].extent;
    if (strcmp(acc->reduce_axis[i].var->var.name, "s") == 0) *S = acc->reduce_axis[i].extent;
  }
  return TSL_OK;
}

static tsl_status space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  bool yxk;
  int64_t K, OW, R, S;
  tsl_status st = acc_extents(p, &yxk, &K, &OW, &R, &S);
  if (st != TSL_OK) return st;
  tsl_bitserial_knobs d = tsl_bitserial_default_knobs(t, R, S);
  memset(out, 0, sizeof *out);
  static const int64_t bools[] = {0, 1};
  int64_t v[16];
  int n = 0;
  if (yxk) {
    for (int64_t kb = 4; kb <= 64 && kb <= K; kb *= 2)
      if (K % kb == 0) v[n++] = kb;
    int64_t dk = d.oc_block;
    while (dk > 1 && K % dk != 0) dk /= 2;
    if ((st = tpl_knob(out, "oc_block", TSL_KNOB_SPLIT, n, v, dk)) != TSL_OK) return st;
    n = 0;
    for (int64_t xb = 1; xb <= 8 && xb <= OW; xb++) v[n++] = xb;
    if ((st = tpl_knob(out, "ow_block", TSL_KNOB_SPLIT, n, v, auto_ow_block(t, dk, OW))) != TSL_OK) return st;
    if ((st = tpl_knob(out, "fuse_rows", TSL_KNOB_ANNOTATE, 2, bools, OW >= FUSE_ROWS_MIN_OW)) != TSL_OK) return st;
  } else {
    for (int64_t tx = 1; tx <= 16; tx *= 2) v[n++] = tx;
    int64_t dt = d.tile_x;
    while (dt > OW && dt > 1) dt /= 2;
    if ((st = tpl_knob(out, "tile_x", TSL_KNOB_SPLIT, n, v, dt)) != TSL_OK) return st;
    if ((st = tpl_knob(out, "vectorize", TSL_KNOB_ANNOTATE, 2, bools, dt >= 2)) != TSL_OK) return st;
  }
  if ((st = tpl_knob(out, "unroll_kernel", TSL_KNOB_ANNOTATE, 2, bools, d.unroll_kernel)) != TSL_OK) return st;
  return tpl_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools, d.parallel);
}

static tsl_bitserial_knobs knobs_of(const tsl_target *t, const tsl_config_space *s, const tsl_config *c, int64_t R,
                                    int64_t S) {
  tsl_bitserial_knobs k = tsl_bitserial_default_knobs(t, R, S);
  k.oc_block = tsl_config_get(s, c, "oc_block", k.oc_block);
  k.ow_block = tsl_config_get(s, c, "ow_block", k.ow_block);
  /* a config names both choices; 0 (decide from the row) only where the space has no knob */
  if (tsl_space_knob_index(s, "fuse_rows") >= 0) k.fuse_rows = tsl_config_get(s, c, "fuse_rows", 0) != 0 ? 1 : -1;
  k.tile_x = tsl_config_get(s, c, "tile_x", k.tile_x);
  k.vectorize = tsl_config_get(s, c, "vectorize", k.vectorize) != 0 || tsl_space_knob_index(s, "vectorize") < 0;
  k.unroll_kernel = tsl_config_get(s, c, "unroll_kernel", k.unroll_kernel) != 0;
  k.parallel = tsl_config_get(s, c, "parallel", k.parallel) != 0;
  if (k.tile_x < 2) k.vectorize = tsl_space_knob_index(s, "vectorize") < 0;
  return k;
}

static tsl_status default_config(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                                 tsl_config *out) {
  bool yxk;
  int64_t K, OW, R, S;
  tsl_status st = acc_extents(p, &yxk, &K, &OW, &R, &S);
  if (st != TSL_OK) return st;
  /* every knob's default is the value tpl_knob was given: the first config index whose
   * values equal those defaults */
  tsl_config_space tmp;
  if ((st = space(p, t, &tmp)) != TSL_OK) return st;
  tsl_bitserial_knobs d = tsl_bitserial_default_knobs(t, R, S);
  int64_t dk = d.oc_block;
  while (dk > 1 && K % dk != 0) dk /= 2;
  int64_t dt = d.tile_x;
  while (dt > OW && dt > 1) dt /= 2;
  if (yxk) {
    const char *names[] = {"oc_block", "ow_block", "fuse_rows", "unroll_kernel", "parallel"};
    int64_t vals[] = {dk, auto_ow_block(t, dk, OW), OW >= FUSE_ROWS_MIN_OW, d.unroll_kernel, d.parallel};
    return tpl_config_of(s, 5, names, vals, out);
  }
  const char *names[] = {"tile_x", "vectorize", "unroll_kernel", "parallel"};
  int64_t vals[] = {dt, dt >= 2, d.unroll_kernel, d.parallel};
  return tpl_config_of(s, 4, names, vals, out);
}

static tsl_status apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s, const tsl_config *c,
                        tsl_schedule **out) {
  bool yxk;
  int64_t K, OW, R, S;
  tsl_status st = acc_extents(p, &yxk, &K, &OW, &R, &S);
  if (st != TSL_OK) return st;
  tsl_bitserial_knobs k = knobs_of(t, s, c, R, S);
  return tsl_bitserial_schedule(p, t, &k, out);
}

/* Each template's full name is written out (found with grep from a records file). */
#define TPL(NAME, OP)                                                                                            \
  {NAME, OP, "bitserial conv: register tile (pixels x channels) over popcount words, window unrolled", 1,       \
   space, default_config, apply}
static const tsl_template templates[] = {
    TPL("bitserial_conv2d_unipolar64_packed.tile", "bitserial_conv2d_unipolar64_packed"),
    TPL("bitserial_conv2d_unipolar64_requant.tile", "bitserial_conv2d_unipolar64_requant"),
    TPL("bitserial_conv2d_unipolar64_requant_add.tile", "bitserial_conv2d_unipolar64_requant_add"),
    TPL("bitserial_conv2d_unipolar64_requant_nhwc.tile", "bitserial_conv2d_unipolar64_requant_nhwc"),
    TPL("bitserial_conv2d_unipolar64_requant_add_nhwc.tile", "bitserial_conv2d_unipolar64_requant_add_nhwc"),
    TPL("bitserial_conv2d_bipolar64.tile", "bitserial_conv2d_bipolar64"),
    TPL("bitserial_conv2d_unipolar64.tile", "bitserial_conv2d_unipolar64"),
};

const tsl_template *tsl_bitserial_templates(int *n) {
  *n = (int)(sizeof templates / sizeof templates[0]);
  return templates;
}
