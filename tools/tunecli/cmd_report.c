/* tunecli report RECORDS [--model M] -o report.html: the tuning of a records file as
 * one self-contained HTML page (inline SVG, no script, no network; docs/tuning.md
 * "Report"):
 *   - per layer (a target and family workload of the records): the tuning curve, the
 *     best GFLOP/s so far against the trial index (the layer's isolated records in file
 *     order, which is measurement order), one series per algorithm/template; the choice
 *     the compiler makes from the records (tsl_records_best) with its config; the
 *     in-model measurements (records with a context);
 *   - with --model: the model compiled without and with the records, run alternately
 *     here: per-layer time bars, default vs tuned, and end to end (report_model.h).
 * Bad records lines are skipped with a "records FILE:LINE" warning (tuner/records.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/arena.h"
#include "op_args.h"
#include "ops/workload.h"
#include "report_model.h"
#include "report_svg.h"
#include "tessel/runtime.h"
#include "tsl_config.h"
#include "tuner/records.h"
#include "tuner/runner.h"
#include "tunecli.h"

static const char *report_usage =
    "usage: tunecli report RECORDS [--model M] [--target T] [--threads N] [--runs N] -o FILE.html\n";

enum { MAX_SERIES = 16 };

typedef struct report_layer {
  const tsl_record *first; /* its first record (target and workload) */
  double flops;            /* per call of the family workload; 0 when unknown */
  int trials, errors, in_model;
  int nseries;
  report_series series[MAX_SERIES];
  char series_algo[MAX_SERIES][96], series_tpl[MAX_SERIES][96];
  double series_best_s[MAX_SERIES]; /* the least cost so far (seconds) */
  int series_trials[MAX_SERIES];
} report_layer;

/* Parses a workload key (ops/workload.h: "op(name:f32[2,3],...;p=1,q=0.5)") into w.
 * Returns false for a key of another form. */
static bool parse_key(const char *key, tsl_workload *w) {
  char op[64];
  const char *p = strchr(key, '(');
  if (!p || p - key >= (long)sizeof op) return false;
  snprintf(op, sizeof op, "%.*s", (int)(p - key), key);
  int64_t shapes[TSL_WORKLOAD_MAX_INPUTS][8];
  const int64_t *sp[TSL_WORKLOAD_MAX_INPUTS];
  int ndims[TSL_WORKLOAD_MAX_INPUTS], nin = 0, np = 0;
  char names[TSL_WORKLOAD_MAX_PARAMS][48];
  tsl_dsl_param_value params[TSL_WORKLOAD_MAX_PARAMS];
  p++;
  while (*p && *p != ';' && *p != ')') { /* NAME:DTYPE[E,E,..] */
    const char *br = strchr(p, '[');
    if (!br || nin == TSL_WORKLOAD_MAX_INPUTS) return false;
    p = br + 1;
    ndims[nin] = 0;
    while (*p != ']') {
      char *end;
      long long v = strtoll(p, &end, 10);
      if (end == p || ndims[nin] == 8) return false;
      shapes[nin][ndims[nin]++] = v;
      p = *end == ',' ? end + 1 : end;
      if (*p != ']' && !(*p >= '0' && *p <= '9')) return false;
    }
    sp[nin] = shapes[nin];
    nin++;
    p++;
    if (*p == ',') p++;
  }
  if (*p == ';') p++;
  while (*p && *p != ')') { /* NAME=VALUE */
    const char *eq = strchr(p, '=');
    if (!eq || np == TSL_WORKLOAD_MAX_PARAMS || eq - p >= 48) return false;
    snprintf(names[np], sizeof names[np], "%.*s", (int)(eq - p), p);
    char *end;
    const char *v = eq + 1;
    size_t len = strcspn(v, ",)");
    bool is_float = memchr(v, '.', len) || memchr(v, 'e', len) || memchr(v, 'n', len) || memchr(v, 'i', len);
    if (is_float) params[np] = tsl_dsl_float_param(names[np], strtod(v, &end));
    else params[np] = tsl_dsl_int_param(names[np], strtoll(v, &end, 10));
    if (end != v + len) return false;
    np++;
    p = v + len;
    if (*p == ',') p++;
  }
  return *p == ')' && tsl_workload_init(w, op, nin, sp, ndims, np, params) == TSL_OK;
}

