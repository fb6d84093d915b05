/* Claimed outputs (runtime/graph_executor.h tsl_graph_plan_claim_output, chosen by
 * models/plan_build.h's TSL_CLAIM_MAX_FLOPS_PER_BYTE): a compiled graph whose low-intensity
 * steps (depthwise convs, an elementwise add) get their outputs claimed computes what the
 * reference executor computes at 1, 2 and 3 threads, bit for bit what the unclaimed plan
 * computes; compute-bound steps and outputs read at 4x their size are left alone; and the
 * plan refuses a claim that could lose bytes. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/compile.h"
#include "runtime/graph_executor.h"
#include "tessel/runtime.h"

static int relu6(tsl_graph *g, int x) {
  int node, y = gt_add_node(g, TSL_OP_CLIP, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "min", 0.0), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "max", 6.0), TSL_OK);
  return y;
}

/* x (1 x 32 x 17 x 17) -> 1x1 conv to 48 (16 FLOP per output byte: not claimed) ->
 * depthwise 3x3 + ReLU6 (claimed) -> + the 1x1's output (claimed: an elementwise add)
 * -> depthwise 3x3 stride 2 (reads 4x its output: not claimed) -> 1x1 conv to 32 (not
 * claimed) -> output. The expand conv has two readers (the depthwise and the add), so
 * it stays unfused. */
static tsl_graph *claim_graph(void) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("claim", &g), TSL_OK);
  int64_t s[4] = {1, 32, 17, 17};
  int x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int e = gt_add_conv(g, x, 32, 48, 1, 1, 1, 31);
  int d = relu6(g, gt_add_conv(g, e, 48, 48, 3, 1, 48, 37));
  int sum_in[2] = {d, e};
  int a = gt_add_node(g, TSL_OP_ADD, 2, sum_in, NULL);
  int d2 = gt_add_conv(g, a, 48, 48, 3, 2, 48, 41);
  int y = gt_add_conv(g, d2, 48, 32, 1, 1, 1, 43);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  return g;
}

/* The labels of the steps other than layout transforms the compiled plan of g claims,
 * joined by ";"; *transforms: the layout transform steps (NCHW <-> NCHW[x]c copies, 0.25
 * FLOP per byte), *unclaimed_transforms: of which not claimed. */
static void claimed_steps(const tsl_graph *g, char *out, size_t n, int *transforms, int *unclaimed_transforms) {
  tsl_graph_plan *plan = NULL;
  out[0] = '\0';
  *transforms = *unclaimed_transforms = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_compile(g, NULL, &plan, NULL), TSL_OK);
  for (int s = 0; s < tsl_graph_plan_num_steps(plan); s++) {
    const char *k = tsl_kernel_name(tsl_graph_plan_step_kernel(plan, s));
    if (strncmp(k, "nchw_to_nchwc", 13) == 0 || strncmp(k, "nchwc_to_nchw", 13) == 0) {
      (*transforms)++;
      *unclaimed_transforms += !tsl_graph_plan_step_claims(plan, s);
    } else if (tsl_graph_plan_step_claims(plan, s)) {
      size_t used = strlen(out);
      snprintf(out + used, n - used, "%s;", tsl_graph_plan_step_label(plan, s));
    }
  }
  tsl_graph_plan_free(plan);
}

static void test_claimed_outputs_match_reference_at_1_2_3_threads(void) {
  tsl_graph *g = claim_graph();
  char which[1024];
  int transforms, unclaimed_transforms;
  claimed_steps(g, which, sizeof which, &transforms, &unclaimed_transforms);
  /* one conv (the stride-1 depthwise: Conv_1), the add, and every layout transform (the
   * output's, and at 8 lanes the input's) */
  CU_ASSERT(transforms >= 1);
  CU_ASSERT_EQUAL(unclaimed_transforms, 0);
  int convs = 0, steps = 0;
  for (const char *c = which; *c; c++) {
    convs += *c == '[';
    steps += *c == ';';
  }
  if (convs != 1 || steps != 2 || !strstr(which, "Conv_1 [depthwise") || !strstr(which, "Add_3"))
    printf("\n  claimed: %s", which);
  CU_ASSERT_EQUAL(convs, 1);
  CU_ASSERT_EQUAL(steps, 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(which, "Conv_1 [depthwise"));
  CU_ASSERT_PTR_NOT_NULL(strstr(which, "Add_3"));
  int64_t n = gt_numel(g, g->inputs[0]), m = gt_numel(g, g->outputs[0]);
  float *x = gt_random(n, 47, -1.5, 1.5);
  const float *ins[1] = {x};
  float *want[1] = {NULL};
  CU_ASSERT_EQUAL_FATAL(gt_reference_run(g, ins, want), TSL_OK);
  int prev = tsl_get_num_threads();
  float *plain = NULL;
  for (int threads = 1; threads <= 3; threads++) {
    CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(threads), TSL_OK);
    for (int claim = 0; claim <= 1; claim++) {
      tsl_compile_options o = {0};
      o.no_claim_outputs = !claim;
      tsl_compile_stats st = {0};
      float *got[1] = {NULL};
      CU_ASSERT_EQUAL_FATAL(gt_compile_run(g, &o, ins, got, &st, NULL), TSL_OK);
      double err = gt_rel_err(got[0], want[0], m);
      if (!(err <= 1e-5)) printf("\n  %d threads, claim %d: relative error %g", threads, claim, err);
      CU_ASSERT(err <= 1e-5);
      CU_ASSERT_EQUAL(st.claimed_outputs, claim ? 2 + transforms : 0);
      if (!plain) plain = got[0];
      else {
        CU_ASSERT_EQUAL(memcmp(plain, got[0], (size_t)m * sizeof(float)), 0);
        free(got[0]);
      }
    }
  }
  CU_ASSERT_EQUAL(tsl_set_num_threads(prev), TSL_OK);
  free(plain);
  free(want[0]);
  free(x);
  tsl_graph_free(g);
}

