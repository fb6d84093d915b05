/* Squeeze-excitation's gate as one kernel (models/passes/squeeze_excite.h, ops/nn/
 * squeeze_excite.c): SE blocks built here (GlobalAveragePool or ReduceMean over H, W ->
 * Conv 1x1 -> hidden function -> Conv 1x1 -> gate -> Mul with the block's activations)
 * at channel counts that do and do not fill a block of 8 or 16 lanes, squeeze ratios 1/4
 * and 4 (an expanding "squeeze"), N = 1 and 2, hidden Relu / Clip / SiLU (x * Sigmoid(x))
 * / HardSwish / none, gate Sigmoid / HardSigmoid / none; compiled at the host's lanes and
 * run against the reference executor on the same graph. The plan has one squeeze_excite
 * step per block and no global pool step where the pattern matched; a pooled vector that
 * is also a graph output, and a gate above TSL_SQUEEZE_EXCITE_MAX_WEIGHTS, keep the three
 * kernels. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/parser.h"
#include "graph_tests.h"
#include "graph_util.h"
#include "ir/arena.h"
#include "models/passes/squeeze_excite.h"
#include "ops/nn/default_schedule.h"
#include "ops/op_call.h"
#include "schedule/schedule.h"
#include "tessel/plan.h"
#include "tessel/runtime.h"
#include "target/target.h"

static int node1(tsl_graph *g, tsl_op op, int x) { return gt_add_node(g, op, 1, &x, NULL); }

/* Activation node `fn` on x (HardSigmoid at MobileNetV3's 1/6, 1/2); its value. */
static int activation(tsl_graph *g, int x, const char *fn) {
  int node, y = gt_add_node(g, TSL_OP_ACTIVATION, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", fn), TSL_OK);
  if (strcmp(fn, "HardSigmoid") == 0) {
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "alpha", 1.0 / 6.0), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "beta", 0.5), TSL_OK);
  }
  return y;
}

static int mul(tsl_graph *g, int a, int b) {
  int ins[2] = {a, b};
  return gt_add_node(g, TSL_OP_MUL, 2, ins, NULL);
}

/* `hidden` on x: "Relu", "Clip" (0, 6), "SiLU" (written x * Sigmoid(x)), a table function,
 * or "" (none). */
static int hidden_fn(tsl_graph *g, int x, const char *hidden) {
  if (!hidden[0]) return x;
  if (strcmp(hidden, "Relu") == 0) return node1(g, TSL_OP_RELU, x);
  if (strcmp(hidden, "SiLU") == 0) return mul(g, x, activation(g, x, "Sigmoid"));
  if (strcmp(hidden, "Clip") == 0) {
    int node, y = gt_add_node(g, TSL_OP_CLIP, 1, &x, &node);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "min", 0.0), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "max", 6.0), TSL_OK);
    return y;
  }
  return activation(g, x, hidden);
}

/* The gate of x (C channels, squeeze S): pool (ReduceMean over 2, 3 with `reduce_mean`)
 * -> conv -> hidden -> conv -> gate ("" none); its value. */
static int se_gate(tsl_graph *g, int x, int64_t C, int64_t S, bool reduce_mean, const char *hidden, const char *gate,
                   uint64_t seed) {
  int pn, p = gt_add_node(g, reduce_mean ? TSL_OP_REDUCE_MEAN : TSL_OP_GLOBAL_AVERAGE_POOL, 1, &x, &pn);
  if (reduce_mean) {
    int64_t axes[2] = {2, 3};
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, pn, "axes", 2, axes), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, pn, "keepdims", 1), TSL_OK);
  }
  int h = hidden_fn(g, gt_add_conv1x1(g, p, C, S, seed), hidden);
  int s = gt_add_conv1x1(g, h, S, C, seed + 2);
  return gate[0] ? activation(g, s, gate) : s;
}

