/* Helpers shared by the tuner suites (tuner_util.h). */
#include "tuner_util.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_util.h"
#include "ir/arena.h"
#include "ops/algorithm.h"

bool tt_algo_record_at(const tsl_workload *w, const char *target, int a, int64_t index, double cost,
                       const char *context, tsl_record *r) {
  tsl_target t;
  if (tsl_target_parse(target, &t) != TSL_OK) return false;
  tsl_algo_choice algos[16];
  int na = tsl_algorithms_for(w, algos, 16, NULL);
  if (a >= na || a >= 16) return false;
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  tsl_te_program *p = NULL;
  tsl_config_space s;
  tsl_config c;
  char *key = NULL;
  bool ok = tsl_workload_instantiate(&algos[a].op_workload, &p) == TSL_OK &&
            algos[a].tpl->space(p, &t, &s) == TSL_OK &&
            (index < 0 ? algos[a].tpl->default_config(p, &t, &s, &c) : tsl_config_from_index(&s, index, &c)) == TSL_OK &&
            tsl_workload_key_of(w, &key) == TSL_OK;
  if (ok) {
    memset(r, 0, sizeof *r);
    tsl_target_str(&t, r->target, sizeof r->target);
    snprintf(r->task, sizeof r->task, "%s", algos[a].tpl->op);
    snprintf(r->workload, sizeof r->workload, "%s", key);
    snprintf(r->algorithm, sizeof r->algorithm, "%s", algos[a].name);
    snprintf(r->template_name, sizeof r->template_name, "%s", algos[a].tpl->name);
    r->space_hash = tsl_space_hash(algos[a].tpl->name, algos[a].tpl->version, algos[a].tpl->op, &s);
    r->config_index = tsl_config_index(&s, &c);
    r->nknobs = s.nknobs;
    for (int i = 0; i < s.nknobs; i++) {
      snprintf(r->knob_names[i], TSL_KNOB_NAME_LEN, "%s", s.knobs[i].name);
      r->knob_kinds[i] = s.knobs[i].kind;
    }
    r->config = c;
    r->ncosts = 1;
    r->costs[0] = cost;
    snprintf(r->context, sizeof r->context, "%s", context ? context : "");
  }
  free(key);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
  return ok;
}

tsl_graph *tt_se_graph(tsl_conv_layer layers[TT_SE_MAX_LAYERS], int *n) {
  tsl_graph *g = NULL;
  int64_t s[4] = {1, TT_SE_C, 6, 7};
  int x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("se", &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int a = gt_add_conv1x1(g, x, TT_SE_C, TT_SE_C, 1);
  a = gt_add_node(g, TSL_OP_RELU, 1, &a, NULL);
  int p = gt_add_node(g, TSL_OP_GLOBAL_AVERAGE_POOL, 1, &a, NULL);
  int h = gt_add_conv1x1(g, p, TT_SE_C, TT_SE_SQUEEZE, 10);
  h = gt_add_node(g, TSL_OP_RELU, 1, &h, NULL);
  int sq = gt_add_conv1x1(g, h, TT_SE_SQUEEZE, TT_SE_C, 12);
  int node, gate = gt_add_node(g, TSL_OP_ACTIVATION, 1, &sq, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", "Sigmoid"), TSL_OK);
  int ins[2] = {a, gate};
  int m = gt_add_node(g, TSL_OP_MUL, 2, ins, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, gt_add_conv1x1(g, m, TT_SE_C, TT_SE_K_OUT, 20)), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, gt_add_conv1x1(g, a, TT_SE_C, TT_SE_K_OUT, 30)), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_conv_layers(g, "host", layers, TT_SE_MAX_LAYERS, n), TSL_OK);
  CU_ASSERT_FATAL(*n >= 3 && *n <= TT_SE_MAX_LAYERS);
  return g;
}

tsl_tune_opts tt_quick_tune_opts(const char *path) {
  tsl_tune_opts o = tsl_tune_opts_default();
  o.trials = 1; /* the first pass: every allowed algorithm's default config */
  o.measure.time.repeat = 2;
  o.measure.time.min_repeat_ms = 1;
  o.measure.build_timeout_s = 10;
  o.measure.run_timeout_s = 10;
  o.measure.threads = 1;
  o.records_path = path;
  return o;
}
