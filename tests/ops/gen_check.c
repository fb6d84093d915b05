/* Helpers of the generated-operator tests (gen_check.h). */
#include "ops/gen_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/parser.h"
#include "dsl/te.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "ops/nn/default_schedule.h"
#include "ops/ops_util.h"
#include "ref/ref_graph.h"
#include "tessel/tensor.h"

/* Parses t's text and instantiates (and checks) its op "k" under t's views. */
static tsl_status instantiate_text(const tsl_op_text *t, int ninputs, tsl_dsl_module **mod, tsl_te_program **p) {
  const int64_t *shapes[TSL_OP_CALL_MAX_ARGS];
  for (int a = 0; a < t->nargs; a++) shapes[a] = t->views[a];
  tsl_status st = tsl_dsl_parse(t->text.s, "generated", mod);
  if (st == TSL_OK) st = tsl_dsl_instantiate(tsl_dsl_module_find(*mod, "k"), ninputs, shapes, t->ndims, 0, NULL, p);
  if (st == TSL_OK) st = tsl_te_check(*p);
  if (st == TSL_OK && (*p)->noutputs != t->nargs - ninputs)
    st = tsl_error(TSL_ERR_INVALID, "the text has %d outputs, the call %d", (*p)->noutputs, t->nargs - ninputs);
  return st;
}

/* Instantiates op "k" of the generated text under t's views and interprets it on bufs. */
static tsl_status interpret_text(const tsl_op_text *t, int ninputs, float *const *bufs) {
  tsl_dsl_module *mod = NULL;
  tsl_te_program *p = NULL;
  tsl_tensor *tens[TSL_OP_CALL_MAX_ARGS] = {0};
  tsl_status st = instantiate_text(t, ninputs, &mod, &p);
  for (int a = 0; a < t->nargs && st == TSL_OK; a++)
    st = tsl_tensor_wrap(TSL_DTYPE_F32, t->ndims[a], t->views[a], NULL, bufs[a], &tens[a]);
  if (st == TSL_OK) st = tsl_te_interpret(p, (const tsl_tensor *const *)tens, tens + ninputs);
  for (int a = 0; a < t->nargs; a++) tsl_tensor_free(tens[a]);
  tsl_dsl_module_free(mod);
  return st;
}

/* Instantiates op "k", schedules it with the library's default schedule (as the graph
 * compiler does) and runs it JIT-compiled on bufs. */
static tsl_status compile_run_text(const tsl_op_text *t, int ninputs, float *const *bufs) {
  tsl_dsl_module *mod = NULL;
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  float *aligned[TSL_OP_CALL_MAX_ARGS] = {0};
  int64_t n[TSL_OP_CALL_MAX_ARGS];
  tsl_status st = instantiate_text(t, ninputs, &mod, &p);
  if (st == TSL_OK) st = tsl_default_schedule(p, ops_target(), &s);
  for (int a = 0; a < t->nargs && st == TSL_OK; a++) { /* the kernels' alignment (ops_alloc) */
    n[a] = 1;
    for (int d = 0; d < t->ndims[a]; d++) n[a] *= t->views[a][d];
    aligned[a] = ops_alloc(n[a]);
    memcpy(aligned[a], bufs[a], sizeof(float) * (size_t)n[a]);
  }
  if (st == TSL_OK && !ops_build_run(s, "k", aligned)) st = tsl_error(TSL_ERR_INVALID, "the compiled kernel failed");
  for (int a = 0; a < t->nargs; a++) {
    if (st == TSL_OK && a >= ninputs) memcpy(bufs[a], aligned[a], sizeof(float) * (size_t)n[a]);
    ops_free(aligned[a]);
  }
  tsl_schedule_free(s);
  tsl_dsl_module_free(mod);
  return st;
}

typedef tsl_status (*run_text_fn)(const tsl_op_text *t, int ninputs, float *const *bufs);