/* The FLOPs of one call of the workload of `key` (its operator's own count, as the tuner
 * reports GFLOP/s); 0 when the key cannot be instantiated here. */
static double key_flops(const char *key) {
  tsl_workload w;
  if (!parse_key(key, &w)) return 0;
  tsl_workload_fix(&w);
  double flops = 0;
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  tsl_te_program *p = NULL;
  if (tsl_workload_instantiate(&w, &p) == TSL_OK) flops = tsl_program_flops(p);
  else tsl_clear_error();
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
  return flops;
}

static const char *short_algo(const char *algorithm) {
  const char *a = strchr(algorithm, '.'); /* FAMILY.ALGO: the family is the layer's */
  return a ? a + 1 : algorithm;
}

/* The curve value of a cost: GFLOP/s when the FLOPs are known, else microseconds. */
static double curve_value(const report_layer *L, double cost_s) {
  return L->flops > 0 ? L->flops / cost_s * 1e-9 : cost_s * 1e6;
}

/* Adds record r (of layer L) to L's curves. Returns -1 when out of memory. */
static int layer_add(report_layer *L, const tsl_record *r) {
  if (tsl_record_in_model(r)) {
    L->in_model++;
    return 0;
  }
  L->trials++;
  int s = 0;
  while (s < L->nseries && (strcmp(L->series_algo[s], r->algorithm) != 0 || strcmp(L->series_tpl[s], r->template_name) != 0))
    s++;
  if (s == L->nseries) {
    if (s == MAX_SERIES) return 0; /* past MAX_SERIES templates: counted as trials, not drawn */
    L->nseries++;
    snprintf(L->series_algo[s], sizeof L->series_algo[s], "%s", r->algorithm);
    snprintf(L->series_tpl[s], sizeof L->series_tpl[s], "%s", r->template_name);
    snprintf(L->series[s].label, sizeof L->series[s].label, "%s (%s)", short_algo(r->algorithm), r->template_name);
    L->series_best_s[s] = INFINITY;
  }
  L->series_trials[s]++;
  if (r->error_no != TSL_MEASURE_OK) {
    L->errors++;
    return 0;
  }
  double c = tsl_record_cost(r);
  if (c < L->series_best_s[s]) L->series_best_s[s] = c;
  return report_series_add(&L->series[s], L->trials, curve_value(L, L->series_best_s[s]));
}

/* The layers of db (one per target and workload, in order of first appearance) into
 * *out (malloc'd). -1 when out of memory. */
static int group_layers(const tsl_records *db, report_layer **out, int *n) {
  int cap = 0;
  *out = NULL;
  *n = 0;
  for (int i = 0; i < db->n; i++) {
    const tsl_record *r = &db->recs[i];
    int l = 0;
    while (l < *n && (strcmp((*out)[l].first->workload, r->workload) != 0 || strcmp((*out)[l].first->target, r->target) != 0))
      l++;
    if (l == *n) {
      if (*n == cap) {
        cap = cap ? 2 * cap : 16;
        report_layer *nl = realloc(*out, (size_t)cap * sizeof *nl);
        if (!nl) return -1;
        *out = nl;
      }
      memset(&(*out)[l], 0, sizeof (*out)[l]);
      (*out)[l].first = r;
      (*out)[l].flops = key_flops(r->workload);
      (*n)++;
    }
    if (layer_add(&(*out)[l], r) != 0) return -1;
  }
  return 0;
}

