/* Pooling windows against padding (cases class 6 and 10): every MaxPool / AveragePool
 * whose windows all hold an input tap runs, in the plain and the blocked layout, and
 * equals a naive pooling written here; one with a window entirely in padding (no max,
 * no average over the input) is refused naming it. Padding larger than the kernel with
 * a dilation (k = 2, dilation 3, pads t2 l1 b0 r1 on 6x6) is valid ONNX and must run. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/compile.h"
#include "target/target.h"

typedef struct pool_case {
  bool is_max;
  int64_t C, H, W;
  int64_t k[2], stride[2], dil[2];
  int64_t pads[4]; /* top, left, bottom, right */
  bool ceil_mode, count_include_pad;
} pool_case;

/* Output extent (ONNX's formula; in ceil mode the last window starts inside the input or
 * the leading padding, as PyTorch has it); 0 when the window does not fit. */
static int64_t out_extent(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t s, int64_t d, bool ceil_mode) {
  int64_t span = d * (k - 1) + 1, room = in + pb + pe - span;
  if (room < 0) return 0;
  int64_t o = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + pb) o--;
  return o;
}

/* Brute force: does some window of the axis hold no input position? */
static bool some_window_empty(int64_t in, int64_t pb, int64_t k, int64_t s, int64_t d, int64_t out) {
  for (int64_t o = 0; o < out; o++) {
    bool any = false;
    for (int64_t j = 0; j < k; j++) {
      int64_t p = o * s - pb + j * d;
      any |= p >= 0 && p < in;
    }
    if (!any) return true;
  }
  return false;
}

/* Naive pooling of x (N = 1, NCHW) into y (C x OH x OW). */
static void naive_pool(const pool_case *c, const float *x, int64_t OH, int64_t OW, float *y) {
  for (int64_t ch = 0; ch < c->C; ch++)
    for (int64_t oy = 0; oy < OH; oy++)
      for (int64_t ox = 0; ox < OW; ox++) {
        double acc = c->is_max ? -INFINITY : 0.0;
        int64_t inside = 0, padded = 0;
        for (int64_t r = 0; r < c->k[0]; r++)
          for (int64_t q = 0; q < c->k[1]; q++) {
            int64_t iy = oy * c->stride[0] - c->pads[0] + r * c->dil[0];
            int64_t ix = ox * c->stride[1] - c->pads[1] + q * c->dil[1];
            bool in_pad = iy >= -c->pads[0] && iy < c->H + c->pads[2] && ix >= -c->pads[1] && ix < c->W + c->pads[3];
            padded += in_pad;
            if (iy < 0 || iy >= c->H || ix < 0 || ix >= c->W) continue;
            double v = x[(ch * c->H + iy) * c->W + ix];
            inside++;
            acc = c->is_max ? (v > acc ? v : acc) : acc + v;
          }
        y[(ch * OH + oy) * OW + ox] =
            (float)(c->is_max ? acc : acc / (double)(c->count_include_pad ? padded : inside));
      }
}

/* The pooling node on x, or (blocked) on a 1x1 identity conv of x, which the compiler
 * runs in NCHW[x]c together with the pooling after it. Returns the shape status. */
static tsl_status build(const pool_case *c, bool blocked, tsl_graph **out_g) {
  tsl_graph *g;
  int x, node;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("pool", &g), TSL_OK);
  int64_t s[4] = {1, c->C, c->H, c->W};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int src = x;
  if (blocked) {
    int64_t ws[4] = {c->C, c->C, 1, 1};
    tsl_tensor *w;
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 4, ws, &w), TSL_OK);
    for (int64_t i = 0; i < c->C * c->C; i++) ((float *)w->data)[i] = i % (c->C + 1) == 0 ? 1.0f : 0.0f;
    int wid;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, "identity", w, &wid), TSL_OK);
    int ins[2] = {x, wid};
    src = gt_add_node(g, TSL_OP_CONV, 2, ins, NULL);
  }
  int y = gt_add_node(g, c->is_max ? TSL_OP_MAX_POOL : TSL_OP_AVERAGE_POOL, 1, &src, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "kernel_shape", 2, c->k), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "strides", 2, c->stride), TSL_OK);
  if (c->dil[0] != 1 || c->dil[1] != 1)
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "dilations", 2, c->dil), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, c->pads), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "ceil_mode", c->ceil_mode), TSL_OK);
  if (!c->is_max)
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "count_include_pad", c->count_include_pad), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  *out_g = g;
  return tsl_graph_infer_shapes(g);
}