#define ADD_N 1024
#define ADD_BYTES (ADD_N * 4)

/* The "add" kernel of a module for tensors of `shape`, the module given to p. */
static const tsl_kernel *add_kernel_of(tsl_graph_plan *p, const int64_t shape[4]) {
  tsl_module *mod = gt_add_module(shape);
  CU_ASSERT_PTR_NOT_NULL_FATAL(mod);
  const tsl_kernel *k;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(mod, "add", &k), TSL_OK);
  tsl_graph_plan_set_module(p, mod);
  return k;
}

static const tsl_kernel *add_kernel(tsl_graph_plan *p) {
  const int64_t shape[4] = {1, 4, 16, 16};
  return add_kernel_of(p, shape);
}

/* y = x + x and t = y + x, both outputs claimed, and a probe p = x + z whose input z
 * (no step writes it) is claimed too, on tensors of 1 x 3 x 41 x 43 (21156 bytes: three
 * uneven pieces at 3 threads), each buffer between canaries. At 1, 2 and 3 threads, two
 * runs each, the inputs set once and the outputs filled with NaN before each run: y and
 * t are those of plain C; p is x where a claim ran (2 and 3 threads under
 * TSL_CLAIMS_ALWAYS: z zeroed) and NaN at 1 thread (no claims); x and the canaries are
 * untouched. */
static void test_claimed_plan_steps_compute_their_outputs(void) {
  const int64_t shape[4] = {1, 3, 41, 43};
  const int64_t n = 3 * 41 * 43, bytes = n * 4, slot = (bytes + 63) / 64 * 64;
  tsl_graph_plan *p;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_new(&p), TSL_OK);
  const tsl_kernel *k = add_kernel_of(p, shape);
  /* x c0 y c1 z c2 t c3 pr: buffers 0..8 at slots 0..8 */
  int b[9];
  for (int i = 0; i < 9; i++) CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, i * slot, bytes, &b[i]), TSL_OK);
  int bx = b[0], by = b[2], bz = b[4], bt = b[6], bp = b[8];
  int step_y[3] = {bx, bx, by}, step_t[3] = {by, bx, bt}, step_p[3] = {bx, bz, bp};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_step(p, k, "y", 3, step_y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_step(p, k, "t", 3, step_t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_step(p, k, "p", 3, step_p), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 0, 2), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 1, 2), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 2, 1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_input(p, "x", bx, TSL_DTYPE_F32, 4, shape), TSL_OK);
  const char *names[9] = {"x", "c0", "y", "c1", "z", "c2", "t", "c3", "p"};
  for (int i = 1; i < 9; i++) CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_output(p, names[i], b[i], TSL_DTYPE_F32, 4, shape), TSL_OK);
  for (int threads = 1; threads <= 3; threads++) {
    tsl_graph_ctx *ctx;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(p, &ctx), TSL_OK);
    CU_ASSERT_EQUAL(tsl_graph_ctx_set_num_threads(ctx, threads), TSL_OK);
    CU_ASSERT_EQUAL(tsl_graph_ctx_set_claims(ctx, TSL_CLAIMS_ALWAYS), TSL_OK);
    float *v[9];
    v[0] = tsl_graph_ctx_input(ctx, 0);
    for (int i = 1; i < 9; i++) v[i] = (float *)tsl_graph_ctx_output(ctx, i - 1);
    for (int64_t i = 0; i < n; i++) {
      v[0][i] = (float)(i % 97) * 0.25f - 7.0f;
      v[1][i] = v[3][i] = v[5][i] = v[7][i] = 12345.0f;
    }
    for (int run = 0; run < 2; run++) {
      for (int64_t i = 0; i < n; i++) v[2][i] = v[4][i] = v[6][i] = v[8][i] = NAN;
      CU_ASSERT_EQUAL_FATAL(tsl_graph_run(ctx, NULL), TSL_OK);
      int bad_y = 0, bad_p = 0, bad_kept = 0;
      for (int64_t i = 0; i < n; i++) {
        float xi = (float)(i % 97) * 0.25f - 7.0f;
        bad_y += v[2][i] != xi + xi || v[6][i] != (xi + xi) + xi;
        bad_p += threads > 1 ? v[8][i] != xi : !isnan(v[8][i]);
        bad_kept += v[0][i] != xi || v[1][i] != 12345.0f || v[3][i] != 12345.0f || v[5][i] != 12345.0f ||
                    v[7][i] != 12345.0f;
      }
      if (bad_y || bad_p || bad_kept)
        printf("\n  %d threads, run %d: %d wrong y/t, %d wrong p, %d changed x/canaries", threads, run, bad_y, bad_p,
               bad_kept);
      CU_ASSERT_EQUAL(bad_y, 0);
      CU_ASSERT_EQUAL(bad_p, 0);
      CU_ASSERT_EQUAL(bad_kept, 0);
    }
    tsl_graph_ctx_free(ctx);
  }
  tsl_graph_plan_free(p);
}