static void free_layers(report_layer *layers, int n) {
  for (int l = 0; l < n; l++)
    for (int s = 0; s < layers[l].nseries; s++) report_series_clear(&layers[l].series[s]);
  free(layers);
}

static void print_config(FILE *f, const tsl_record *r) {
  fputs("<code>", f);
  for (int k = 0; k < r->nknobs; k++) {
    fputs(k ? ", " : "", f);
    report_html_escape(f, r->knob_names[k]);
    fprintf(f, "=%lld", (long long)r->config.values[k]);
  }
  fputs("</code>", f);
}

/* The record compiling with db uses for layer L (tsl_records_best: exact target, then
 * family; this thread count first; in-model first); NULL when none. */
static const tsl_record *layer_choice(const tsl_records *db, const report_layer *L) {
  const tsl_record *best = NULL;
  if (tsl_records_best(db, L->first->target, L->first->workload, NULL, 0, &best, NULL) != TSL_OK) {
    tsl_clear_error();
    return NULL;
  }
  return best;
}

/* The choice the compiler makes for layer L, and its in-model measurements. */
static void write_choice(FILE *f, const tsl_records *db, const report_layer *L) {
  const tsl_record *best = layer_choice(db, L);
  if (!best) {
    fputs("<p class=\"choice\">chosen: none (no successful record: the compiler keeps the default schedule)</p>\n", f);
    return;
  }
  double c = tsl_record_cost(best);
  fputs("<p class=\"choice\">chosen: <b>", f);
  report_html_escape(f, short_algo(best->algorithm));
  fputs("</b> (template <code>", f);
  report_html_escape(f, best->template_name);
  fprintf(f, "</code>, config index %lld) ", (long long)best->config_index);
  print_config(f, best);
  fprintf(f, ": %.1f us", c * 1e6);
  if (L->flops > 0) fprintf(f, ", %.2f GFLOP/s", L->flops / c * 1e-9);
  if (tsl_record_in_model(best)) {
    fputs(", measured in ", f);
    report_html_escape(f, best->context);
    if (best->window_steps > 0) fprintf(f, " (final plan: its steps and the %d after each, per run)", best->window_steps);
  } else {
    fputs(", isolated", f);
  }
  fprintf(f, "; %d threads</p>\n", best->threads);
  if (L->in_model == 0) return;
  fputs("<table><tr><th>in-model measurement</th><th>template</th><th>config</th><th>us per call</th></tr>\n", f);
  for (int i = 0; i < db->n; i++) {
    const tsl_record *r = &db->recs[i];
    if (!tsl_record_in_model(r) || strcmp(r->workload, L->first->workload) != 0 || strcmp(r->target, L->first->target) != 0)
      continue;
    fputs("<tr><td>", f);
    report_html_escape(f, short_algo(r->algorithm));
    fputs("</td><td><code>", f);
    report_html_escape(f, r->template_name);
    fputs("</code></td><td>", f);
    print_config(f, r);
    if (r->error_no == TSL_MEASURE_OK)
      fprintf(f, "</td><td>%.1f%s%s</td></tr>\n", tsl_record_cost(r) * 1e6,
              r->window_steps > 0 ? " (final plan: per run, with the steps after)" : "", r == best ? " (chosen)" : "");
    else fprintf(f, "</td><td>%s</td></tr>\n", tsl_measure_error_name(r->error_no));
  }
  fputs("</table>\n", f);
}

/* A layer's section; its curve chart when it has a successful isolated record. Returns
 * the number of charts written (0 or 1). */