/* Runs or expects the refusal of case c in both layouts; returns whether it ran. */
static bool check_case(const pool_case *c) {
  int64_t OH = out_extent(c->H, c->pads[0], c->pads[2], c->k[0], c->stride[0], c->dil[0], c->ceil_mode);
  int64_t OW = out_extent(c->W, c->pads[1], c->pads[3], c->k[1], c->stride[1], c->dil[1], c->ceil_mode);
  CU_ASSERT_FATAL(OH > 0 && OW > 0);
  bool empty = some_window_empty(c->H, c->pads[0], c->k[0], c->stride[0], c->dil[0], OH) ||
               some_window_empty(c->W, c->pads[1], c->k[1], c->stride[1], c->dil[1], OW);
  bool defined = !empty || (!c->is_max && c->count_include_pad);
  char what[256];
  snprintf(what, sizeof what, "%s C%lld %lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld pads %lld,%lld,%lld,%lld%s%s",
           c->is_max ? "max" : "avg", (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->k[0],
           (long long)c->k[1], (long long)c->stride[0], (long long)c->stride[1], (long long)c->dil[0],
           (long long)c->dil[1], (long long)c->pads[0], (long long)c->pads[1], (long long)c->pads[2],
           (long long)c->pads[3], c->ceil_mode ? " ceil" : "", c->count_include_pad ? " cip" : "");
  int64_t n = c->C * c->H * c->W, m = c->C * OH * OW;
  float *x = malloc((size_t)n * sizeof *x), *want = malloc((size_t)m * sizeof *want);
  CU_ASSERT_FATAL(x && want);
  uint64_t r = 0x9e3779b97f4a7c15ull ^ (uint64_t)(n * 31 + m);
  for (int64_t i = 0; i < n; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    x[i] = (float)((double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  naive_pool(c, x, OH, OW, want);
  for (int blocked = 0; blocked < 2; blocked++) {
    tsl_graph *g = NULL;
    tsl_status st = build(c, blocked, &g);
    if (!defined) {
      if (st != TSL_ERR_UNSUPPORTED || !strstr(tsl_last_error(), "entirely in padding"))
        printf("\n  %s: not refused (%s)", what, st == TSL_OK ? "shapes inferred" : tsl_last_error());
      CU_ASSERT_EQUAL(st, TSL_ERR_UNSUPPORTED);
      CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "entirely in padding"));
      tsl_graph_free(g);
      continue;
    }
    if (st != TSL_OK) printf("\n  %s: %s", what, tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    int yv = g->outputs[0];
    CU_ASSERT_EQUAL(g->values[yv].shape[2], OH);
    CU_ASSERT_EQUAL(g->values[yv].shape[3], OW);
    const float *ip[1] = {x};
    float *out[1] = {NULL};
    st = gt_compile_run(g, NULL, ip, out, NULL, NULL);
    if (st != TSL_OK) printf("\n  %s (%s): %s", what, blocked ? "blocked" : "plain", tsl_last_error());
    CU_ASSERT_EQUAL(st, TSL_OK);
    if (out[0]) {
      double err = gt_rel_err(out[0], want, m);
      if (!(err <= 1e-6)) printf("\n  %s (%s): relative error %.3g", what, blocked ? "blocked" : "plain", err);
      CU_ASSERT(err <= 1e-6);
    }
    free(out[0]);
    tsl_graph_free(g);
  }
  free(x);
  free(want);
  return defined;
}

/* The case seen on an AVX-512 machine, its transpose, with a stride, in ceil mode, and
 * channel counts on both sides of the block. */
static void test_maxpool_dilated_with_padding_past_the_kernel_runs(void) {
  int64_t lanes = 8;
  tsl_target t;
  if (tsl_target_parse("host", &t) == TSL_OK) lanes = tsl_target_f32_lanes(&t);
  pool_case c = {true, 3, 6, 6, {2, 2}, {1, 1}, {3, 3}, {2, 1, 0, 1}, false, false};
  CU_ASSERT(check_case(&c));
  pool_case tr = {true, 3, 6, 6, {2, 2}, {1, 1}, {3, 3}, {1, 2, 1, 0}, false, false};
  CU_ASSERT(check_case(&tr));
  pool_case st = {true, lanes + 3, 7, 9, {2, 3}, {2, 2}, {3, 2}, {2, 2, 1, 3}, true, false};
  CU_ASSERT(check_case(&st));
  /* an average that counts the padding is defined even for windows in padding only */
  pool_case avg = {false, 5, 5, 6, {2, 2}, {2, 2}, {1, 1}, {2, 2, 2, 2}, false, true};
  CU_ASSERT(check_case(&avg));
}

/* Windows entirely in padding: the kernel's padding (k = 2, pad 2), a dilated window's
 * padding (pad 4 > (k - 1) * 3), an input shorter than the dilation (the only tap past
 * the padding lands past the input), and an average over the input alone. */
static void test_pool_window_entirely_in_padding_refused(void) {
  pool_case cases[] = {
      {true, 2, 6, 6, {2, 2}, {1, 1}, {1, 1}, {2, 0, 0, 0}, false, false},
      {true, 2, 6, 6, {2, 2}, {1, 1}, {3, 3}, {0, 4, 0, 0}, false, false},
      {true, 2, 2, 6, {2, 2}, {1, 1}, {3, 1}, {1, 0, 1, 0}, false, false},
      {true, 2, 6, 6, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 3}, false, false},
      {false, 2, 6, 6, {2, 2}, {2, 2}, {1, 1}, {2, 2, 2, 2}, false, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) CU_ASSERT(!check_case(&cases[i]));
}

/* The class: windows, strides, dilations, paddings on both sides and ceil mode drawn
 * at random; each runs and equals the naive pooling exactly when the brute-force check
 * finds every window holding an input tap, and is refused otherwise. */
static void test_pool_windows_random_against_naive(void) {
  uint64_t r = 12345;
  int ran = 0, refused = 0;
  for (int i = 0; i < 40; i++) {
    int64_t v[14];
    for (int k = 0; k < 14; k++) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      v[k] = (int64_t)(r % 1000);
    }
    pool_case c = {v[0] % 3 != 0, 1 + v[1] % 5, 1 + v[2] % 8, 1 + v[3] % 8, {1 + v[4] % 3, 1 + v[5] % 3},
                   {1 + v[6] % 3, 1 + v[7] % 2}, {1 + v[8] % 3, 1 + v[9] % 3}, {v[10] % 5, v[11] % 5, v[12] % 5, v[13] % 4},
                   v[12] % 2 == 1, v[13] % 3 == 0};
    if (!c.is_max) c.dil[0] = c.dil[1] = 1; /* dilated AveragePool is refused on its own */
    if (out_extent(c.H, c.pads[0], c.pads[2], c.k[0], c.stride[0], c.dil[0], c.ceil_mode) < 1 ||
        out_extent(c.W, c.pads[1], c.pads[3], c.k[1], c.stride[1], c.dil[1], c.ceil_mode) < 1)
      continue;
    if (check_case(&c)) ran++;
    else refused++;
  }
  CU_ASSERT(ran >= 5 && refused >= 3); /* both sides of the rule were drawn */
}

void tsl_tests_graph_pool_windows(void) {
  CU_pSuite s = CU_add_suite("graph_pool_windows", NULL, NULL);
  CU_add_test(s, "maxpool_dilated_with_padding_past_the_kernel_runs",
              test_maxpool_dilated_with_padding_past_the_kernel_runs);
  CU_add_test(s, "pool_window_entirely_in_padding_refused", test_pool_window_entirely_in_padding_refused);
  CU_add_test(s, "pool_windows_random_against_naive", test_pool_windows_random_against_naive);
}
