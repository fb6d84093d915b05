/* The knob spaces of the operator library's templates (schedule/templates/): every
 * point compiles — the register tile is one knob listing only tiles that fit the
 * registers and lowering's unroll limit (conv_common.h), unroll options appear only
 * where they fit — so a sample of each space lowers without error, and random points
 * with any tile (not only the small ones the other tests use) equal the reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/ops/registry.h"
#include "ir/arena.h"
#include "ops/conv_check.h"
#include "ops/ops_util.h"
#include "schedule/lower.h"
#include "schedule/templates/conv2d_select.h"

static uint64_t rng = 0x5bace5;
static uint64_t next(void) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Applies and lowers the default and n uniformly drawn points of tpl's space for p;
 * returns how many failed (printing each). */
static int lower_sample(const tsl_template *tpl, const tsl_te_program *p, int n) {
  tsl_config_space space;
  if (tpl->space(p, ops_target(), &space) != TSL_OK) {
    printf("\n  %s: space: %s\n", tpl->name, tsl_last_error());
    return 1;
  }
  tsl_lower_options lo = tsl_lower_options_default();
  lo.vector_bits = ops_target()->vector_bits;
  int failed = 0;
  for (int i = -1; i < n; i++) {
    tsl_config c;
    if (i < 0) {
      if (tpl->default_config(p, ops_target(), &space, &c) != TSL_OK) {
        printf("\n  %s: default config: %s\n", tpl->name, tsl_last_error());
        failed++;
        continue;
      }
    } else {
      c.nknobs = space.nknobs;
      for (int k = 0; k < space.nknobs; k++) c.values[k] = space.knobs[k].values[next() % (uint64_t)space.knobs[k].nvalues];
    }
    tsl_schedule *s = NULL;
    tsl_func *f = NULL;
    tsl_status st = tpl->apply(p, ops_target(), &space, &c, &s);
    if (st == TSL_OK) st = tsl_lower_with(s, "space_point", &lo, &f);
    if (st != TSL_OK) {
      char buf[256];
      printf("\n  %s on %s, config %s: %s\n", tpl->name, p->name, tsl_config_str(&space, &c, buf, sizeof buf),
             tsl_last_error());
      failed++;
    }
    tsl_schedule_free(s);
  }
  return failed;
}

/* Layers whose spaces used to hold configs over the unroll limit: wide blocks (x = 16
 * on an 8-lane target: two registers per accumulator), 7x7 kernels with the columns
 * unrolled, plain NCHW (x = 1, the columns vectorized), and the usual shapes. */