static int write_layer(FILE *f, const tsl_records *db, const report_layer *L, int index) {
  fprintf(f, "<section class=\"layer\" id=\"layer-%d\"><h3>Layer %d: ", index + 1, index + 1);
  char op[64];
  report_html_escape(f, tsl_workload_key_op(L->first->workload, op, sizeof op));
  fputs("</h3>\n<p class=\"key\"><code>", f);
  report_html_escape(f, L->first->workload);
  fputs("</code><br>target <code>", f);
  report_html_escape(f, L->first->target);
  fprintf(f, "</code>; %d trials (%d errors), %d in-model records</p>\n", L->trials, L->errors, L->in_model);
  int points = 0;
  for (int s = 0; s < L->nseries; s++) points += L->series[s].n;
  int charts = 0;
  if (points > 0) {
    char id[32], title[96];
    snprintf(id, sizeof id, "curve-%d", index + 1);
    snprintf(title, sizeof title, "Layer %d: best %s so far", index + 1, L->flops > 0 ? "GFLOP/s" : "time");
    report_svg_curve(f, id, title, L->flops > 0 ? "GFLOP/s (higher is better)" : "us (lower is better)", L->series,
                     L->nseries, L->trials);
    charts = 1;
  } else {
    fputs("<p>no successful isolated trial: no curve</p>\n", f);
  }
  fputs("<table><tr><th>algorithm</th><th>template</th><th>trials</th><th>best us</th><th>best GFLOP/s</th></tr>\n", f);
  for (int s = 0; s < L->nseries; s++) {
    fputs("<tr><td>", f);
    report_html_escape(f, short_algo(L->series_algo[s]));
    fputs("</td><td><code>", f);
    report_html_escape(f, L->series_tpl[s]);
    fprintf(f, "</code></td><td>%d</td>", L->series_trials[s]);
    double c = L->series_best_s[s];
    if (isfinite(c) && L->flops > 0) fprintf(f, "<td>%.1f</td><td>%.2f</td></tr>\n", c * 1e6, L->flops / c * 1e-9);
    else if (isfinite(c)) fprintf(f, "<td>%.1f</td><td>-</td></tr>\n", c * 1e6);
    else fputs("<td>-</td><td>-</td></tr>\n", f);
  }
  fputs("</table>\n", f);
  write_choice(f, db, L);
  fputs("</section>\n", f);
  return charts;
}

/* The --model section: end to end and per-layer bars. Returns the charts written (2). */
static int write_model(FILE *f, const char *model, const report_model_times *t) {
  fputs("<section class=\"model\"><h2>Model ", f);
  report_html_escape(f, model);
  fprintf(f, "</h2>\n<p>compiled without records (default) and with the records (tuned: %d of %d kernels from "
             "records), run alternately here: %d timed runs each, %d threads; per layer the sum of its kernel calls in the "
             "fastest run (the load of a shared machine only slows runs down).</p>\n",
          t->tuned_kernels, t->kernels, t->runs, t->threads);
  const char *e2e_labels[2] = {"median run", "fastest run"};
  double d = t->e2e_default_s * 1e3, u = t->e2e_tuned_s * 1e3;
  const double e2e_d[2] = {d, t->e2e_default_min_s * 1e3}, e2e_u[2] = {u, t->e2e_tuned_min_s * 1e3};
  report_svg_bars(f, "e2e", "End to end (ms per run)", "ms", e2e_labels, e2e_d, e2e_u, 2, "default", "tuned");
  fprintf(f, "<p class=\"e2e\">end to end: default %.3f ms (min %.3f), tuned %.3f ms (min %.3f): <b>%.2fx</b> (min "
             "%.2fx)</p>\n",
          d, t->e2e_default_min_s * 1e3, u, t->e2e_tuned_min_s * 1e3, d / u, t->e2e_default_min_s / t->e2e_tuned_min_s);
  /* the conv layers one by one, everything else as one row */
  int n = 0;
  for (int i = 0; i < t->nnodes; i++) n += t->nodes[i].conv;
  const char **labels = calloc((size_t)n + 1, sizeof *labels);
  double *a = calloc((size_t)n + 1, sizeof *a), *b = calloc((size_t)n + 1, sizeof *b);
  if (!labels || !a || !b) {
    free(labels);
    free(a);
    free(b);
    return 1;
  }
  int k = 0, others = 0;
  double other_a = 0, other_b = 0;
  for (int i = 0; i < t->nnodes; i++) {
    const report_node_time *x = &t->nodes[i];
    if (x->conv) {
      labels[k] = x->node;
      a[k] = x->default_s * 1e6;
      b[k++] = x->tuned_s * 1e6;
    } else {
      others++;
      if (isfinite(x->default_s)) other_a += x->default_s * 1e6;
      if (isfinite(x->tuned_s)) other_b += x->tuned_s * 1e6;
    }
  }
  char other_label[64];
  snprintf(other_label, sizeof other_label, "other nodes (%d)", others);
  labels[k] = other_label;
  a[k] = other_a;
  b[k++] = other_b;
  report_svg_bars(f, "layers", "Per layer (us per run, fastest of the runs)", "us", labels, a, b, k, "default", "tuned");
  fputs("<table><tr><th>node</th><th>default template</th><th>tuned template</th><th>default us</th><th>tuned "
        "us</th><th>speedup</th></tr>\n",
        f);
  for (int i = 0; i < t->nnodes; i++) {
    const report_node_time *x = &t->nodes[i];
    if (!x->conv) continue;
    fputs("<tr><td>", f);
    report_html_escape(f, x->node);
    fputs("</td><td><code>", f);
    report_html_escape(f, x->tpl_default);
    fputs("</code></td><td><code>", f);
    report_html_escape(f, x->tpl_tuned);
    fprintf(f, "</code></td><td>%.1f</td><td>%.1f</td><td>%.2fx</td></tr>\n", x->default_s * 1e6, x->tuned_s * 1e6,
            x->default_s / x->tuned_s);
  }
  fputs("</table></section>\n", f);
  free(labels);
  free(a);
  free(b);
  return 2;
}

