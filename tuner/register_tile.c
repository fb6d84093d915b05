/* Register tiles of a vectorized reduction (see register_tile.h). */
#include "tuner/register_tile.h"

/* The row counts a tile of `vectors` vectors may take: divisors of rext within the
 * registers, or, when none reaches half of them, near-dividing counts (tail <= rext/8). */
static int row_counts(int vregs, int64_t vectors, int64_t rext, int64_t *rows) {
  int64_t budget = (vregs - vectors - 1) / vectors;
  if (budget < 1) budget = 1;
  if (budget > rext) budget = rext;
  int n = 0;
  int64_t best = 1;
  for (int64_t r = 1; r <= budget; r++)
    if (rext % r == 0) rows[n++] = r, best = r;
  if (2 * best >= budget) return n;
  for (int64_t r = (budget + 1) / 2; r <= budget; r++) {
    int64_t tail = (rext + r - 1) / r * r - rext;
    if (rext % r != 0 && 8 * tail <= rext) rows[n++] = r;
  }
  return n;
}

tsl_status tsl_register_tiles(int lanes, int vregs, int64_t vext, int64_t rext, tsl_register_tile *out, int *n) {
  if (lanes < 1 || vregs < 1 || vext < 1 || rext < 1 || !out || !n)
    return tsl_error(TSL_ERR_INVALID, "register tiles: lanes %d, registers %d, extents %lld x %lld", lanes, vregs,
                     (long long)vext, (long long)rext);
  int64_t vmax = vext / lanes;
  if (vmax < 1) vmax = 1;
  if (vmax > TSL_REGISTER_TILE_MAX_VECTORS) vmax = TSL_REGISTER_TILE_MAX_VECTORS;
  bool dividing = false;
  for (int64_t v = 1; v <= vmax; v++) dividing = dividing || vext % (v * lanes) == 0;
  tsl_register_tile all[TSL_REGISTER_TILE_MAX];
  int nall = 0;
  for (int64_t v = 1; v <= vmax; v++) {
    if (dividing && vext % (v * lanes) != 0) continue;
    int64_t rows[TSL_REGISTER_TILE_MAX];
    int nr = row_counts(vregs, v, rext, rows);
    for (int i = 0; i < nr && nall < TSL_REGISTER_TILE_MAX; i++) all[nall++] = (tsl_register_tile){v, rows[i]};
  }
  /* enough accumulators to hide the FMA latency, then FMAs per load (v*r / (v+r), as
   * fractions) within 3/4 of the best of those */
  int64_t most = 1, bnum = 0, bden = 1;
  for (int i = 0; i < nall; i++)
    if (all[i].vectors * all[i].rows > most) most = all[i].vectors * all[i].rows;
  int64_t need = most < TSL_REGISTER_TILE_LATENCY_ACCUMULATORS ? most : TSL_REGISTER_TILE_LATENCY_ACCUMULATORS;
  for (int i = 0; i < nall; i++) {
    int64_t acc = all[i].vectors * all[i].rows, loads = all[i].vectors + all[i].rows;
    if (acc >= need && acc * bden > bnum * loads) bnum = acc, bden = loads;
  }
  *n = 0;
  for (int i = 0; i < nall; i++) {
    int64_t acc = all[i].vectors * all[i].rows, loads = all[i].vectors + all[i].rows;
    if (acc >= need && 4 * acc * bden >= 3 * bnum * loads) out[(*n)++] = all[i];
  }
  return TSL_OK;
}