static void test_every_sampled_point_of_every_space_lowers(void) {
  static const struct {
    conv_case c;
    tsl_conv2d_algo a;
    int64_t block;
  } layers[] = {
      {{1, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false}, TSL_CONV2D_DIRECT, 0},
      {{1, 32, 12, 12, 48, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 1, 2, 0, 6, true}, TSL_CONV2D_DIRECT, 16},
      {{1, 8, 13, 13, 16, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, false}, TSL_CONV2D_DIRECT, 1},
      {{1, 3, 32, 32, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, false}, TSL_CONV2D_DIRECT, 0},
      {{1, 32, 7, 7, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, true}, TSL_CONV2D_GEMM_1X1, 0},
      {{1, 3, 30, 30, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, false}, TSL_CONV2D_IM2COL, 16},
      {{1, 24, 20, 20, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24, 2, 0, 6, false}, TSL_CONV2D_DEPTHWISE, 0},
      {{1, 16, 20, 20, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 16, 0, 0, 0, true}, TSL_CONV2D_DEPTHWISE, 16},
      {{1, 8, 15, 15, 8, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 8, 0, 0, 0, false}, TSL_CONV2D_DEPTHWISE, 1},
      {{1, 3, 24, 24, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false}, TSL_CONV2D_GROUPED, 0},
      {{1, 16, 12, 12, 32, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 4, 0, 0, 0, true}, TSL_CONV2D_GROUPED, 16},
      {{1, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false}, TSL_CONV2D_WINOGRAD_F4, 0},
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
    tsl_conv2d_desc d = conv_case_desc(&layers[i].c, layers[i].block ? layers[i].block : ops_lanes());
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    tsl_te_program *conv = NULL;
    if (tsl_conv2d_algo_instantiate(&d, layers[i].a, ops_target(), &conv, NULL) != TSL_OK) {
      printf("\n  layer %zu: %s\n", i, tsl_last_error());
      failed++;
    } else {
      const tsl_template *tpl = tsl_conv2d_algo_template(conv);
      CU_ASSERT_PTR_NOT_NULL(tpl);
      if (tpl) failed += lower_sample(tpl, conv, layers[i].a >= TSL_CONV2D_WINOGRAD_F2 ? 6 : 25);
    }
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
  /* pooling: a 7x7 window at x = 16, 3x3 with ceil_mode at the host's lanes, global */
  static const struct {
    const char *op;
    int64_t x, k, ceil;
  } pools[] = {{"max_pool2d_nchwc", 16, 7, 0}, {"avg_pool2d_nchwc", 0, 3, 1}, {"max_pool2d_nchwc", 1, 3, 1},
               {"global_avg_pool2d_nchwc", 0, 0, 0}};
  for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++) {
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    int64_t x = pools[i].x ? pools[i].x : ops_lanes();
    int64_t shape[5] = {1, 2, 17, 17, x};
    const int64_t *shapes[1] = {shape};
    int ndims[1] = {5};
    tsl_dsl_param_value p[4] = {tsl_dsl_int_param("kernel_h", pools[i].k), tsl_dsl_int_param("kernel_w", pools[i].k),
                                tsl_dsl_int_param("stride_h", 2), tsl_dsl_int_param("ceil_mode", pools[i].ceil)};
    tsl_te_program *prog = NULL;
    if (tsl_op_instantiate(pools[i].op, 1, shapes, ndims, pools[i].k ? 4 : 0, p, &prog) != TSL_OK) {
      printf("\n  %s: %s\n", pools[i].op, tsl_last_error());
      failed++;
    } else {
      failed += lower_sample(ops_template(pools[i].op, NULL), prog, 25);
    }
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
  CU_ASSERT_EQUAL(failed, 0);
}

/* The tile knob lists only tiles within the registers: on this target no candidate
 * needs more accumulators than vector registers, and the default is a candidate. */
static void test_tile_knob_holds_only_fitting_tiles(void) {
  conv_case c = {1, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false};
  static const tsl_conv2d_algo algos[] = {TSL_CONV2D_DIRECT, TSL_CONV2D_DEPTHWISE};
  for (int a = 0; a < 2; a++) {
    conv_case cc = c;
    if (algos[a] == TSL_CONV2D_DEPTHWISE) cc.groups = cc.C;
    tsl_conv2d_desc d = conv_case_desc(&cc, ops_lanes());
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    tsl_te_program *conv = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, algos[a], ops_target(), &conv, NULL), TSL_OK);
    const tsl_template *tpl = tsl_conv2d_algo_template(conv);
    tsl_config_space space;
    tsl_config def;
    CU_ASSERT_EQUAL_FATAL(tpl->space(conv, ops_target(), &space), TSL_OK);
    CU_ASSERT_EQUAL(tpl->default_config(conv, ops_target(), &space, &def), TSL_OK);
    CU_ASSERT_EQUAL(tsl_config_check(&space, &def), TSL_OK);
    int t = tsl_space_knob_index(&space, "tile");
    CU_ASSERT_FATAL(t >= 0);
    CU_ASSERT(tsl_space_knob_index(&space, "ow_block") < 0);
    int regs = ops_target()->vector_bits >= 512 || ops_target()->arch == TSL_ARCH_AARCH64 ? 32 : 16;
    CU_ASSERT(space.knobs[t].nvalues >= 8);
    for (int i = 0; i < space.knobs[t].nvalues; i++) {
      int64_t v = space.knobs[t].values[i], ow = v % 100, oh = v / 100 % 100, oc = v / 10000;
      CU_ASSERT(ow >= 1 && oh >= 1 && oc >= 1);
      CU_ASSERT(ow * oh * oc < regs);
    }
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
}

/* Random points with any tile, every algorithm, against the reference. */
static void test_random_points_with_any_tile_match_reference(void) {
  static const struct {
    conv_case c;
    tsl_conv2d_algo a;
  } layers[] = {
      {{1, 13, 11, 10, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 6, true}, TSL_CONV2D_DIRECT},
      {{2, 9, 6, 5, 17, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, true}, TSL_CONV2D_GEMM_1X1},
      {{1, 3, 13, 12, 10, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 0, 6, true}, TSL_CONV2D_IM2COL},
      {{1, 21, 13, 11, 21, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 21, 2, 0, 6, true}, TSL_CONV2D_DEPTHWISE},
      {{1, 3, 13, 11, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, true}, TSL_CONV2D_GROUPED},
  };
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
    conv_check_opts o;
    memset(&o, 0, sizeof o);
    o.nrandom = 3;
    o.max_tile = INT64_MAX;
    o.seed = 3000 + i;
    CU_ASSERT(conv_check(&layers[i].c, layers[i].a, &o));
  }
}

void ops_tests_spaces(CU_pSuite s) {
  CU_add_test(s, "test_every_sampled_point_of_every_space_lowers", test_every_sampled_point_of_every_space_lowers);
  CU_add_test(s, "test_tile_knob_holds_only_fitting_tiles", test_tile_knob_holds_only_fitting_tiles);
  CU_add_test(s, "test_random_points_with_any_tile_match_reference", test_random_points_with_any_tile_match_reference);
}