/* One row per layer: its operator, trials and choice, linking to its section. */
static void write_summary(FILE *f, const tsl_records *db, const report_layer *layers, int n) {
  fputs("<table class=\"summary\"><tr><th>layer</th><th>operator</th><th>trials</th><th>chosen</th><th>us</th>"
        "<th>GFLOP/s</th><th>measured</th></tr>\n",
        f);
  for (int l = 0; l < n; l++) {
    const report_layer *L = &layers[l];
    char op[64];
    fprintf(f, "<tr><td><a href=\"#layer-%d\">%d</a></td><td>", l + 1, l + 1);
    report_html_escape(f, tsl_workload_key_op(L->first->workload, op, sizeof op));
    fprintf(f, "</td><td>%d</td>", L->trials);
    const tsl_record *best = layer_choice(db, L);
    if (!best) {
      fputs("<td>none (default)</td><td>-</td><td>-</td><td>-</td></tr>\n", f);
      continue;
    }
    double c = tsl_record_cost(best);
    fputs("<td>", f);
    report_html_escape(f, short_algo(best->algorithm));
    fprintf(f, "</td><td>%.1f</td>", c * 1e6);
    if (L->flops > 0) fprintf(f, "<td>%.2f</td>", L->flops / c * 1e-9);
    else fputs("<td>-</td>", f);
    fprintf(f, "<td>%s</td></tr>\n", tsl_record_in_model(best) ? "in model" : "isolated");
  }
  fputs("</table>\n", f);
}

static const char *page_style =
    "<style>body{font-family:sans-serif;margin:20px;color:#222;background:#fff}"
    "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}"
    "th{background:#f0f0f0}code{font-size:12px}.key{word-break:break-all}section{margin-bottom:28px}</style>\n";

typedef struct report_args {
  const char *records, *model, *target, *out;
  int threads, runs;
} report_args;