/* A probe p = x + z with z claimed (no step writes z; z and p are outputs, so the test
 * can set z to NaN before each run): p is x after a run that claimed (z zeroed) and NaN
 * after one that did not. Under TSL_CLAIMS_AUTO at 2 threads the first runs follow the
 * trial's ABBA order and every later run does what tsl_graph_ctx_claims_next said before
 * it (also in a new context, whose default is TSL_CLAIMS_AUTO); TSL_CLAIMS_NEVER never
 * claims, TSL_CLAIMS_ALWAYS always, and at 1 thread nothing claims in any mode. A mode
 * not listed is refused. */
static void test_claims_mode_chooses_which_runs_claim(void) {
  const int64_t shape[4] = {1, 3, 41, 43};
  const int64_t n = 3 * 41 * 43, bytes = n * 4, slot = (bytes + 63) / 64 * 64;
  tsl_graph_plan *p;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_new(&p), TSL_OK);
  const tsl_kernel *k = add_kernel_of(p, shape);
  int bx, bz, bp;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, 0, bytes, &bx), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, slot, bytes, &bz), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, 2 * slot, bytes, &bp), TSL_OK);
  int step_p[3] = {bx, bz, bp};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_step(p, k, "p", 3, step_p), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_claim_output(p, 0, 1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_input(p, "x", bx, TSL_DTYPE_F32, 4, shape), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_output(p, "z", bz, TSL_DTYPE_F32, 4, shape), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_output(p, "p", bp, TSL_DTYPE_F32, 4, shape), TSL_OK);
  static const bool trial[8] = {true, false, false, true, true, false, false, true};
  /* the last: a new context's default, not set */
  const tsl_claims_mode modes[4] = {TSL_CLAIMS_AUTO, TSL_CLAIMS_NEVER, TSL_CLAIMS_ALWAYS, TSL_CLAIMS_AUTO};
  for (int threads = 1; threads <= 2; threads++)
    for (int mi = 0; mi < 4; mi++) {
      tsl_graph_ctx *ctx;
      CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(p, &ctx), TSL_OK);
      CU_ASSERT_EQUAL(tsl_graph_ctx_set_num_threads(ctx, threads), TSL_OK);
      if (mi < 3) CU_ASSERT_EQUAL(tsl_graph_ctx_set_claims(ctx, modes[mi]), TSL_OK);
      float *x = tsl_graph_ctx_input(ctx, 0), *z = (float *)tsl_graph_ctx_output(ctx, 0);
      const float *pr = tsl_graph_ctx_output(ctx, 1);
      for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 89) - 44.0f;
      int wrong = 0;
      for (int run = 0; run < 80; run++) {
        bool said = tsl_graph_ctx_claims_next(ctx), want;
        /* AUTO keeps nothing until its trial's 8 runs of 2 threads (none at 1 thread) */
        int kept = tsl_graph_ctx_claims_kept(ctx);
        bool kept_ok = modes[mi] != TSL_CLAIMS_AUTO ? kept == (modes[mi] == TSL_CLAIMS_ALWAYS)
                       : threads == 1 || run < 8     ? kept == -1
                                                     : kept == 0 || kept == 1;
        CU_ASSERT(kept_ok);
        if (threads == 1 || modes[mi] == TSL_CLAIMS_NEVER) want = false;
        else if (modes[mi] == TSL_CLAIMS_ALWAYS) want = true;
        else want = run < 8 ? trial[run] : said;
        for (int64_t i = 0; i < n; i++) z[i] = NAN;
        CU_ASSERT_EQUAL_FATAL(tsl_graph_run(ctx, NULL), TSL_OK);
        int bad = 0;
        for (int64_t i = 0; i < n; i++) bad += want ? pr[i] != x[i] : !isnan(pr[i]);
        if (bad && wrong++ == 0)
          printf("\n  %d threads, mode %d, run %d: %s claimed by the probe", threads, (int)modes[mi], run,
                 want ? "not" : "");
        CU_ASSERT_EQUAL(bad, 0);
      }
      tsl_graph_ctx_free(ctx);
    }
  tsl_graph_ctx *ctx;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(p, &ctx), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_ctx_set_claims(ctx, (tsl_claims_mode)7), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "mode 7"));
  CU_ASSERT_EQUAL(tsl_graph_ctx_set_claims(NULL, TSL_CLAIMS_AUTO), TSL_ERR_INVALID);
  CU_ASSERT_FALSE(tsl_graph_ctx_claims_next(NULL));
  tsl_graph_ctx_free(ctx);
  tsl_graph_plan_free(p);
}

