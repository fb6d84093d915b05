/* The ONNX node-test harness (see onnx_conformance.h). */
#include "onnx_conformance.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/onnx.h"

#define MAX_IO 16

typedef struct case_data {
  int n_in, n_out;
  tsl_tensor *in[MAX_IO], *out[MAX_IO];
  char in_name[MAX_IO][128];
} case_data;

static void case_data_free(case_data *d) {
  for (int i = 0; i < d->n_in; i++) tsl_tensor_free(d->in[i]);
  for (int i = 0; i < d->n_out; i++) tsl_tensor_free(d->out[i]);
  memset(d, 0, sizeof *d);
}

static bool exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

/* Loads <set>/input_K.pb and output_K.pb for K = 0, 1, ... */
static bool load_set(const char *set, case_data *d, char *why, size_t why_n) {
  char path[4400];
  for (int pass = 0; pass < 2; pass++) {
    for (int k = 0; k < MAX_IO; k++) {
      snprintf(path, sizeof path, "%s/%s_%d.pb", set, pass ? "output" : "input", k);
      if (!exists(path)) break;
      tsl_tensor *t;
      char name[128];
      if (tsl_onnx_load_tensor(path, &t, name, sizeof name) != TSL_OK) {
        snprintf(why, why_n, "test data: %s", tsl_last_error());
        return false;
      }
      if (pass) {
        d->out[d->n_out++] = t;
      } else {
        snprintf(d->in_name[d->n_in], sizeof d->in_name[0], "%s", name);
        d->in[d->n_in++] = t;
      }
    }
  }
  return true;
}

static bool outputs_match(const tsl_tensor *got, const tsl_tensor *want, char *why, size_t why_n) {
  bool same_shape = got->ndim == want->ndim && tsl_dtype_equal(got->dtype, want->dtype);
  for (int d = 0; same_shape && d < got->ndim; d++) same_shape = got->shape[d] == want->shape[d];
  if (!same_shape) {
    /* A rank-0 result may be expected as a one-element tensor and the other way round. */
    same_shape = tsl_dtype_equal(got->dtype, want->dtype) && tsl_tensor_numel(got) == tsl_tensor_numel(want) &&
                 tsl_tensor_numel(got) == 1;
    if (!same_shape) {
      snprintf(why, why_n, "output type/shape differs (%s rank %d vs expected %s rank %d)", tsl_dtype_str(got->dtype),
               got->ndim, tsl_dtype_str(want->dtype), want->ndim);
      return false;
    }
  }
  int64_t n = tsl_tensor_numel(want);
  if (!tsl_dtype_equal(want->dtype, TSL_DTYPE_F32)) {
    if (memcmp(got->data, want->data, tsl_tensor_nbytes(want)) != 0) {
      snprintf(why, why_n, "%s output differs", tsl_dtype_str(want->dtype));
      return false;
    }
    return true;
  }
  const float *a = got->data, *b = want->data;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(b[i]) && isnan(a[i])) continue;
    double err = fabs((double)a[i] - b[i]);
    if (!(err <= 1e-5 + 1e-3 * fabs(b[i]))) {
      snprintf(why, why_n, "element %lld: got %.8g, expected %.8g", (long long)i, a[i], b[i]);
      return false;
    }
  }
  return true;
}

/* Imports the model binding the listed inputs as constants. */
static tsl_status import(const char *model, const case_data *d, bool bind_all_but_first, tsl_graph **g) {
  tsl_onnx_binding b[MAX_IO];
  int nb = 0;
  for (int i = 0; i < d->n_in; i++) {
    bool bind = !tsl_dtype_equal(d->in[i]->dtype, TSL_DTYPE_F32) || (bind_all_but_first && i > 0);
    if (bind && d->in_name[i][0]) b[nb++] = (tsl_onnx_binding){d->in_name[i], d->in[i]};
  }
  tsl_onnx_options o = {NULL, nb, b};
  return tsl_graph_load_onnx_opts(model, &o, g);
}

