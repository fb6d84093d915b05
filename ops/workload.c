/* Canonical workload keys (see workload.h). */
#include "ops/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "dsl/text_buf.h"

enum { MAX_PARAMS = 64 };

typedef struct param_slot {
  const char *name;
  tsl_dsl_param_kind kind;
  bool given;
  tsl_dsl_param_value value;
} param_slot;

static int cmp_slot(const void *a, const void *b) {
  return strcmp(((const param_slot *)a)->name, ((const param_slot *)b)->name);
}

tsl_status tsl_workload_key(const char *op, int ninputs, const int64_t *const *shapes, const int *ndims, int nparams,
                            const tsl_dsl_param_value *params, char **key) {
  if (!op || !key || ninputs < 0 || nparams < 0 || (ninputs > 0 && (!shapes || !ndims)) || (nparams > 0 && !params))
    return tsl_error(TSL_ERR_INVALID, "workload key: NULL or negative argument");
  *key = NULL;
  const tsl_op_info *info = NULL;
  tsl_status st = tsl_op_lookup(op, &info);
  if (st != TSL_OK) return st;
  const tsl_dsl_op *def = info->def;
  if (ninputs != tsl_dsl_op_ninputs(def))
    return tsl_error(TSL_ERR_INVALID, "workload key: %s takes %d inputs, %d given", info->name,
                     tsl_dsl_op_ninputs(def), ninputs);
  int np = tsl_dsl_op_nparams(def);
  if (np > MAX_PARAMS) return tsl_error(TSL_ERR_UNSUPPORTED, "workload key: %s has %d parameters", info->name, np);
  param_slot slots[MAX_PARAMS];
  for (int i = 0; i < np; i++) {
    const tsl_dsl_param_info *pi = tsl_dsl_op_param(def, i);
    slots[i] = (param_slot){pi->name, pi->kind, pi->has_default, pi->default_value};
  }
  bool seen[MAX_PARAMS] = {false};
  for (int j = 0; j < nparams; j++) {
    int found = -1;
    for (int i = 0; i < np; i++)
      if (params[j].name && strcmp(params[j].name, slots[i].name) == 0) found = i;
    if (found < 0)
      return tsl_error(TSL_ERR_INVALID, "workload key: %s has no parameter '%s'", info->name,
                       params[j].name ? params[j].name : "(null)");
    if (seen[found])
      return tsl_error(TSL_ERR_INVALID, "workload key: parameter '%s' given twice", slots[found].name);
    seen[found] = true;
    tsl_dsl_param_value v = params[j];
    if (slots[found].kind == TSL_DSL_PARAM_INT && v.kind != TSL_DSL_PARAM_INT)
      return tsl_error(TSL_ERR_INVALID, "workload key: int parameter '%s' given a float", slots[found].name);
    if (slots[found].kind == TSL_DSL_PARAM_FLOAT && v.kind == TSL_DSL_PARAM_INT) {
      v.kind = TSL_DSL_PARAM_FLOAT;
      v.f = (double)v.i;
    }
    slots[found].value = v;
    slots[found].given = true;
  }
  for (int i = 0; i < np; i++)
    if (!slots[i].given)
      return tsl_error(TSL_ERR_INVALID, "workload key: parameter '%s' of %s has no default and was not given",
                       slots[i].name, info->name);
  qsort(slots, (size_t)np, sizeof slots[0], cmp_slot);

  tsl_text_buf b = {0};
  tsl_text_put(&b, "%s(", info->name);
  for (int i = 0; i < ninputs; i++) {
    const tsl_dsl_input_info *in = tsl_dsl_op_input(def, i);
    if (ndims[i] != in->ndim || !shapes[i]) {
      free(b.s);
      return tsl_error(TSL_ERR_INVALID, "workload key: input %s of %s has rank %d, %d given", in->name, info->name,
                       in->ndim, ndims[i]);
    }
    char tbuf[32];
    tsl_text_put(&b, "%s%s:%s[", i ? "," : "", in->name, tsl_type_str(in->dtype, tbuf, sizeof tbuf));
    for (int d = 0; d < ndims[i]; d++) {
      if (shapes[i][d] < 1) {
        free(b.s);
        return tsl_error(TSL_ERR_INVALID, "workload key: input %s extent %lld in dimension %d (must be >= 1)",
                         in->name, (long long)shapes[i][d], d);
      }
      tsl_text_put(&b, "%s%lld", d ? "," : "", (long long)shapes[i][d]);
    }
    tsl_text_put(&b, "]");
  }
  tsl_text_put(&b, ";");
  for (int i = 0; i < np; i++) {
    if (slots[i].kind == TSL_DSL_PARAM_INT)
      tsl_text_put(&b, "%s%s=%lld", i ? "," : "", slots[i].name, (long long)slots[i].value.i);
    else
      tsl_text_put(&b, "%s%s=%.17g", i ? "," : "", slots[i].name, slots[i].value.f);
  }
  tsl_text_put(&b, ")");
  if (b.oom) {
    free(b.s);
    return tsl_error(TSL_ERR_NOMEM, "workload key: out of memory");
  }
  *key = b.s;
  return TSL_OK;
}

const char *tsl_workload_key_op(const char *key, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  buf[0] = '\0';
  if (!key) return buf;
  const char *p = strchr(key, '(');
  if (!p) return buf;
  size_t len = (size_t)(p - key);
  if (len >= n) len = n - 1;
  memcpy(buf, key, len);
  buf[len] = '\0';
  return buf;
}

