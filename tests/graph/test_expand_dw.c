/* Expand 1x1 conv -> depthwise conv chains (MobileNet's inverted residual blocks) fused
 * into one kernel at conv lowering (models/compile_expand_dw.h): the compiled graph
 * equals the reference executor's output on the unfused graph, the plan runs the pair
 * as one step, and the size rule fuses a large layer by default but not a small one. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "ir/arena.h"
#include "models/compile.h"
#include "ops/algorithm.h"
#include "tuner/records.h"
#include "tuner/tuner_util.h"

static int activation(tsl_graph *g, int x, const char *fn) {
  int node, y = gt_add_node(g, TSL_OP_ACTIVATION, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", fn), TSL_OK);
  return y;
}

/* "" none, "Relu6" (Clip 0..6), "HardSwish", "SiLU" (x * Sigmoid(x)) */
static int act(tsl_graph *g, int x, const char *fn) {
  if (!fn[0]) return x;
  if (strcmp(fn, "Relu6") == 0) {
    int node, y = gt_add_node(g, TSL_OP_CLIP, 1, &x, &node);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "min", 0.0), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "max", 6.0), TSL_OK);
    return y;
  }
  if (strcmp(fn, "SiLU") == 0) {
    int ins[2] = {x, activation(g, x, "Sigmoid")};
    return gt_add_node(g, TSL_OP_MUL, 2, ins, NULL);
  }
  return activation(g, x, fn);
}

typedef struct chain {
  int64_t N, C, H, W, E, R, stride;
  const char *act1, *act2;
} chain;

/* input (8 channels) -> 1x1 conv to C (so the expand reads blocked data) -> expand 1x1
 * to E + act1 -> depthwise RxR stride + act2 -> output. */
static tsl_graph *chain_graph(const chain *c) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("chain", &g), TSL_OK);
  int64_t s[4] = {c->N, 8, c->H, c->W};
  int x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int a = gt_add_conv(g, x, 8, c->C, 1, 1, 1, 11);
  int e = act(g, gt_add_conv(g, a, c->C, c->E, 1, 1, 1, 13), c->act1);
  int d = act(g, gt_add_conv(g, e, c->E, c->E, c->R, c->stride, c->E, 17), c->act2);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, d), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  return g;
}

/* Compiles c's graph with fusion mode `mode`; checks the output against the reference
 * and returns how many pairs were fused (-1 on a failure). */
static int run_chain(const chain *c, int mode) {
  tsl_graph *g = chain_graph(c);
  int64_t n = gt_numel(g, g->inputs[0]), m = gt_numel(g, g->outputs[0]);
  float *x = gt_random(n, 23, -1.5, 1.5);
  const float *ins[1] = {x};
  float *want[1] = {NULL}, *got[1] = {NULL};
  CU_ASSERT_EQUAL_FATAL(gt_reference_run(g, ins, want), TSL_OK);
  tsl_compile_options o = {0};
  o.fuse_expand_dw = mode;
  tsl_compile_stats st = {0};
  tsl_status s = gt_compile_run(g, &o, ins, got, &st, NULL);
  int fused = -1;
  if (s != TSL_OK) {
    printf("\n  C%lld E%lld %lldx%lld R%lld s%lld: %s\n", (long long)c->C, (long long)c->E, (long long)c->H,
           (long long)c->W, (long long)c->R, (long long)c->stride, tsl_last_error());
  } else {
    double err = gt_rel_err(got[0], want[0], m);
    if (!(err <= 1e-5))
      printf("\n  N%lld C%lld E%lld %lldx%lld R%lld s%lld %s/%s: error %g\n", (long long)c->N, (long long)c->C,
             (long long)c->E, (long long)c->H, (long long)c->W, (long long)c->R, (long long)c->stride, c->act1,
             c->act2, err);
    else fused = st.expand_dw_fused;
  }
  free(got[0]);
  free(want[0]);
  free(x);
  tsl_graph_free(g);
  return fused;
}

static const chain chains[] = {
    {1, 16, 15, 15, 96, 3, 1, "Relu6", ""},         /* MobileNetV2 (its project conv follows) */
    {1, 16, 15, 15, 96, 3, 2, "Relu6", "Relu6"},    /* stride 2 */
    {1, 19, 15, 15, 57, 3, 1, "HardSwish", "HardSwish"}, /* odd channels, MobileNetV3 */
    {2, 24, 7, 7, 72, 5, 1, "SiLU", "SiLU"},        /* N = 2, 5x5, EfficientNet */
    {1, 16, 13, 11, 40, 5, 2, "HardSwish", ""},     /* 5x5 stride 2, odd sizes */
    {2, 8, 9, 9, 24, 3, 2, "", "Relu6"},            /* no expand activation */
    {1, 19, 15, 15, 57, 3, 2, "Relu6", "HardSigmoid"}, /* act2(0) != 0 on the pad lanes past E */
};