/* Compiles g: the plan's squeeze_excite and global pool steps. */
static void count_steps(const tsl_graph *g, int *se, int *pools) {
  tsl_graph_plan *plan = NULL;
  *se = *pools = -1;
  tsl_status st = tsl_graph_compile(g, NULL, &plan, NULL);
  if (st != TSL_OK) printf("\n  compile: %s", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  *se = *pools = 0;
  for (int i = 0; i < tsl_graph_plan_num_steps(plan); i++) {
    const char *name = tsl_kernel_name(tsl_graph_plan_step_kernel(plan, i));
    *se += strstr(name, "squeeze_excite") != NULL;
    *pools += strstr(name, "global_avgpool") != NULL;
  }
  tsl_graph_plan_free(plan);
}

typedef struct se_case {
  int64_t n, c, s, h, w;
  bool reduce_mean;
  const char *hidden, *gate;
} se_case;

/* x -> conv 1x1 + Relu (a blocked image) -> SE block; outputs Mul(a, gate) and, with
 * `pooled_out`, the pooled vector too (then the block is not fused). */
static void run_case(const se_case *k, bool pooled_out, uint64_t seed) {
  tsl_graph *g;
  int x;
  int64_t shape[4] = {k->n, k->c, k->h, k->w};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("se", &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, shape, &x), TSL_OK);
  int a = node1(g, TSL_OP_RELU, gt_add_conv1x1(g, x, k->c, k->c, seed));
  int gate = se_gate(g, a, k->c, k->s, k->reduce_mean, k->hidden, k->gate, seed + 10);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, mul(g, a, gate)), TSL_OK);
  if (pooled_out) {
    /* the pool's output value: the first conv of the gate reads it */
    int p = -1;
    for (int n = 0; n < g->n_nodes; n++)
      if (g->nodes[n].op == TSL_OP_GLOBAL_AVERAGE_POOL || g->nodes[n].op == TSL_OP_REDUCE_MEAN) p = g->nodes[n].outputs[0];
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, p), TSL_OK);
  }
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  int se, pools;
  count_steps(g, &se, &pools);
  char what[160];
  snprintf(what, sizeof what, "SE N=%lld C=%lld S=%lld %lldx%lld %s hidden '%s' gate '%s'%s", (long long)k->n,
           (long long)k->c, (long long)k->s, (long long)k->h, (long long)k->w, k->reduce_mean ? "ReduceMean" : "GAP",
           k->hidden, k->gate, pooled_out ? ", pooled also an output" : "");
  bool fused = !pooled_out && k->c * k->s <= TSL_SQUEEZE_EXCITE_MAX_WEIGHTS;
  if (se != (fused ? 1 : 0) || pools != (fused ? 0 : 1))
    printf("\n  %s: %d squeeze_excite steps, %d pool steps", what, se, pools);
  CU_ASSERT_EQUAL(se, fused ? 1 : 0);
  CU_ASSERT_EQUAL(pools, fused ? 0 : 1);
  float *in = gt_random(k->n * k->c * k->h * k->w, seed + 20, -2.0, 2.0);
  const float *ins[1] = {in};
  CU_ASSERT(gt_check_vs_reference(g, what, ins, 1e-5) >= 0);
  free(in);
  tsl_graph_free(g);
}

static const se_case cases[] = {
    {1, 19, 5, 6, 7, false, "Relu", "HardSigmoid"},   /* C fills no block */
    {2, 19, 5, 6, 7, false, "SiLU", "Sigmoid"},       /* N = 2 */
    {1, 32, 8, 7, 7, false, "HardSwish", "Sigmoid"},  /* C a multiple of 8 and 16, ratio 1/4 */
    {2, 24, 96, 5, 5, false, "Relu", "Sigmoid"},      /* an expanding squeeze (4x), C = 24 */
    {1, 40, 10, 3, 9, true, "Clip", "HardSigmoid"},   /* ReduceMean, Clip, C = 40 */
    {2, 13, 3, 4, 4, false, "", ""},                  /* no functions at all */
    {1, 72, 18, 1, 1, false, "Relu", "HardSigmoid"},  /* a 1 x 1 image */
    /* work above the parallel split (ops/nn/default_schedule.c, 4 parts): the pooled
     * sums over 28 x 28 with 3 (16 lanes) or 5 (8 lanes) channel blocks, fewer blocks
     * than parts or a tail; both layers' sums with 240 hidden units and 5 or 10 blocks */
    {2, 40, 10, 28, 28, false, "Relu", "HardSigmoid"},
    {1, 80, 240, 2, 2, false, "SiLU", "Sigmoid"},
};

static void test_se_blocks_are_one_kernel(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], false, 100 + 10 * i);
}

static void test_pooled_output_keeps_the_kernels(void) { run_case(&cases[0], true, 300); }

/* C * S above TSL_SQUEEZE_EXCITE_MAX_WEIGHTS: pool and two convs stay. */
static void test_large_gate_keeps_the_kernels(void) {
  const se_case big = {1, 300, 240, 2, 2, false, "Relu", "HardSigmoid"};
  CU_ASSERT_FATAL(big.c * big.s > TSL_SQUEEZE_EXCITE_MAX_WEIGHTS);
  run_case(&big, false, 400);
}

/* The gate kernel of an N x C x rows image (squeeze S, no functions) at the host's lanes,
 * scheduled by the default schedule (as the graph compiler does): checks that no split
 * for the threads has an empty part (ceil(extent / parts) * (parts - 1) < extent) and
 * returns the largest parallel loop over the pooled sums (stage acc or its rfactor
 * stage acc.rf; 0 when they run serially). */