static bool generate_and_run(const char *name, const tsl_op_call *c, const char *label, float *const *bufs,
                             run_text_fn run) {
  tsl_op_text t;
  tsl_status st = tsl_op_generate(name, c, &t);
  if (st != TSL_OK) {
    printf("\n  %s: %s\n", name, tsl_last_error());
    return false;
  }
  bool ok = true;
  if (label && strcmp(t.label, label) != 0) {
    printf("\n  %s: label %s, expected %s\n", name, t.label, label);
    ok = false;
  }
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  st = run(&t, c->ninputs, bufs);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  if (st != TSL_OK) {
    printf("\n  %s: %s\n  text:\n%s", name, tsl_last_error(), t.text.s);
    ok = false;
  }
  free(t.text.s);
  return ok;
}

bool gen_interpret(const char *name, const tsl_op_call *c, const char *label, float *const *bufs) {
  return generate_and_run(name, c, label, bufs, interpret_text);
}

bool gen_compile_run(const char *name, const tsl_op_call *c, const char *label, float *const *bufs) {
  return generate_and_run(name, c, label, bufs, compile_run_text);
}

float *gen_ref_node(tsl_op op, int nin, const int *ndims, const int64_t *const *shapes, const float *const *in,
                    void (*set_attrs)(tsl_graph *g, int node, const void *ctx), const void *ctx, int64_t *numel) {
  tsl_graph *g = NULL;
  tsl_tensor *inputs[8] = {0}, *out = NULL;
  int ids[8], y, node;
  tsl_status st = nin <= 8 ? tsl_graph_new("ref", &g) : tsl_error(TSL_ERR_INVALID, "more than 8 inputs");
  for (int i = 0; i < nin && st == TSL_OK; i++) {
    char name[16];
    snprintf(name, sizeof name, "x%d", i);
    st = tsl_graph_add_input(g, name, TSL_DTYPE_F32, ndims[i], shapes[i], &ids[i]);
    if (st == TSL_OK) st = tsl_tensor_new(TSL_DTYPE_F32, ndims[i], shapes[i], &inputs[i]);
    if (st == TSL_OK) st = tsl_tensor_copy_from(inputs[i], in[i], (size_t)tsl_tensor_numel(inputs[i]) * sizeof(float));
  }
  if (st == TSL_OK) st = tsl_graph_add_value(g, "y", &y);
  if (st == TSL_OK) st = tsl_graph_add_node(g, op, "node", nin, ids, 1, &y, &node);
  if (st == TSL_OK && set_attrs) set_attrs(g, node, ctx);
  if (st == TSL_OK) st = tsl_graph_add_output(g, y);
  if (st == TSL_OK) st = tsl_graph_infer_shapes(g);
  if (st == TSL_OK) st = ref_graph_run(g, inputs, nin, &out, 1);
  float *res = NULL;
  if (st == TSL_OK) {
    *numel = tsl_tensor_numel(out);
    res = malloc(sizeof(float) * (size_t)(*numel > 0 ? *numel : 1));
    if (res) tsl_tensor_copy_to(out, res, (size_t)*numel * sizeof(float));
  } else {
    printf("\n  reference %s: %s\n", tsl_op_name(op), tsl_last_error());
  }
  for (int i = 0; i < nin; i++) tsl_tensor_free(inputs[i]);
  tsl_tensor_free(out);
  tsl_graph_free(g);
  return res;
}

bool gen_close(const char *what, const float *got, const float *want, int64_t n, double tol) {
  int shown = 0;
  for (int64_t e = 0; e < n; e++) {
    bool same = isnan(want[e]) ? isnan(got[e]) : fabs((double)got[e] - want[e]) <= tol * fmax(1.0, fabs(want[e]));
    if (!same && shown++ < 3) printf("\n  %s: [%lld] got %.9g want %.9g", what, (long long)e, got[e], want[e]);
  }
  if (shown) printf("\n");
  return shown == 0;
}

float *gen_randoms(int64_t n, uint64_t seed) {
  float *f = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  ops_fill(f, n, seed, -1.0f, 1.0f);
  return f;
}
