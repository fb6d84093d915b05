/* tsl_register_tiles (tuner/register_tile.h): the register tiles the tile_pack sketch
 * samples fit the target's vector registers and divide (or, for a prime extent, nearly
 * divide) the extents, at 8 lanes (AVX2, 16 registers) and 16 lanes (AVX-512, 32).
 * The checks restate the conditions from first principles and compare a 1024^2 matmul's
 * tiles with the sets worked out by hand. */
#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdint.h>

#include "target/target.h"
#include "tuner/register_tile.h"
#include "tuner_tests.h"

/* The row counts that may hold: exact divisors, or a tail of at most rext/8 when no
 * divisor reaches half the rows the registers allow. */
static bool rows_legal(int64_t rows, int64_t rext, int64_t budget) {
  if (rext % rows == 0) return true;
  int64_t bestdiv = 1;
  for (int64_t r = 1; r <= budget && r <= rext; r++)
    if (rext % r == 0) bestdiv = r;
  int64_t tail = (rext + rows - 1) / rows * rows - rext;
  return 2 * bestdiv < (budget < rext ? budget : rext) && 8 * tail <= rext;
}

static void check_legal(int lanes, int vregs, int64_t vext, int64_t rext) {
  tsl_register_tile t[TSL_REGISTER_TILE_MAX];
  int n = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_register_tiles(lanes, vregs, vext, rext, t, &n), TSL_OK);
  CU_ASSERT_TRUE(n >= 1 && n <= TSL_REGISTER_TILE_MAX);
  bool some_divides = false;
  for (int64_t v = 1; v <= TSL_REGISTER_TILE_MAX_VECTORS && v * lanes <= vext; v++)
    some_divides = some_divides || vext % (v * lanes) == 0;
  /* the most accumulators of any legal tile, by brute force */
  int64_t most = 1;
  for (int64_t v = 1; v <= TSL_REGISTER_TILE_MAX_VECTORS && (v == 1 || v * lanes <= vext); v++) {
    if (some_divides && vext % (v * lanes) != 0) continue;
    for (int64_t r = 1; r <= rext && r * v + v + 1 <= vregs; r++)
      if (rows_legal(r, rext, (vregs - v - 1) / v) && r * v > most) most = r * v;
  }
  for (int i = 0; i < n; i++) {
    int64_t v = t[i].vectors, r = t[i].rows;
    CU_ASSERT_TRUE(v >= 1 && r >= 1 && r <= rext);
    CU_ASSERT_TRUE(r * v + v + 1 <= vregs);
    CU_ASSERT_TRUE(vext < lanes ? v == 1 : v * lanes <= vext);
    if (some_divides) CU_ASSERT_EQUAL(vext % (v * lanes), 0);
    CU_ASSERT_TRUE(rows_legal(r, rext, (vregs - v - 1) / v));
    CU_ASSERT_TRUE(r * v >= (most < 8 ? most : 8)); /* enough accumulators for the FMA latency, or all there can be */
  }
}

static bool has(const tsl_register_tile *t, int n, int64_t v, int64_t r) {
  for (int i = 0; i < n; i++)
    if (t[i].vectors == v && t[i].rows == r) return true;
  return false;
}

static void test_register_tiles_fit_and_divide(void) {
  const char *targets[2] = {"x86-64-avx2", "x86-64-avx512"};
  const int64_t ext[][2] = {{1024, 1024}, {64, 3136}, {40, 64}, {256, 1021}, {7, 30}, {96, 56}, {1000, 23}, {16, 1}};
  for (int k = 0; k < 2; k++) {
    tsl_target tg;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[k], &tg), TSL_OK);
    int lanes = tsl_target_f32_lanes(&tg), vregs = tsl_target_vector_registers(&tg);
    CU_ASSERT_EQUAL(lanes, k ? 16 : 8);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) check_legal(lanes, vregs, ext[i][0], ext[i][1]);
  }
}

/* 1024 x 1024: 8 lanes / 16 registers leave 4 x 2 and 2 x 4 vectors x rows (8 FMAs per
 * 6 loads; 1 x 8 has 8 per 9), 16 lanes / 32 registers 4 x 4 (16 per 8) and 2 x 8 (16 per
 * 10); 3 vectors do not divide 1024, and a 23-row tile never appears. */
static void test_register_tiles_of_a_matmul(void) {
  tsl_register_tile t[TSL_REGISTER_TILE_MAX];
  int n = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_register_tiles(8, 16, 1024, 1024, t, &n), TSL_OK);
  CU_ASSERT_EQUAL(n, 2);
  CU_ASSERT_TRUE(has(t, n, 4, 2) && has(t, n, 2, 4));
  CU_ASSERT_EQUAL_FATAL(tsl_register_tiles(16, 32, 1024, 1024, t, &n), TSL_OK);
  CU_ASSERT_EQUAL(n, 2);
  CU_ASSERT_TRUE(has(t, n, 4, 4) && has(t, n, 2, 8));
  CU_ASSERT_EQUAL(tsl_register_tiles(0, 32, 1024, 1024, t, &n), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_register_tiles(16, 32, 1024, 0, t, &n), TSL_ERR_INVALID);
}

void tsl_tests_tuner_register_tile(void) {
  CU_pSuite s = CU_add_suite("tuner_register_tile", NULL, NULL);
  CU_add_test(s, "test_register_tiles_fit_and_divide", test_register_tiles_fit_and_divide);
  CU_add_test(s, "test_register_tiles_of_a_matmul", test_register_tiles_of_a_matmul);
}
