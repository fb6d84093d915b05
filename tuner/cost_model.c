/* The XGBoost cost model (cost_model.h). */
#include "tuner/cost_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <xgboost/c_api.h>

struct tsl_cost_model {
  tsl_config_space space;
  BoosterHandle booster;
  int trained;
};

int tsl_config_nfeatures(const tsl_config_space *s) { return s->nknobs + 1; }

void tsl_config_features(const tsl_config_space *s, const tsl_config *c, float *f) {
  double vol = 0;
  for (int i = 0; i < s->nknobs; i++) {
    double v = (double)c->values[i];
    if (s->knobs[i].kind == TSL_KNOB_SPLIT) {
      double l = log2(1.0 + fabs(v));
      f[i] = (float)l;
      vol += log2(fabs(v) > 1 ? fabs(v) : 1.0);
    } else {
      f[i] = (float)v;
    }
  }
  f[s->nknobs] = (float)vol;
}

tsl_status tsl_cost_model_new(const tsl_config_space *s, tsl_cost_model **out) {
  if (!s || !out) return tsl_error(TSL_ERR_INVALID, "cost model: NULL argument");
  *out = calloc(1, sizeof **out);
  if (!*out) return tsl_error(TSL_ERR_NOMEM, "cost model: out of memory");
  (*out)->space = *s;
  return TSL_OK;
}

void tsl_cost_model_free(tsl_cost_model *m) {
  if (!m) return;
  if (m->booster) XGBoosterFree(m->booster);
  free(m);
}

int tsl_cost_model_trained(const tsl_cost_model *m) { return m && m->trained; }

static tsl_status xgb_fail(const char *what) {
  return tsl_error(TSL_ERR_RUNTIME, "cost model: %s: %s", what, XGBGetLastError());
}

static float *features_of(const tsl_config_space *s, const tsl_config *configs, int n) {
  int nf = tsl_config_nfeatures(s);
  float *x = malloc(sizeof *x * (size_t)nf * (size_t)(n > 0 ? n : 1));
  if (!x) return NULL;
  for (int i = 0; i < n; i++) tsl_config_features(s, &configs[i], x + (size_t)i * (size_t)nf);
  return x;
}

tsl_status tsl_cost_model_fit(tsl_cost_model *m, const tsl_config *configs, const double *costs, int n) {
  if (!m || (n > 0 && (!configs || !costs))) return tsl_error(TSL_ERR_INVALID, "cost model: NULL argument");
  double best = INFINITY;
  int good = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(costs[i]) && costs[i] > 0) {
      good++;
      if (costs[i] < best) best = costs[i];
    }
  if (good < 2) return TSL_OK;
  float *x = features_of(&m->space, configs, n);
  float *y = malloc(sizeof *y * (size_t)n);
  if (!x || !y) {
    free(x);
    free(y);
    return tsl_error(TSL_ERR_NOMEM, "cost model: out of memory");
  }
  for (int i = 0; i < n; i++) y[i] = isfinite(costs[i]) && costs[i] > 0 ? (float)(best / costs[i]) : 0.0f;
  DMatrixHandle d = NULL;
  BoosterHandle b = NULL;
  tsl_status st = TSL_OK;
  int nf = tsl_config_nfeatures(&m->space);
  if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)nf, NAN, &d) != 0) st = xgb_fail("matrix");
  if (st == TSL_OK && XGDMatrixSetFloatInfo(d, "label", y, (bst_ulong)n) != 0) st = xgb_fail("labels");
  if (st == TSL_OK && XGBoosterCreate(&d, 1, &b) != 0) st = xgb_fail("booster");
  static const char *const params[][2] = {{"objective", "rank:pairwise"}, {"max_depth", "6"}, {"eta", "0.3"},
                                          {"min_child_weight", "1"},         {"subsample", "1"},  {"nthread", "1"},
                                          {"verbosity", "0"},                {"seed", "7"}};
  for (size_t i = 0; st == TSL_OK && i < sizeof params / sizeof params[0]; i++)
    if (XGBoosterSetParam(b, params[i][0], params[i][1]) != 0) st = xgb_fail("parameter");
  for (int it = 0; st == TSL_OK && it < 60; it++)
    if (XGBoosterUpdateOneIter(b, it, d) != 0) st = xgb_fail("training");
  if (d) XGDMatrixFree(d);
  free(x);
  free(y);
  if (st != TSL_OK) {
    if (b) XGBoosterFree(b);
    return st;
  }
  if (m->booster) XGBoosterFree(m->booster);
  m->booster = b;
  m->trained = 1;
  return TSL_OK;
}

tsl_status tsl_cost_model_predict(tsl_cost_model *m, const tsl_config *configs, int n, float *scores) {
  if (!m || (n > 0 && (!configs || !scores))) return tsl_error(TSL_ERR_INVALID, "cost model: NULL argument");
  if (!m->trained) {
    for (int i = 0; i < n; i++) scores[i] = 0;
    return TSL_OK;
  }
  if (n == 0) return TSL_OK;
  float *x = features_of(&m->space, configs, n);
  if (!x) return tsl_error(TSL_ERR_NOMEM, "cost model: out of memory");
  DMatrixHandle d = NULL;
  tsl_status st = TSL_OK;
  bst_ulong len = 0;
  const float *out = NULL;
  if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)tsl_config_nfeatures(&m->space), NAN, &d) != 0)
    st = xgb_fail("matrix");
  if (st == TSL_OK && XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &out) != 0) st = xgb_fail("predict");
  if (st == TSL_OK && len != (bst_ulong)n) st = tsl_error(TSL_ERR_RUNTIME, "cost model: %lu predictions for %d", (unsigned long)len, n);
  for (int i = 0; st == TSL_OK && i < n; i++) scores[i] = out[i];
  if (d) XGDMatrixFree(d);
  free(x);
  return st;
}