static void test_chains_fused_match_reference(void) {
  for (size_t i = 0; i < sizeof chains / sizeof chains[0]; i++) {
    int fused = run_chain(&chains[i], 1);
    if (fused != 1) printf("\n  chain %zu: %d pairs fused\n", i, fused);
    CU_ASSERT_EQUAL(fused, 1);
  }
}

/* Mode -1 fuses nothing; the default rule (tsl_expand_dw_pays) leaves a small layer
 * unfused and fuses MobileNetV2's 112 x 112 x 96 expansion (4.8 MB expanded, past any
 * L2; 1/12 of the expand recomputed). */
static const chain big_chain = {1, 16, 112, 112, 96, 3, 2, "Relu6", "Relu6"};
/* EfficientNet's features.2.0 pair, smaller: SiLU (a Swish epilogue) after both convs,
 * the expanded tensor and the output (2205 KiB) past L2 up to 2 MiB, little recomputed */
static const chain swish_chain = {1, 16, 56, 56, 144, 3, 2, "SiLU", "SiLU"};

/* Mode 0 reads TSL_FUSE_EXPAND_DW: run without it, then restore it. */
static char *env_unset(void) {
  const char *e = getenv("TSL_FUSE_EXPAND_DW");
  char *saved = e ? strdup(e) : NULL;
  unsetenv("TSL_FUSE_EXPAND_DW");
  return saved;
}

static void env_restore(char *saved) {
  if (saved) setenv("TSL_FUSE_EXPAND_DW", saved, 1);
  free(saved);
}

static void test_size_rule(void) {
  char *saved = env_unset();
  CU_ASSERT_EQUAL(run_chain(&chains[1], -1), 0);
  CU_ASSERT_EQUAL(run_chain(&chains[0], 0), 0);
  CU_ASSERT_EQUAL(run_chain(&big_chain, 0), 1);
  env_restore(saved);
}

/* The tuner's layer list (tsl_graph_conv_layers) lists a pair the compiler fuses as ONE
 * layer, its fused workload, and neither of its convs: the big chain lists its first
 * conv (8 -> 16) and the fused pair, the small one (not fused) all three convs (8 ->
 * 16, the 16 -> 96 expand, the 96-channel depthwise); the Swish chain its first conv
 * and the pair, whose key carries the expand's Swish as the stage epilogue on `padded`
 * (the depthwise's SiLU, the graph's output, stays a node of its own). */
static void test_layer_list_lists_fused_pairs_once(void) {
  char *saved = env_unset();
  const chain *cases[3] = {&big_chain, &chains[0], &swish_chain};
  const int want[3] = {2, 3, 2};
  const int64_t E[3] = {96, 96, 144};
  for (int i = 0; i < 3; i++) {
    tsl_graph *g = chain_graph(cases[i]);
    tsl_conv_layer layers[8];
    int n = -1;
    CU_ASSERT_EQUAL(tsl_graph_conv_layers(g, "host", layers, 8, &n), TSL_OK);
    if (n != want[i]) printf("\n  chain %d: %d conv layers listed, want %d\n", i, n, want[i]);
    CU_ASSERT_EQUAL(n, want[i]);
    if (n >= 1) {
      CU_ASSERT_EQUAL(layers[0].desc.C, 8);
      CU_ASSERT_EQUAL(layers[0].desc.K, 16);
      CU_ASSERT_FALSE(layers[0].fused);
    }
    for (int l = 1; l < n && l < 8; l++) {
      bool fused = layers[l].fused;
      CU_ASSERT_EQUAL(fused, i != 1);
      CU_ASSERT_EQUAL(layers[l].count, 1);
      if (!fused) continue;
      CU_ASSERT_STRING_EQUAL(layers[l].workload.op, "expand_depthwise_nchwc");
      CU_ASSERT_EQUAL(layers[l].fused_desc.C, 16);
      CU_ASSERT_EQUAL(layers[l].fused_desc.E, E[i]);
      CU_ASSERT_EQUAL(layers[l].fused_desc.stride_h, 2);
      char *key = NULL;
      tsl_workload_fix(&layers[l].workload);
      CU_ASSERT_EQUAL(tsl_workload_key_of(&layers[l].workload, &key), TSL_OK);
      const char *swish = strstr(key ? key : "", ")|padded+Swish(alpha=1)");
      CU_ASSERT_EQUAL(swish != NULL, i == 2);
      free(key);
    }
    tsl_graph_free(g);
  }
  env_restore(saved);
}

/* A record of the fused workload of chain ch with a config other than the default:
 * lowering takes its knobs (the conv step of the depthwise node reports the record's
 * config), and the compiled graph still equals the reference; without records the
 * default knobs. */