static int parse_args(int argc, char **argv, report_args *a) {
  memset(a, 0, sizeof *a);
  a->target = "host";
  a->runs = 15;
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    bool has = i + 1 < argc;
    if (has && strcmp(s, "-o") == 0) a->out = argv[++i];
    else if (has && strcmp(s, "--model") == 0) a->model = argv[++i];
    else if (has && strcmp(s, "--target") == 0) a->target = argv[++i];
    else if (has && (strcmp(s, "--threads") == 0 || strcmp(s, "--runs") == 0)) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > (s[2] == 't' ? 256 : 1000)) {
        fprintf(stderr, "tunecli report: error: bad value '%s' for %s\n", argv[i], s);
        return 2;
      }
      *(s[2] == 't' ? &a->threads : &a->runs) = (int)v;
    } else if (s[0] != '-' && !a->records) a->records = s;
    else {
      fprintf(stderr, "tunecli report: error: unexpected argument '%s'\n%s", s, report_usage);
      return 2;
    }
  }
  if (!a->records || !a->out) {
    fprintf(stderr, "tunecli report: error: %s\n%s", a->records ? "no output file (-o FILE.html)" : "no records file",
            report_usage);
    return 2;
  }
  return 0;
}

int tunecli_report(int argc, char **argv) {
  const char *cmd = "report";
  report_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc != 0) return rc;
  if (a.threads > 0) tsl_set_num_threads(a.threads);
  tsl_records *db = NULL;
  tsl_status st = tsl_records_new(&db);
  if (st == TSL_OK) st = tsl_records_load(db, a.records, true, stderr);
  if (st != TSL_OK) {
    tsl_records_free(db);
    return tunecli_fail(cmd, st);
  }
  /* the output first: a path that cannot be written fails before any measurement */
  FILE *f = fopen(a.out, "w");
  if (!f) {
    fprintf(stderr, "tunecli report: error: cannot write %s: %s\n", a.out, strerror(errno));
    tsl_records_free(db);
    return 1;
  }
  /* only a regular file is removed after a failure (never a device such as /dev/stdout) */
  struct stat out_stat;
  bool out_regular = fstat(fileno(f), &out_stat) == 0 && S_ISREG(out_stat.st_mode);
  report_model_times mt;
  memset(&mt, 0, sizeof mt);
  report_layer *layers = NULL;
  int nl = 0;
  if (a.model && (st = report_model_measure(a.model, a.target, a.records, a.runs, &mt)) != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto fail;
  }
  if (group_layers(db, &layers, &nl) != 0) {
    rc = tunecli_fail(cmd, tsl_error(TSL_ERR_NOMEM, "report: out of memory"));
    goto fail;
  }
  int ok = 0;
  for (int i = 0; i < db->n; i++) ok += db->recs[i].error_no == TSL_MEASURE_OK;
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tessel tuning report</title>\n", f);
  fputs(page_style, f);
  fputs("</head><body>\n<h1>Tuning report: ", f);
  report_html_escape(f, a.records);
  fprintf(f, "</h1>\n<p>%d records (%d successful), %d lines skipped; %d layers (target and workload). tunecli %s, "
             "LLVM %s.</p>\n",
          db->n, ok, db->skipped, nl, TSL_VERSION, TSL_LLVM_VERSION);
  int charts = a.model ? write_model(f, a.model, &mt) : 0;
  fputs("<h2>Layers</h2>\n", f);
  write_summary(f, db, layers, nl);
  for (int l = 0; l < nl; l++) charts += write_layer(f, db, &layers[l], l);
  fputs("</body></html>\n", f);
  bool write_error = ferror(f) != 0;
  if (fclose(f) != 0 || write_error) {
    fprintf(stderr, "tunecli report: error: writing %s failed: %s\n", a.out, strerror(errno));
    if (out_regular) unlink(a.out);
    rc = 1;
  } else {
    printf("report: %s: %d layers, %d charts%s\n", a.out, nl, charts, db->skipped ? " (bad records lines skipped)" : "");
  }
  goto done;
fail:
  fclose(f);
  if (out_regular) unlink(a.out); /* no page rather than an empty one */
done:
  free_layers(layers, nl);
  report_model_times_clear(&mt);
  tsl_records_free(db);
  return rc;
}