/* Every claim that could lose bytes is refused, naming why: a bad step or argument, a
 * view, a constant, a buffer with views (and a view added after the claim), an output
 * overlapping another argument of its step (also through a view of a view), a graph
 * input (claimed, or declared after the claim), a buffer an earlier step passes. */
static void test_plan_refuses_claims_that_could_lose_bytes(void) {
  tsl_graph_plan *p;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_new(&p), TSL_OK);
  const tsl_kernel *k = add_kernel(p);
  int64_t s1 = ADD_N;
  tsl_tensor *c;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &s1, &c), TSL_OK);
  int bx, by, bc, bw, bview, bover;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_constant(p, c, &bc), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, 0, ADD_BYTES, &bx), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, ADD_BYTES, ADD_BYTES, &by), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, 2 * ADD_BYTES, 2 * ADD_BYTES, &bw), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_view(p, bw, ADD_BYTES, ADD_BYTES, &bview), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, ADD_BYTES / 2, ADD_BYTES, &bover), TSL_OK);
  int steps[6][3] = {{bx, bx, by}, {bx, bx, bview}, {bx, bx, bc}, {bx, bx, bw}, {bx, bx, bover}, {by, by, bx}};
  const char *labels[6] = {"y", "view", "const", "whole", "over", "in"};
  for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_step(p, k, labels[i], 3, steps[i]), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 7, 2), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, -1, 2), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 0, 3), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 0, -1), TSL_ERR_INVALID);
  const char *why[6] = {NULL, "view", "constant", "has views", "overlaps", "graph input x"};
  const int64_t shape[4] = {1, 4, 16, 16};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_input(p, "x", bx, TSL_DTYPE_F32, 4, shape), TSL_OK);
  for (int i = 1; i < 6; i++) {
    CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, i, 2), TSL_ERR_INVALID);
    const char *msg = tsl_last_error();
    if (!strstr(msg, why[i])) printf("\n  step %s: '%s' does not say '%s'", labels[i], msg, why[i]);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, why[i]));
  }
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 0, 0), TSL_ERR_INVALID); /* x: also its argument 1 */
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 0, 2), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_plan_add_input(p, "y", by, TSL_DTYPE_F32, 4, shape), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "claimed output of step y"));
  int bad;
  CU_ASSERT_EQUAL(tsl_graph_plan_add_view(p, by, 0, 64, &bad), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "claimed output of step y"));
  /* y's buffer again, in a later step: written before it */
  int later[3] = {bx, bx, by};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_step(p, k, "later", 3, later), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 6, 2), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "earlier step y"));
  /* an activation overlapping a view of a view (of w) its step reads */
  int bvv, bq;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_view(p, bview, 0, ADD_BYTES, &bvv), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, 3 * ADD_BYTES, ADD_BYTES, &bq), TSL_OK);
  int vv[3] = {bvv, bx, bq};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_step(p, k, "vv", 3, vv), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_plan_claim_output(p, 7, 2), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "overlaps its argument 0"));
  tsl_graph_plan_free(p);
}

void tsl_tests_graph_claim(void) {
  CU_pSuite s = CU_add_suite("graph_claim", NULL, NULL);
  CU_add_test(s, "claimed_outputs_match_reference_at_1_2_3_threads",
              test_claimed_outputs_match_reference_at_1_2_3_threads);
  CU_add_test(s, "claimed_plan_steps_compute_their_outputs", test_claimed_plan_steps_compute_their_outputs);
  CU_add_test(s, "plan_refuses_claims_that_could_lose_bytes", test_plan_refuses_claims_that_could_lose_bytes);
  CU_add_test(s, "claims_mode_chooses_which_runs_claim", test_claims_mode_chooses_which_runs_claim);
}
