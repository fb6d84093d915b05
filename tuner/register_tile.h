/* Register tiles of a vectorized reduction: the legal (vectors x rows) accumulator blocks
 * for a target's lanes and vector registers over given extents, from which the sketch
 * rules (tuner/sketch_tile_pack.c) sample.
 *
 * A register tile keeps rows x vectors accumulators of `lanes` f32 in registers; each
 * reduction step loads `vectors` operand vectors and broadcasts one value per row, so it
 * needs rows * vectors + vectors + 1 vector registers and does rows * vectors FMAs per
 * rows + vectors loads (the register-blocking analysis of Low et al., "Analytical
 * modeling is enough for high-performance BLIS", TOMS 2016, section 3). */
#ifndef TESSEL_TUNER_REGISTER_TILE_H
#define TESSEL_TUNER_REGISTER_TILE_H
#include <stdbool.h>
#include <stdint.h>

#include "tessel/status.h"

/* Most vector tiles (vectors) in a register tile. */
#define TSL_REGISTER_TILE_MAX_VECTORS 4
/* Accumulators that hide the FMA latency on the x86 cores tessel targets (4 cycles x 2
 * FMA ports); fewer leave the FMA units waiting on their own results. */
#define TSL_REGISTER_TILE_LATENCY_ACCUMULATORS 8
/* Most register tiles tsl_register_tiles returns. */
#define TSL_REGISTER_TILE_MAX 64

typedef struct tsl_register_tile {
  int64_t vectors; /* vector tiles along the vector axis (its tile is vectors * lanes) */
  int64_t rows;    /* steps of the row axis */
} tsl_register_tile;

/* The register tiles worth sampling for a vector axis of extent vext and a row axis of
 * extent rext at `lanes` f32 lanes and `vregs` vector registers, into out[] (room for
 * TSL_REGISTER_TILE_MAX), their count to *n (at least 1). Every tile fits:
 * rows * vectors + vectors + 1 <= vregs (rows 1 when vregs is too small for more), and
 * vectors * lanes <= vext (vectors 1 when vext < lanes: one partial vector).
 * The vector tile divides vext when some count of 1..TSL_REGISTER_TILE_MAX_VECTORS does;
 * the rows divide rext, or, when no divisor reaches half the rows the registers allow (a
 * prime rext), leave a tail of at most rext / 8. Of those, only the tiles whose FMAs per
 * load reach 3/4 of the best and whose accumulators reach
 * min(TSL_REGISTER_TILE_LATENCY_ACCUMULATORS, the most of any) are kept: a 23 x 1 tile
 * of a 1024-row matmul (a tail, and 24 loads for 23 FMAs) and a 2 x 2 one (4 accumulators)
 * are never offered. Errors: TSL_ERR_INVALID for lanes, vregs, vext or rext < 1. */
tsl_status tsl_register_tiles(int lanes, int vregs, int64_t vext, int64_t rext, tsl_register_tile *out, int *n);

#endif