static onnx_conf_outcome run_set(const char *model, const char *set, onnx_conf_exec exec, void *ctx, char *why,
                                 size_t why_n) {
  case_data d = {0};
  if (!load_set(set, &d, why, why_n)) {
    /* Data we cannot read (strings, sequences, optionals) belongs to operators we do
     * not accept: then the model itself must be refused clearly. */
    case_data_free(&d);
    tsl_graph *g = NULL;
    tsl_status st = tsl_graph_load_onnx(model, &g);
    tsl_graph_free(g);
    if (st == TSL_ERR_UNSUPPORTED && strncmp(tsl_last_error(), "onnx", 4) == 0) {
      snprintf(why, why_n, "%s", tsl_last_error());
      return ONNX_CONF_UNSUPPORTED;
    }
    return ONNX_CONF_FAIL;
  }
  tsl_graph *g = NULL;
  tsl_status st = import(model, &d, false, &g);
  if (st == TSL_ERR_UNSUPPORTED && strstr(tsl_last_error(), "must be a constant")) st = import(model, &d, true, &g);
  if (st != TSL_OK) {
    snprintf(why, why_n, "%s", tsl_last_error());
    case_data_free(&d);
    return st == TSL_ERR_UNSUPPORTED && strncmp(why, "onnx", 4) == 0 ? ONNX_CONF_UNSUPPORTED : ONNX_CONF_FAIL;
  }
  /* Feed the graph inputs that were not bound, matched by name. */
  tsl_tensor *in[MAX_IO];
  onnx_conf_outcome res = ONNX_CONF_PASS;
  if (g->n_inputs > MAX_IO || g->n_outputs != d.n_out) {
    snprintf(why, why_n, "graph has %d inputs, %d outputs; test data has %d outputs", g->n_inputs, g->n_outputs,
             d.n_out);
    res = ONNX_CONF_FAIL;
  }
  for (int k = 0; res == ONNX_CONF_PASS && k < g->n_inputs; k++) {
    in[k] = NULL;
    for (int i = 0; i < d.n_in; i++)
      if (strcmp(d.in_name[i], g->values[g->inputs[k]].name) == 0) in[k] = d.in[i];
    if (!in[k] && k < d.n_in) in[k] = d.in[k];
    if (!in[k]) {
      snprintf(why, why_n, "no test data for input '%s'", g->values[g->inputs[k]].name);
      res = ONNX_CONF_FAIL;
    }
  }
  tsl_tensor *out[MAX_IO] = {0};
  if (res == ONNX_CONF_PASS) {
    st = exec(ctx, g, in, g->n_inputs, out, g->n_outputs);
    if (st != TSL_OK) {
      snprintf(why, why_n, "run: %s", tsl_last_error());
      res = st == TSL_ERR_UNSUPPORTED ? ONNX_CONF_UNSUPPORTED : ONNX_CONF_FAIL;
    }
  }
  for (int k = 0; res == ONNX_CONF_PASS && k < g->n_outputs; k++)
    if (!outputs_match(out[k], d.out[k], why, why_n)) res = ONNX_CONF_FAIL;
  for (int k = 0; k < MAX_IO && g && k < g->n_outputs; k++) tsl_tensor_free(out[k]);
  tsl_graph_free(g);
  case_data_free(&d);
  return res;
}

onnx_conf_outcome onnx_conf_run_case(const char *case_dir, onnx_conf_exec exec, void *ctx, char *why, size_t why_n) {
  char model[4300], set[4300];
  snprintf(model, sizeof model, "%s/model.onnx", case_dir);
  why[0] = 0;
  int sets = 0;
  for (int s = 0; s < 8; s++) {
    snprintf(set, sizeof set, "%s/test_data_set_%d", case_dir, s);
    if (!exists(set)) break;
    sets++;
    onnx_conf_outcome r = run_set(model, set, exec, ctx, why, why_n);
    if (r != ONNX_CONF_PASS) return r;
  }
  if (!sets) {
    snprintf(why, why_n, "no test_data_set_0");
    return ONNX_CONF_FAIL;
  }
  return ONNX_CONF_PASS;
}