static int64_t pooled_sum_parallel_extent(int64_t n, int64_t c, int64_t s, int64_t rows) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  int64_t x = tsl_target_f32_lanes(&t), cb = (c + x - 1) / x;
  tsl_op_call call;
  memset(&call, 0, sizeof call);
  const int64_t shapes[6][4] = {{n, c, rows, 1}, {cb, s, x}, {1, s, 1}, {s, cb, x}, {1, cb, x}, {n, c, 1, 1}};
  const int nd[6] = {4, 3, 3, 3, 3, 4};
  call.nargs = 6;
  call.ninputs = 5;
  for (int a = 0; a < 6; a++) {
    call.args[a].ndim = nd[a];
    memcpy(call.args[a].shape, shapes[a], sizeof shapes[a]);
    call.args[a].block = nd[a] == 4 ? (int)x : 0;
  }
  tsl_op_text text;
  CU_ASSERT_EQUAL_FATAL(tsl_op_generate("squeeze_excite", &call, &text), TSL_OK);
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  tsl_dsl_module *mod = NULL;
  tsl_te_program *p = NULL;
  tsl_schedule *sch = NULL;
  const int64_t *views[6];
  for (int a = 0; a < 6; a++) views[a] = text.views[a];
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(text.text.s, "generated", &mod), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(tsl_dsl_module_find(mod, "k"), 5, views, text.ndims, 0, NULL, &p), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_default_schedule(p, &t, &sch), TSL_OK);
  int64_t pooled = 0;
  for (int i = 0; i < sch->nstages; i++) {
    const tsl_stage *st = sch->stages[i];
    for (int r = 0; r < st->nrels; r++) {
      const tsl_iter_relation *rel = &st->rels[r];
      if (rel->kind != TSL_REL_SPLIT || rel->nparts < 1) continue;
      int64_t e = st->iters[rel->parent].extent, per = (e + rel->nparts - 1) / rel->nparts;
      if (per * (rel->nparts - 1) >= e)
        printf("\n  stage %s: %lld iterations of %s in %lld parts leave a part empty", st->name, (long long)e,
               st->iters[rel->parent].name, (long long)rel->nparts);
      CU_ASSERT(per * (rel->nparts - 1) < e);
    }
    if (strcmp(st->name, "acc") != 0 && strcmp(st->name, "acc.rf") != 0) continue;
    for (int l = 0; l < st->nleaf; l++)
      if (st->iters[st->leaf[l]].annotation == TSL_FOR_PARALLEL && st->iters[st->leaf[l]].extent > pooled)
        pooled = st->iters[st->leaf[l]].extent;
  }
  tsl_schedule_free(sch);
  tsl_dsl_module_free(mod);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
  free(text.text.s);
  return pooled;
}

/* Fewer channel blocks than parallel parts (1 to 3 blocks at 8 or 16 lanes, one image):
 * no split for the threads leaves a part empty, the pooled sums run in at most the blocks'
 * parts times the images (they are not split over the rows: that measured 30x slower at 2
 * threads, ops/nn/default_schedule.c), and the gate computes what the reference does at 2
 * threads. */
static void test_few_blocks_leave_no_part_empty_at_2_threads(void) {
  const se_case few[] = {
      {1, 19, 5, 28, 28, false, "Relu", "HardSigmoid"}, /* 2 or 3 blocks */
      {1, 8, 4, 48, 48, false, "SiLU", "Sigmoid"},      /* 1 block */
      {2, 40, 10, 17, 13, false, "Relu", "Sigmoid"},    /* 3 or 5 blocks, rows not a multiple of the parts */
  };
  int prev = tsl_get_num_threads();
  tsl_set_num_threads(2);
  for (size_t i = 0; i < sizeof few / sizeof few[0]; i++) {
    const se_case *k = &few[i];
    int64_t rows = k->h * k->w, lanes = 0;
    tsl_target t;
    if (tsl_target_parse("host", &t) == TSL_OK) lanes = tsl_target_f32_lanes(&t);
    int64_t blocks = lanes > 0 ? (k->c + lanes - 1) / lanes : 0;
    int64_t par = pooled_sum_parallel_extent(k->n, k->c, k->s, rows);
    /* at most one part per block and image (0: serial) */
    if (blocks < 4 && par > blocks * k->n)
      printf("\n  case %zu (%lld blocks): pooled sums in %lld parallel parts", i, (long long)blocks, (long long)par);
    if (blocks < 4) CU_ASSERT(par <= blocks * k->n);
    run_case(k, false, 500 + 10 * i);
  }
  tsl_set_num_threads(prev);
}

void tsl_tests_graph_squeeze_excite(void) {
  CU_pSuite s = CU_add_suite("graph_squeeze_excite", NULL, NULL);
  CU_add_test(s, "se_blocks_are_one_kernel", test_se_blocks_are_one_kernel);
  CU_add_test(s, "pooled_output_keeps_the_kernels", test_pooled_output_keeps_the_kernels);
  CU_add_test(s, "large_gate_keeps_the_kernels", test_large_gate_keeps_the_kernels);
  CU_add_test(s, "few_blocks_leave_no_part_empty_at_2_threads", test_few_blocks_leave_no_part_empty_at_2_threads);
}
