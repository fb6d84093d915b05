/* The bitserial conv2d schedule template (see bitserial.h). */
#include "schedule/templates/bitserial.h"

tsl_bitserial_knobs tsl_bitserial_default_knobs(const tsl_target *t, int64_t R, int64_t S) {
  int64_t words = t && t->vector_bits >= 128 ? t->vector_bits / 64 : 2;
  tsl_bitserial_knobs k = {words * 2, true, R * S <= 25, true};
  return k;
}

tsl_status tsl_bitserial_knobs_check(const tsl_bitserial_knobs *k) {
  if (!k) return tsl_error(TSL_ERR_INVALID, "bitserial template: NULL knobs");
  if (k->tile_x < 1 || k->tile_x > 64)
    return tsl_error(TSL_ERR_INVALID, "bitserial template: knob tile_x = %lld outside [1, 64]", (long long)k->tile_x);
  if (k->vectorize && k->tile_x < 2)
    return tsl_error(TSL_ERR_INVALID, "bitserial template: knob vectorize needs tile_x >= 2");
  return TSL_OK;
}

/* The step list, applied in order; the first refusal stops it. */
static tsl_status apply(tsl_schedule *s, const tsl_bitserial_knobs *k, bool planes) {
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

tsl_status tsl_bitserial_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_bitserial_knobs *k,
                                  tsl_schedule **out) {
  if (out) *out = NULL;
  if (!p || !out) return tsl_error(TSL_ERR_INVALID, "bitserial template: NULL program or output");
  tsl_schedule *s = NULL;
  tsl_status st = tsl_schedule_create(p, &s);
  if (st != TSL_OK) return st;
  tsl_stage *acc = tsl_schedule_stage(s, "acc");
  if (!acc || tsl_stage_iter_index(acc, "c") < 0 || tsl_stage_iter_index(acc, "r") < 0 ||
      tsl_stage_iter_index(acc, "s") < 0 || tsl_stage_iter_index(acc, "x") < 0) {
    tsl_schedule_free(s);
    return tsl_error(TSL_ERR_INVALID, "bitserial template: the program is not a bitserial_conv2d (no stage acc "
                                      "with axes x, c, r, s)");
  }
  int ri = tsl_stage_iter_index(acc, "r"), si = tsl_stage_iter_index(acc, "s");
  tsl_bitserial_knobs kk = k ? *k : tsl_bitserial_default_knobs(t, acc->iters[ri].extent, acc->iters[si].extent);
  st = tsl_bitserial_knobs_check(&kk);
  /* A tile wider than the row leaves lanes that store to no column of their own (the
   * vectorizer refuses it): shrink the tile to the widest power of two inside the row. */
  int64_t ow = acc->iters[tsl_stage_iter_index(acc, "x")].extent;
  while (st == TSL_OK && kk.tile_x > ow && kk.tile_x > 1) kk.tile_x /= 2;
  if (kk.tile_x < 2) kk.vectorize = false;
  if (st == TSL_OK) st = apply(s, &kk, tsl_stage_iter_index(acc, "b") >= 0);
  if (st != TSL_OK) {
    tsl_schedule_free(s);
    return st;
  }
  *out = s;
  return TSL_OK;
}