/* The operator a case tests: its single op type besides Constant, or "composite". */
static void case_op(const char *case_dir, char *op, size_t n) {
  char model[4300];
  snprintf(model, sizeof model, "%s/model.onnx", case_dir);
  tsl_onnx_info info;
  snprintf(op, n, "?");
  if (tsl_onnx_inspect(model, &info) != TSL_OK) return;
  int kinds = 0;
  for (int k = 0; k < info.n_op_types; k++) {
    if (strcmp(info.op_types[k].name, "Constant") == 0 && info.n_op_types > 1) continue;
    if (!kinds++) snprintf(op, n, "%s", info.op_types[k].name);
  }
  if (kinds > 1) snprintf(op, n, "composite");
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static onnx_conf_op *tally(onnx_conf_report *rep, const char *op) {
  for (int i = 0; i < rep->n_ops; i++)
    if (strcmp(rep->ops[i].op, op) == 0) return &rep->ops[i];
  if (rep->n_ops == ONNX_CONF_MAX_OPS) return &rep->ops[ONNX_CONF_MAX_OPS - 1];
  onnx_conf_op *o = &rep->ops[rep->n_ops++];
  memset(o, 0, sizeof *o);
  snprintf(o->op, sizeof o->op, "%s", op);
  return o;
}

int onnx_conf_run_dir(const char *dir, onnx_conf_exec exec, void *ctx, onnx_conf_report *rep, FILE *log) {
  DIR *dp = opendir(dir);
  if (!dp) return 0;
  char **names = NULL;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(dp));) {
    if (strncmp(e->d_name, "test_", 5) != 0) continue;
    char **nn = realloc(names, (n + 1) * sizeof *names);
    if (!nn) break;
    names = nn;
    names[n++] = strdup(e->d_name);
  }
  closedir(dp);
  qsort(names, n, sizeof *names, name_cmp);
  for (size_t i = 0; i < n; i++) {
    char case_dir[4200], op[48], why[1024];
    snprintf(case_dir, sizeof case_dir, "%s/%s", dir, names[i]);
    case_op(case_dir, op, sizeof op);
    onnx_conf_outcome r = onnx_conf_run_case(case_dir, exec, ctx, why, sizeof why);
    onnx_conf_op *o = tally(rep, op);
    o->total++;
    rep->total++;
    if (r == ONNX_CONF_PASS) {
      o->passed++;
      rep->passed++;
    } else if (r == ONNX_CONF_UNSUPPORTED) {
      o->unsupported++;
      rep->unsupported++;
    } else {
      o->failed++;
      rep->failed++;
      if (rep->n_notes < ONNX_CONF_MAX_NOTES)
        snprintf(rep->notes[rep->n_notes++], sizeof rep->notes[0], "%.80s: %.220s", names[i], why);
    }
    if (log)
      fprintf(log, "%-60s %-12s %s\n", names[i], r == ONNX_CONF_PASS ? "pass" : r == ONNX_CONF_UNSUPPORTED ? "unsupported" : "FAIL",
              r == ONNX_CONF_PASS ? "" : why);
    free(names[i]);
  }
  free(names);
  return (int)n;
}

const onnx_conf_op *onnx_conf_find(const onnx_conf_report *rep, const char *op) {
  for (int i = 0; i < rep->n_ops; i++)
    if (strcmp(rep->ops[i].op, op) == 0) return &rep->ops[i];
  return NULL;
}

void onnx_conf_print(const onnx_conf_report *rep, const char *title, FILE *f) {
  fprintf(f, "\n  %s: %d cases, %d pass, %d unsupported (clear error), %d fail\n", title, rep->total, rep->passed,
          rep->unsupported, rep->failed);
  for (int i = 0; i < rep->n_ops; i++) {
    const onnx_conf_op *o = &rep->ops[i];
    if (!o->passed && !o->failed) continue;
    fprintf(f, "    %-22s %3d/%-3d pass", o->op, o->passed, o->total);
    if (o->unsupported) fprintf(f, ", %d unsupported", o->unsupported);
    if (o->failed) fprintf(f, ", %d FAIL", o->failed);
    fprintf(f, "\n");
  }
  int others = 0, other_cases = 0;
  for (int i = 0; i < rep->n_ops; i++)
    if (!rep->ops[i].passed && !rep->ops[i].failed) {
      others++;
      other_cases += rep->ops[i].total;
    }
  fprintf(f, "    (%d other operators, %d cases: all refused with TSL_ERR_UNSUPPORTED)\n", others, other_cases);
  for (int i = 0; i < rep->n_notes; i++) fprintf(f, "    FAIL %s\n", rep->notes[i]);
}