tsl_status tsl_workload_init(tsl_workload *w, const char *op, int ninputs, const int64_t *const *shapes,
                             const int *ndims, int nparams, const tsl_dsl_param_value *params) {
  if (!w || !op || ninputs < 0 || nparams < 0 || (ninputs > 0 && (!shapes || !ndims)) || (nparams > 0 && !params))
    return tsl_error(TSL_ERR_INVALID, "workload: NULL or negative argument");
  memset(w, 0, sizeof *w);
  if (strlen(op) >= sizeof w->op) return tsl_error(TSL_ERR_INVALID, "workload: operator name too long");
  if (ninputs > TSL_WORKLOAD_MAX_INPUTS || nparams > TSL_WORKLOAD_MAX_PARAMS)
    return tsl_error(TSL_ERR_INVALID, "workload: %d inputs / %d parameters (at most %d / %d)", ninputs, nparams,
                     TSL_WORKLOAD_MAX_INPUTS, TSL_WORKLOAD_MAX_PARAMS);
  snprintf(w->op, sizeof w->op, "%s", op);
  w->ninputs = ninputs;
  for (int i = 0; i < ninputs; i++) {
    if (ndims[i] < 0 || ndims[i] > 8 || (ndims[i] > 0 && !shapes[i]))
      return tsl_error(TSL_ERR_INVALID, "workload: input %d has rank %d (0..8)", i, ndims[i]);
    w->ndims[i] = ndims[i];
    for (int d = 0; d < ndims[i]; d++) w->shapes[i][d] = shapes[i][d];
  }
  for (int j = 0; j < nparams; j++) {
    if (!params[j].name || strlen(params[j].name) >= sizeof w->param_names[0])
      return tsl_error(TSL_ERR_INVALID, "workload: parameter %d has no name or a name too long", j);
    snprintf(w->param_names[j], sizeof w->param_names[j], "%s", params[j].name);
    w->params[j] = params[j];
  }
  w->nparams = nparams;
  tsl_workload_fix(w);
  return TSL_OK;
}

void tsl_workload_fix(tsl_workload *w) {
  for (int j = 0; j < w->nparams; j++) w->params[j].name = w->param_names[j];
}

tsl_status tsl_workload_set_int(tsl_workload *w, const char *name, int64_t v) {
  if (!w || !name || strlen(name) >= sizeof w->param_names[0])
    return tsl_error(TSL_ERR_INVALID, "workload: bad parameter name");
  tsl_workload_fix(w);
  for (int j = 0; j < w->nparams; j++)
    if (strcmp(w->param_names[j], name) == 0) {
      w->params[j] = tsl_dsl_int_param(w->param_names[j], v);
      return TSL_OK;
    }
  if (w->nparams >= TSL_WORKLOAD_MAX_PARAMS) return tsl_error(TSL_ERR_INVALID, "workload: too many parameters");
  snprintf(w->param_names[w->nparams], sizeof w->param_names[0], "%s", name);
  w->params[w->nparams] = tsl_dsl_int_param(w->param_names[w->nparams], v);
  w->nparams++;
  return TSL_OK;
}

static void workload_ptrs(const tsl_workload *w, const int64_t *shapes[TSL_WORKLOAD_MAX_INPUTS],
                          tsl_dsl_param_value params[TSL_WORKLOAD_MAX_PARAMS]) {
  for (int i = 0; i < w->ninputs; i++) shapes[i] = w->shapes[i];
  for (int j = 0; j < w->nparams; j++) {
    params[j] = w->params[j];
    params[j].name = w->param_names[j];
  }
}

tsl_status tsl_workload_key_of(const tsl_workload *w, char **key) {
  if (!w) return tsl_error(TSL_ERR_INVALID, "workload key: NULL workload");
  const int64_t *shapes[TSL_WORKLOAD_MAX_INPUTS];
  tsl_dsl_param_value params[TSL_WORKLOAD_MAX_PARAMS];
  workload_ptrs(w, shapes, params);
  tsl_status st = tsl_workload_key(w->op, w->ninputs, shapes, w->ndims, w->nparams, params, key);
  if (st != TSL_OK || (!tsl_epilogue_present(&w->epilogue) && !tsl_stage_epilogue_present(&w->stage_epilogue)))
    return st;
  tsl_text_buf b = {0};
  tsl_text_put(&b, "%s", *key);
  tsl_epilogue_put_key(&w->epilogue, &b);
  tsl_stage_epilogue_put_key(&w->stage_epilogue, &b);
  free(*key);
  *key = b.s;
  if (b.oom) {
    free(b.s);
    *key = NULL;
    return tsl_error(TSL_ERR_NOMEM, "workload key: out of memory");
  }
  return TSL_OK;
}

tsl_status tsl_workload_instantiate(const tsl_workload *w, tsl_te_program **out) {
  if (!w) return tsl_error(TSL_ERR_INVALID, "workload: NULL workload");
  const int64_t *shapes[TSL_WORKLOAD_MAX_INPUTS];
  tsl_dsl_param_value params[TSL_WORKLOAD_MAX_PARAMS];
  workload_ptrs(w, shapes, params);
  tsl_status st = tsl_op_instantiate(w->op, w->ninputs, shapes, w->ndims, w->nparams, params, out);
  if (st == TSL_OK) st = tsl_epilogue_apply_stage(*out, &w->stage_epilogue);
  if (st == TSL_OK) st = tsl_epilogue_apply(*out, &w->epilogue);
  if (st != TSL_OK) *out = NULL;
  return st;
}
