/* The knob spaces of the operator library's templates (ops/<family>/): every
 * point compiles — the register tile is one knob listing only tiles that fit the
 * registers and lowering's unroll limit (conv_common.h), unroll options appear only
 * where they fit — so a sample of each space lowers without error, and random points
 * with any tile (not only the small ones the other tests use) equal the reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "ir/arena.h"
#include "ops/conv_check.h"
#include "ops/ops_util.h"
#include "schedule/lower.h"
#include "ops/conv2d/conv2d_select.h"

static uint64_t rng = 0x5bace5;
static uint64_t next(void) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Applies and lowers the default and n uniformly drawn points of tpl's space for p;
 * returns how many failed (printing each). */
static int lower_sample_for(const tsl_template *tpl, const tsl_te_program *p, const tsl_target *t, int n) {
  tsl_config_space space;
  if (tpl->space(p, t, &space) != TSL_OK) {
    printf("\n  %s: space: %s\n", tpl->name, tsl_last_error());
    return 1;
  }
  tsl_lower_options lo = tsl_lower_options_default();
  lo.vector_bits = t->vector_bits;
  int failed = 0;
  for (int i = -1; i < n; i++) {
    tsl_config c;
    if (i < 0) {
      if (tpl->default_config(p, t, &space, &c) != TSL_OK || tsl_config_check(&space, &c) != TSL_OK) {
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
    tsl_status st = tpl->apply(p, t, &space, &c, &s);
    if (st == TSL_OK) st = tsl_lower_with(s, "space_point", &lo, &f);
    if (st != TSL_OK) {
      char buf[256];
      printf("\n  %s on %s for %s, config %s: %s\n", tpl->name, p->name, t->name,
             tsl_config_str(&space, &c, buf, sizeof buf), tsl_last_error());
      failed++;
    }
    tsl_schedule_free(s);
  }
  return failed;
}

static int lower_sample(const tsl_template *tpl, const tsl_te_program *p, int n) {
  return lower_sample_for(tpl, p, ops_target(), n);
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
    tsl_conv2d_layer d = conv_case_layer(&layers[i].c, layers[i].block ? layers[i].block : ops_lanes());
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    tsl_te_program *conv = NULL;
    if (tsl_conv2d_algo_instantiate(&d, layers[i].a, ops_target(), &conv, NULL) != TSL_OK) {
      printf("\n  layer %zu: %s\n", i, tsl_last_error());
      failed++;
    } else {
      const tsl_template *tpl = tsl_conv2d_algo_template(conv);
      CU_ASSERT_PTR_NOT_NULL(tpl);
      if (tpl) failed += lower_sample(tpl, conv, tsl_conv2d_algo_is_winograd(layers[i].a, NULL) ? 6 : 25);
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
    tsl_conv2d_layer d = conv_case_layer(&cc, ops_lanes());
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
    int regs = tsl_target_vector_registers(ops_target());
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

/* Every default schedule is right at 4 (NEON), 8 (AVX2) and 16 (AVX-512) f32 lanes:
 * for each target, layers blocked at its lanes (channel counts that fill blocks or not,
 * first layers, depthwise, grouped, 1x1, 3x3 for Winograd) and pools get, from every
 * algorithm that applies, a default config that is a point of its space, whose
 * register tile fits the target's vector registers, and that applies and lowers at the
 * target's vector width (with a few random points). Nothing runs: the targets need not
 * be this machine. */
static void test_default_configs_of_every_algorithm_lower_for_every_target(void) {
  static const char *const targets[] = {"armv8", "x86-64-avx2", "x86-64-avx512"};
  static const conv_case layers[] = {
      {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false},
      {1, 24, 28, 28, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, true},
      {1, 3, 56, 56, 24, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, false},
      {1, 96, 15, 15, 96, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 96, 2, 0, 6, false},
      {1, 64, 9, 11, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, 1, 0, 0, false},
      {1, 20, 10, 9, 36, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, true},
  };
  int failed = 0, checked = 0;
  for (int ti = 0; ti < 3; ti++) {
    tsl_target t;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[ti], &t), TSL_OK);
    int64_t lanes = tsl_target_f32_lanes(&t);
    int regs = tsl_target_vector_registers(&t);
    CU_ASSERT_EQUAL(lanes, ti == 0 ? 4 : ti == 1 ? 8 : 16);
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
      for (int a = 0; a < TSL_CONV2D_ALGO_COUNT; a++) {
        tsl_conv2d_layer d = conv_case_layer(&layers[i], lanes);
        if (!tsl_conv2d_algo_applies(&d, (tsl_conv2d_algo)a, NULL)) continue;
        tsl_arena *arena = tsl_arena_new();
        tsl_arena *prev = tsl_arena_set_current(arena);
        tsl_te_program *conv = NULL;
        if (tsl_conv2d_algo_instantiate(&d, (tsl_conv2d_algo)a, &t, &conv, NULL) != TSL_OK) {
          printf("\n  %s layer %zu %s: %s\n", targets[ti], i, tsl_conv2d_algo_name((tsl_conv2d_algo)a),
                 tsl_last_error());
          failed++;
        } else {
          const tsl_template *tpl = tsl_conv2d_algo_template(conv);
          CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
          failed += lower_sample_for(tpl, conv, &t, 2);
          checked++;
          tsl_config_space space;
          tsl_config def;
          int tk = -1;
          if (tpl->space(conv, &t, &space) == TSL_OK && tpl->default_config(conv, &t, &space, &def) == TSL_OK &&
              (tk = tsl_space_knob_index(&space, "tile")) >= 0) {
            int64_t v = def.values[tk], ow = v % 100, oh = v / 100 % 100, oc = v / 10000;
            if (!(ow * oh * oc < regs))
              printf("\n  %s layer %zu %s: default tile %lldx%lldx%lld over %d registers\n", targets[ti], i,
                     tpl->name, (long long)ow, (long long)oh, (long long)oc, regs);
            CU_ASSERT(ow * oh * oc < regs);
          }
        }
        tsl_arena_set_current(prev);
        tsl_arena_free(arena);
      }
    static const char *const pools[] = {"max_pool2d_nchwc", "avg_pool2d_nchwc", "global_avg_pool2d_nchwc"};
    for (int pi = 0; pi < 3; pi++) {
      tsl_arena *arena = tsl_arena_new();
      tsl_arena *prev = tsl_arena_set_current(arena);
      int64_t shape[5] = {1, 3, 28, 27, lanes};
      const int64_t *shapes[1] = {shape};
      int ndims[1] = {5};
      tsl_dsl_param_value p[3] = {tsl_dsl_int_param("kernel_h", 3), tsl_dsl_int_param("kernel_w", 3),
                                  tsl_dsl_int_param("stride_h", 2)};
      tsl_te_program *prog = NULL;
      if (tsl_op_instantiate(pools[pi], 1, shapes, ndims, pi < 2 ? 3 : 0, p, &prog) != TSL_OK) {
        printf("\n  %s %s: %s\n", targets[ti], pools[pi], tsl_last_error());
        failed++;
      } else {
        failed += lower_sample_for(ops_template(pools[pi], NULL), prog, &t, 2);
        checked++;
      }
      tsl_arena_set_current(prev);
      tsl_arena_free(arena);
    }
  }
  CU_ASSERT(checked >= 3 * 20);
  CU_ASSERT_EQUAL(failed, 0);
}

void ops_tests_spaces(CU_pSuite s) {
  CU_add_test(s, "test_default_configs_of_every_algorithm_lower_for_every_target",
              test_default_configs_of_every_algorithm_lower_for_every_target);
  CU_add_test(s, "test_every_sampled_point_of_every_space_lowers", test_every_sampled_point_of_every_space_lowers);
  CU_add_test(s, "test_tile_knob_holds_only_fitting_tiles", test_tile_knob_holds_only_fitting_tiles);
  CU_add_test(s, "test_random_points_with_any_tile_match_reference", test_random_points_with_any_tile_match_reference);
}
