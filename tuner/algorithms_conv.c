/* Fast-Run algorithms of the direct NCHW[x]c convolution family: a conv2d_nchwc_bias
 * workload (the layer as the graph gives it, in its blocked layout) may also run as
 * Winograd F(m x m, 3 x 3) (dsl/ops/winograd.h) on the same data layout, with the
 * weights transformed once ahead of time (not measured: it is not per inference). */
#include <stdio.h>
#include <string.h>

#include "dsl/ops/winograd.h"
#include "ir/arena.h"
#include "tuner/algorithm.h"

static int64_t param(const tsl_workload *w, const char *name, int64_t dflt) {
  for (int i = 0; i < w->nparams; i++)
    if (strcmp(w->param_names[i], name) == 0 && w->params[i].kind == TSL_DSL_PARAM_INT) return w->params[i].i;
  return dflt;
}

static bool wino_applies(const tsl_workload *w, const char **why) {
  if (w->ninputs != 3 || w->ndims[0] != 5 || w->ndims[1] != 6 || w->ndims[2] != 2) {
    *why = "not a conv2d_nchwc_bias workload";
    return false;
  }
  if (w->shapes[1][2] != 3 || w->shapes[1][3] != 3) {
    *why = "Winograd F(m, 3) needs a 3x3 kernel";
    return false;
  }
  if (param(w, "stride_h", 1) != 1 || param(w, "stride_w", 1) != 1 || param(w, "dilation_h", 1) != 1 ||
      param(w, "dilation_w", 1) != 1) {
    *why = "Winograd needs stride 1 and dilation 1";
    return false;
  }
  if (w->shapes[0][4] != w->shapes[1][5]) {
    *why = "Winograd keeps the data block for the output: needs equal input and output blocks";
    return false;
  }
  return true;
}

/* The Winograd operator's workload: its program is instantiated (dsl/ops/winograd.h) and
 * its input shapes read back, so the transformed-weight layout is the operator's own. */
static tsl_status wino_map(const tsl_workload *w, int m, tsl_workload *out) {
  const char *why = "";
  if (!wino_applies(w, &why)) return tsl_error(TSL_ERR_UNSUPPORTED, "winograd: %s", why);
  tsl_winograd_conv c;
  memset(&c, 0, sizeof c);
  c.N = w->shapes[0][0];
  c.C = w->shapes[0][1] * w->shapes[0][4];
  c.H = w->shapes[0][2];
  c.W = w->shapes[0][3];
  c.K = w->shapes[1][0] * w->shapes[1][5];
  c.R = c.S = 3;
  c.stride_h = c.stride_w = c.dilation_h = c.dilation_w = c.groups = 1;
  c.pad_top = param(w, "pad_top", 0);
  c.pad_left = param(w, "pad_left", 0);
  c.pad_bottom = param(w, "pad_bottom", 0);
  c.pad_right = param(w, "pad_right", 0);
  c.m = m;
  c.lanes = w->shapes[0][4];
  c.act = (int)param(w, "act", 0);
  c.clip_min = 0;
  c.clip_max = 6;
  for (int i = 0; i < w->nparams; i++)
    if (w->params[i].kind == TSL_DSL_PARAM_FLOAT && strcmp(w->param_names[i], "clip_min") == 0) c.clip_min = w->params[i].f;
    else if (w->params[i].kind == TSL_DSL_PARAM_FLOAT && strcmp(w->param_names[i], "clip_max") == 0)
      c.clip_max = w->params[i].f;
  tsl_arena *a = tsl_arena_new(), *prev = tsl_arena_set_current(a);
  tsl_te_program *conv = NULL;
  tsl_status st = tsl_winograd_instantiate(&c, NULL, &conv, NULL);
  if (st == TSL_OK && conv->ninputs != 3) st = tsl_error(TSL_ERR_UNSUPPORTED, "winograd: %d inputs", conv->ninputs);
  if (st == TSL_OK) {
    const int64_t *shapes[3];
    int nd[3];
    for (int i = 0; i < 3; i++) {
      shapes[i] = conv->inputs[i]->buf->shape;
      nd[i] = conv->inputs[i]->buf->ndim;
    }
    char op[32];
    snprintf(op, sizeof op, "conv2d_winograd_f%d", m);
    st = tsl_workload_init(out, op, 3, shapes, nd, 0, NULL);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
  static const char *const names[] = {"pad_top", "pad_left", "pad_bottom", "pad_right", "act"};
  for (size_t i = 0; st == TSL_OK && i < sizeof names / sizeof names[0]; i++)
    st = tsl_workload_set_int(out, names[i], param(w, names[i], 0));
  /* the clip bounds of act 2, as given */
  for (int i = 0; st == TSL_OK && i < w->nparams; i++)
    if (w->params[i].kind == TSL_DSL_PARAM_FLOAT &&
        (strcmp(w->param_names[i], "clip_min") == 0 || strcmp(w->param_names[i], "clip_max") == 0)) {
      if (out->nparams >= TSL_WORKLOAD_MAX_PARAMS) return tsl_error(TSL_ERR_INVALID, "winograd: too many parameters");
      snprintf(out->param_names[out->nparams], sizeof out->param_names[0], "%s", w->param_names[i]);
      out->params[out->nparams] = w->params[i];
      out->params[out->nparams].name = out->param_names[out->nparams];
      out->nparams++;
    }
  return st;
}

static tsl_status map_f2(const tsl_workload *w, tsl_workload *out) { return wino_map(w, 2, out); }
static tsl_status map_f4(const tsl_workload *w, tsl_workload *out) { return wino_map(w, 4, out); }
static tsl_status map_f6(const tsl_workload *w, tsl_workload *out) { return wino_map(w, 6, out); }

static const tsl_algorithm conv_algorithms[] = {
    {"conv2d_nchwc_bias.winograd_f2", "conv2d_nchwc_bias", "conv2d_winograd_f2.blocked", wino_applies, map_f2},
    {"conv2d_nchwc_bias.winograd_f4", "conv2d_nchwc_bias", "conv2d_winograd_f4.blocked", wino_applies, map_f4},
    {"conv2d_nchwc_bias.winograd_f6", "conv2d_nchwc_bias", "conv2d_winograd_f6.blocked", wino_applies, map_f6},
};

void tsl_tuner_register_conv_algorithms(void) {
  for (size_t i = 0; i < sizeof conv_algorithms / sizeof conv_algorithms[0]; i++)
    tsl_algorithm_register(&conv_algorithms[i]);
}
