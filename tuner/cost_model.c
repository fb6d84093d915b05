/* The XGBoost cost model (cost_model.h). */
#include "tuner/cost_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

#include "ir/arena.h"
#include "schedule/lower.h"
#include "tuner/ir_features.h"

/* IR features per config index: open addressing (key + 1; 0 = empty) */
typedef struct feat_cache {
  int64_t *keys;
  float *vals; /* TSL_IR_NFEATURES per slot */
  int64_t cap, n;
} feat_cache;

struct tsl_cost_model {
  tsl_config_space space;
  BoosterHandle booster;
  int trained;
  const tsl_te_program *program; /* IR features when set */
  const tsl_template *tpl;
  tsl_target target;
  feat_cache cache;
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
  free(m->cache.keys);
  free(m->cache.vals);
  if (m->booster) XGBoosterFree(m->booster);
  free(m);
}

int tsl_cost_model_trained(const tsl_cost_model *m) { return m && m->trained; }

static tsl_status xgb_fail(const char *what) {
  return tsl_error(TSL_ERR_RUNTIME, "cost model: %s: %s", what, XGBGetLastError());
}

tsl_status tsl_cost_model_set_program(tsl_cost_model *m, const tsl_te_program *p, const tsl_template *tpl,
                                      const tsl_target *t) {
  if (!m || !p || !tpl || !t) return tsl_error(TSL_ERR_INVALID, "cost model: NULL argument");
  if (m->trained) return tsl_error(TSL_ERR_INVALID, "cost model: set the program before training");
  m->program = p;
  m->tpl = tpl;
  m->target = *t;
  return TSL_OK;
}

int tsl_cost_model_nfeatures(const tsl_cost_model *m) {
  return tsl_config_nfeatures(&m->space) + (m->program ? TSL_IR_NFEATURES : 0);
}

static uint64_t mix(int64_t v) {
  uint64_t z = (uint64_t)v * 0x9E3779B97F4A7C15ULL;
  return z ^ (z >> 29);
}

/* The cache slot of idx: where it is, or the empty slot it would take. */
static int64_t cache_slot(const feat_cache *c, int64_t idx) {
  int64_t mask = c->cap - 1;
  for (int64_t h = (int64_t)(mix(idx) & (uint64_t)mask);; h = (h + 1) & mask)
    if (c->keys[h] == 0 || c->keys[h] == idx + 1) return h;
}

static bool cache_grow(feat_cache *c) {
  if ((c->n + 1) * 2 <= c->cap) return true;
  feat_cache nc = {NULL, NULL, c->cap ? 2 * c->cap : 256, 0};
  nc.keys = calloc((size_t)nc.cap, sizeof *nc.keys);
  nc.vals = malloc(sizeof *nc.vals * TSL_IR_NFEATURES * (size_t)nc.cap);
  if (!nc.keys || !nc.vals) {
    free(nc.keys);
    free(nc.vals);
    return false;
  }
  for (int64_t i = 0; i < c->cap; i++)
    if (c->keys[i]) {
      int64_t h = cache_slot(&nc, c->keys[i] - 1);
      nc.keys[h] = c->keys[i];
      memcpy(nc.vals + h * TSL_IR_NFEATURES, c->vals + i * TSL_IR_NFEATURES, sizeof *nc.vals * TSL_IR_NFEATURES);
      nc.n++;
    }
  free(c->keys);
  free(c->vals);
  *c = nc;
  return true;
}

/* Applies and lowers config c; its IR features into f (NaN when it does not lower). */
static void ir_features_of(const tsl_cost_model *m, const tsl_config *c, float *f) {
  for (int i = 0; i < TSL_IR_NFEATURES; i++) f[i] = NAN;
  tsl_arena *a = tsl_arena_new();
  if (!a) return;
  tsl_arena *prev = tsl_arena_set_current(a);
  tsl_schedule *sch = NULL;
  tsl_func *fn = NULL;
  tsl_lower_options lo = tsl_lower_options_default();
  lo.vector_bits = m->target.vector_bits;
  lo.quiet = true; /* a measurement of the candidate, not a kernel built: no TSL_DEBUG=lower trace */
  if (m->tpl->apply(m->program, &m->target, &m->space, c, &sch) == TSL_OK &&
      tsl_lower_with(sch, "features", &lo, &fn) == TSL_OK && tsl_ir_features(fn, f) != TSL_OK)
    for (int i = 0; i < TSL_IR_NFEATURES; i++) f[i] = NAN;
  tsl_clear_error();
  tsl_schedule_free(sch);
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
}

tsl_status tsl_cost_model_features(tsl_cost_model *m, const tsl_config *c, float *f) {
  tsl_config_features(&m->space, c, f);
  if (!m->program) return TSL_OK;
  float *ir = f + tsl_config_nfeatures(&m->space);
  int64_t idx = tsl_config_index(&m->space, c);
  if (idx < 0) {
    for (int i = 0; i < TSL_IR_NFEATURES; i++) ir[i] = NAN;
    return TSL_OK;
  }
  if (!cache_grow(&m->cache)) return tsl_error(TSL_ERR_NOMEM, "cost model: out of memory");
  int64_t h = cache_slot(&m->cache, idx);
  float *slot = m->cache.vals + h * TSL_IR_NFEATURES;
  if (!m->cache.keys[h]) {
    ir_features_of(m, c, slot);
    m->cache.keys[h] = idx + 1;
    m->cache.n++;
  }
  memcpy(ir, slot, sizeof *ir * TSL_IR_NFEATURES);
  return TSL_OK;
}

static float *features_of(tsl_cost_model *m, const tsl_config *configs, int n) {
  int nf = tsl_cost_model_nfeatures(m);
  float *x = malloc(sizeof *x * (size_t)nf * (size_t)(n > 0 ? n : 1));
  if (!x) return NULL;
  for (int i = 0; i < n; i++)
    if (tsl_cost_model_features(m, &configs[i], x + (size_t)i * (size_t)nf) != TSL_OK) {
      free(x);
      return NULL;
    }
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
  float *x = features_of(m, configs, n);
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
  int nf = tsl_cost_model_nfeatures(m);
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
  float *x = features_of(m, configs, n);
  if (!x) return tsl_error(TSL_ERR_NOMEM, "cost model: out of memory");
  DMatrixHandle d = NULL;
  tsl_status st = TSL_OK;
  bst_ulong len = 0;
  const float *out = NULL;
  if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)tsl_cost_model_nfeatures(m), NAN, &d) != 0)
    st = xgb_fail("matrix");
  if (st == TSL_OK && XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &out) != 0) st = xgb_fail("predict");
  if (st == TSL_OK && len != (bst_ulong)n) st = tsl_error(TSL_ERR_RUNTIME, "cost model: %lu predictions for %d", (unsigned long)len, n);
  for (int i = 0; st == TSL_OK && i < n; i++) scores[i] = out[i];
  if (d) XGDMatrixFree(d);
  free(x);
  return st;
}