static void record_sets_the_knobs(const chain *ch) {
  char *saved = env_unset();
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  tsl_graph *g = chain_graph(ch);
  tsl_conv_layer layers[4];
  int n = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_conv_layers(g, "host", layers, 4, &n), TSL_OK);
  CU_ASSERT_FATAL(n == 2 && layers[1].fused);
  tsl_workload *w = &layers[1].workload;
  tsl_workload_fix(w);
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  tsl_tuner_register_templates();
  const tsl_template *tpl = tsl_template_find("expand_depthwise_nchwc.band");
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
  tsl_te_program *p = NULL;
  tsl_config_space sp;
  tsl_config dflt, c;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_instantiate(w, &p), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tpl->space(p, &t, &sp), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tpl->default_config(p, &t, &sp, &dflt), TSL_OK);
  /* every knob at another candidate than the default's: the first, else the second */
  c = dflt;
  for (int k = 0; k < sp.nknobs; k++)
    c.values[k] = sp.knobs[k].values[sp.knobs[k].values[0] == dflt.values[k] && sp.knobs[k].nvalues > 1 ? 1 : 0];
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  tsl_record *r = calloc(1, sizeof *r);
  CU_ASSERT_FATAL(r != NULL);
  /* the fused workload's one algorithm is its template */
  CU_ASSERT_FATAL(tt_algo_record_at(w, "host", 0, tsl_config_index(&sp, &c), 1e-3, NULL, r));
  CU_ASSERT_STRING_EQUAL(r->template_name, tpl->name);
  CU_ASSERT_EQUAL_FATAL(tsl_records_add(db, r), TSL_OK);
  char *key = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(w, &key), TSL_OK);
  for (int with = 0; with < 2; with++) {
    tsl_compile_options co = {.target = "host", .records_db = with ? db : NULL};
    tsl_graph_plan *plan = NULL;
    tsl_conv_step *steps = NULL;
    int nsteps = 0, seen = 0;
    tsl_status st = tsl_graph_compile_conv_steps(g, &co, &plan, NULL, &steps, &nsteps);
    if (st != TSL_OK) printf("\n  compile: %s", tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    for (int i = 0; i < nsteps; i++) {
      const tsl_dispatch_info *di = &steps[i].info;
      if (strcmp(di->template_name, tpl->name) != 0) continue;
      seen++;
      CU_ASSERT_STRING_EQUAL(di->record.workload, key);
      CU_ASSERT_EQUAL(di->tuned, with == 1);
      const tsl_config *want = with ? &c : &dflt;
      CU_ASSERT_EQUAL(di->record.config.nknobs, want->nknobs);
      for (int k = 0; k < want->nknobs && k < di->record.config.nknobs; k++)
        CU_ASSERT_EQUAL(di->record.config.values[k], want->values[k]);
    }
    CU_ASSERT_EQUAL(seen, 1);
    free(steps);
    tsl_graph_plan_free(plan);
  }
  /* the tuned knobs compute the same */
  int64_t nin = gt_numel(g, g->inputs[0]), m = gt_numel(g, g->outputs[0]);
  float *x = gt_random(nin, 29, -1.5, 1.5);
  const float *ins[1] = {x};
  float *want[1] = {NULL}, *got[1] = {NULL};
  CU_ASSERT_EQUAL_FATAL(gt_reference_run(g, ins, want), TSL_OK);
  tsl_compile_options co = {.target = "host", .records_db = db};
  tsl_compile_stats cs = {0};
  CU_ASSERT_EQUAL(gt_compile_run(g, &co, ins, got, &cs, NULL), TSL_OK);
  CU_ASSERT_EQUAL(cs.expand_dw_fused, 1);
  CU_ASSERT(got[0] && gt_rel_err(got[0], want[0], m) <= 1e-5);
  free(got[0]);
  free(want[0]);
  free(x);
  free(key);
  free(r);
  tsl_records_free(db);
  tsl_graph_free(g);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
  env_restore(saved);
}

/* MobileNetV2's pair (codes only) and a Swish pair (table functions: the workload's
 * epilogue and stage epilogue). */
static void test_fused_record_sets_the_knobs(void) {
  record_sets_the_knobs(&big_chain);
  record_sets_the_knobs(&swish_chain);
}

void tsl_tests_graph_expand_dw(void) {
  CU_pSuite s = CU_add_suite("graph_expand_depthwise", NULL, NULL);
  CU_add_test(s, "expand 1x1 -> depthwise chains fused vs reference", test_chains_fused_match_reference);
  CU_add_test(s, "expand/depthwise fusion follows the size rule", test_size_rule);
  CU_add_test(s, "the tuner's layer list lists a fused pair once, as its fused workload",
              test_layer_list_lists_fused_pairs_once);
  CU_add_test(s, "a record of the fused workload sets the knobs lowering uses", test_fused_record_sets_the_knobs);
}
