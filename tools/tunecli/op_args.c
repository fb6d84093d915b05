/* Operator arguments shared by tunecli commands: see op_args.h. */
#include "op_args.h"

#include "dsl/sched_block.h"
#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "ops/user/user_template.h"
#include "tessel/runtime.h"
#include "tuner/dispatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tunecli_fail(const char *cmd, tsl_status st) {
  fprintf(stderr, "tunecli %s: error (%s): %s\n", cmd, tsl_status_name(st), tsl_last_error());
  return 1;
}

char *tunecli_read_text_file(const char *cmd, const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    fprintf(stderr, "tunecli %s: error: cannot read '%s': %s\n", cmd, path, strerror(errno));
    return NULL;
  }
  if (!S_ISREG(sb.st_mode)) {
    fprintf(stderr, "tunecli %s: error: '%s' is not a regular file\n", cmd, path);
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "tunecli %s: error: cannot read '%s': %s\n", cmd, path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
    if (n + 1 == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
      cap *= 2;
    }
  }
  bool read_error = ferror(f);
  fclose(f);
  if (!buf || read_error) {
    fprintf(stderr, "tunecli %s: error: cannot read '%s'\n", cmd, path);
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  if (strlen(buf) != n) {
    fprintf(stderr, "tunecli %s: error: '%s' holds a NUL byte (not a text file)\n", cmd, path);
    free(buf);
    return NULL;
  }
  return buf;
}

/* "1x64x56x56" (also with ','): 1..8 positive extents, nothing else. */
static bool parse_dims(const char *s, int64_t *dims, int *ndim) {
  *ndim = 0;
  const char *p = s;
  for (;;) {
    if (*ndim == 8) return false;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || v <= 0) return false;
    dims[(*ndim)++] = v;
    p = end;
    if (*p == '\0') return true;
    if (*p != 'x' && *p != 'X' && *p != ',') return false;
    p++;
  }
}

static bool parse_param(const char *cmd, const char *v, op_args *a) {
  const char *eq = strchr(v, '=');
  if (!eq || eq == v || a->nparams == OP_ARGS_MAX_PARAMS || (size_t)(eq - v) >= sizeof a->param_names[0]) {
    fprintf(stderr, "tunecli %s: error: --param wants NAME=VALUE, got '%s'\n", cmd, v);
    return false;
  }
  char *name = a->param_names[a->nparams];
  memcpy(name, v, (size_t)(eq - v));
  name[eq - v] = '\0';
  for (int i = 0; i < a->nparams; i++)
    if (strcmp(a->params[i].name, name) == 0) {
      fprintf(stderr, "tunecli %s: error: --param %s is given twice\n", cmd, name);
      return false;
    }
  const char *val = eq + 1;
  char *end;
  errno = 0;
  long long iv = strtoll(val, &end, 0);
  if (*val && *end == '\0' && errno == 0) {
    a->params[a->nparams++] = tsl_dsl_int_param(name, iv);
    return true;
  }
  if (errno == ERANGE && *end == '\0') {
    fprintf(stderr, "tunecli %s: error: --param %s: %s does not fit in 64 bits\n", cmd, name, val);
    return false;
  }
  errno = 0;
  double fv = strtod(val, &end);
  if (!*val || *end != '\0' || errno) {
    fprintf(stderr, "tunecli %s: error: --param %s: '%s' is not a number\n", cmd, name, val);
    return false;
  }
  a->params[a->nparams++] = tsl_dsl_float_param(name, fv);
  return true;
}

static int input_index(const op_args *a, const char *name, size_t len) {
  for (int i = 0; i < a->ninputs; i++)
    if (strlen(a->input_names[i]) == len && strncmp(a->input_names[i], name, len) == 0) return i;
  return -1;
}

/* Finds the op: a built-in one, or one in --file. */
static bool resolve_op(const char *cmd, op_args *a) {
  if (a->file) {
    char *text = tunecli_read_text_file(cmd, a->file);
    if (!text) return false;
    tsl_status st = tsl_dsl_parse(text, a->file, &a->module);
    free(text);
    if (st != TSL_OK) {
      tunecli_fail(cmd, st);
      return false;
    }
    if (!a->op_name && tsl_dsl_module_count(a->module) == 1) a->op_name = tsl_dsl_op_name(tsl_dsl_module_op(a->module, 0));
    if (!a->op_name) {
      fprintf(stderr, "tunecli %s: error: %s defines several ops: name one\n", cmd, a->file);
      return false;
    }
    a->def = tsl_dsl_module_find(a->module, a->op_name);
    if (!a->def) {
      fprintf(stderr, "tunecli %s: error: %s defines no op '%s'\n", cmd, a->file, a->op_name);
      return false;
    }
    a->name = tsl_dsl_op_name(a->def);
    a->text = NULL;
  } else {
    if (!a->op_name) {
      fprintf(stderr, "tunecli %s: error: which operator? (`tunecli list`, or --file FILE for your own)\n", cmd);
      return false;
    }
    const tsl_op_info *info;
    tsl_status st = tsl_op_lookup(a->op_name, &info);
    if (st != TSL_OK) {
      tunecli_fail(cmd, st);
      return false;
    }
    a->def = info->def;
    a->name = info->name;
    a->text = info->text;
    /* the example's shapes and params first, so that --shape/--param override them */
    for (int i = 0; i < info->ninputs && i < OP_ARGS_MAX_INPUTS; i++) {
      a->ndims[i] = info->example.ndims[i];
      memcpy(a->shapes[i], info->example.shapes[i], sizeof(int64_t) * (size_t)a->ndims[i]);
      a->shape_given[i] = true;
    }
    tsl_dsl_param_value user[OP_ARGS_MAX_PARAMS];
    int nuser = a->nparams;
    memcpy(user, a->params, sizeof(user[0]) * (size_t)nuser);
    a->nparams = 0;
    for (int i = 0; i < info->example.nparams && a->nparams < OP_ARGS_MAX_PARAMS; i++) {
      bool overridden = false;
      for (int u = 0; u < nuser; u++) overridden |= strcmp(user[u].name, info->example.params[i].name) == 0;
      if (!overridden) a->params[a->nparams++] = info->example.params[i];
    }
    for (int u = 0; u < nuser && a->nparams < OP_ARGS_MAX_PARAMS; u++) a->params[a->nparams++] = user[u];
  }
  a->ninputs = tsl_dsl_op_ninputs(a->def);
  if (a->ninputs > OP_ARGS_MAX_INPUTS) {
    fprintf(stderr, "tunecli %s: error: %s has more than %d inputs\n", cmd, a->name, OP_ARGS_MAX_INPUTS);
    return false;
  }
  for (int i = 0; i < a->ninputs; i++) a->input_names[i] = tsl_dsl_op_input(a->def, i)->name;
  return true;
}

/* The options of show, run-op and compile themselves that take a value (parsed by the
 * command from rest): their values must not be taken for the OP ("run-op --file f.tsl
 * --repeat 5" names no op '5'). tune-op takes its OP first only. */
static bool takes_own_value(const char *cmd, const char *arg) {
  static const char *const with_value[] = {"--seed", "--tolerance", "--repeat", "-o", "--output", "--name"};
  if (strcmp(cmd, "tune-op") == 0) return false;
  for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
    if (strcmp(arg, with_value[k]) == 0) return true;
  return false;
}

bool op_args_parse(const char *cmd, int argc, char **argv, op_args *a, char **rest, int *nrest) {
  memset(a, 0, sizeof *a);
  a->target = "host";
  *nrest = 0;
  const char *shape_args[64];
  int nshape = 0;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    bool takes_value = strcmp(arg, "--shape") == 0 || strcmp(arg, "--param") == 0 ||
                       strcmp(arg, "--schedule") == 0 || strcmp(arg, "--target") == 0 || strcmp(arg, "--file") == 0 ||
                       strcmp(arg, "--records") == 0 ||
                       ((strcmp(arg, "--template") == 0 || strcmp(arg, "--threads") == 0) && strcmp(cmd, "tune-op") != 0);
    if (takes_value) {
      if (i + 1 >= argc) {
        fprintf(stderr, "tunecli %s: error: %s needs a value\n", cmd, arg);
        return false;
      }
      const char *v = argv[++i];
      if (strcmp(arg, "--schedule") == 0) a->schedule_file = v;
      else if (strcmp(arg, "--records") == 0) a->records_file = v;
      else if (strcmp(arg, "--template") == 0) a->template_name = v;
      else if (strcmp(arg, "--target") == 0) a->target = v;
      else if (strcmp(arg, "--file") == 0) a->file = v;
      else if (strcmp(arg, "--threads") == 0) {
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (end == v || *end || errno || n < 1 || n > OP_ARGS_MAX_THREADS) {
          fprintf(stderr, "tunecli %s: error: --threads wants a thread count from 1 to %d, got '%s'\n", cmd,
                  OP_ARGS_MAX_THREADS, v);
          return false;
        }
        a->threads = (int)n;
      }
      else if (strcmp(arg, "--param") == 0) {
        if (!parse_param(cmd, v, a)) return false;
      } else if (nshape < 64) {
        shape_args[nshape++] = v; /* resolved once the op is known */
      } else {
        fprintf(stderr, "tunecli %s: error: more than 64 --shape options\n", cmd);
        return false;
      }
    } else if (takes_own_value(cmd, arg) && i + 1 < argc) {
      /* the command's own option and its value: the value is not the OP */
      rest[(*nrest)++] = argv[i];
      rest[(*nrest)++] = argv[++i];
    } else if (arg[0] != '-' && !a->op_name && (i == 0 || strcmp(cmd, "tune-op") != 0)) {
      /* (tune-op: only first, the others may be values of its tuning options) */
      a->op_name = arg;
    } else {
      rest[(*nrest)++] = argv[i];
    }
  }
  if (strcmp(cmd, "tune-op") != 0 && (a->schedule_file != NULL) + (a->records_file != NULL) + (a->template_name != NULL) > 1) {
    fprintf(stderr, "tunecli %s: error: give one of --schedule FILE, --records FILE, --template NAME\n", cmd);
    return false;
  }
  if (!resolve_op(cmd, a)) return false;
  bool shape_set_by_user[OP_ARGS_MAX_INPUTS] = {false};
  for (int s = 0; s < nshape; s++) {
    const char *v = shape_args[s];
    const char *eq = strchr(v, '=');
    int idx = eq ? input_index(a, v, (size_t)(eq - v)) : (a->ninputs == 1 ? 0 : -1);
    if (idx < 0) {
      fprintf(stderr, "tunecli %s: error: --shape '%s': name one input of %s (", cmd, v, a->name);
      for (int k = 0; k < a->ninputs; k++) fprintf(stderr, "%s%s", k ? ", " : "", a->input_names[k]);
      fprintf(stderr, "), e.g. --shape %s=1x3x32x32\n", a->input_names[0]);
      return false;
    }
    if (!parse_dims(eq ? eq + 1 : v, a->shapes[idx], &a->ndims[idx])) {
      fprintf(stderr, "tunecli %s: error: --shape '%s': want 1 to 8 positive extents like 1x64x56x56\n", cmd, v);
      return false;
    }
    if (shape_set_by_user[idx]) {
      fprintf(stderr, "tunecli %s: error: --shape '%s': the shape of %s is given twice\n", cmd, v, a->input_names[idx]);
      return false;
    }
    shape_set_by_user[idx] = true;
    a->shape_given[idx] = true;
  }
  for (int i = 0; i < a->ninputs; i++)
    if (!a->shape_given[i]) {
      fprintf(stderr, "tunecli %s: error: give the shape of input %s (--shape %s=...)\n", cmd, a->input_names[i],
              a->input_names[i]);
      return false;
    }
  return true;
}

bool op_args_register_user_op(const char *cmd, op_args *a) {
  if (!a->file) return true;
  const tsl_op_info *info;
  tsl_status st = tsl_op_register_user(a->def, tsl_dsl_op_text(a->def), &info);
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  a->keep_module = true;
  const tsl_template *tpl;
  if (tsl_dsl_op_schedule(a->def) && (st = tsl_user_dsl_template(a->def, &tpl)) != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  return true;
}

/* The one line show/run-op/compile print after a --records build: which algorithm,
 * template and record gave the schedule. */
static void note_record(op_args *a, const tsl_dispatch_info *info, bool family) {
  /* a static record's cost is an estimate, not a measurement (docs/cost_static.md) */
  char how[96] = "measured on";
  if (tsl_record_is_static(&info->record))
    snprintf(how, sizeof how, "estimated by the static cost model (%s) for", info->record.cost_model);
  char algo[256] = "";
  if (family) /* the layer's pick over every algorithm of its family, as the graph compiler's */
    snprintf(algo, sizeof algo, "algorithm %s (operator %s), ", info->algorithm, info->op_workload.op);
  int n = snprintf(a->record_note, sizeof a->record_note,
                   "from %s: %stemplate %s (%s), %s record, %.4f ms, %s %s%s, %d threads", a->records_file, algo,
                   info->template_name, info->config_str,
                   info->record.window_steps > 0 ? "final-plan (its steps and the ones after, per run)"
                   : info->in_model              ? "in-model"
                                                 : "isolated",
                   info->cost * 1e3, how, info->record.target,
                   info->match == TSL_MATCH_FAMILY ? " (same target family)" : "", info->record.threads);
  if (n >= (int)sizeof a->record_note) /* a long records path or config: say the line was cut */
    memcpy(a->record_note + sizeof a->record_note - 4, "...", 4);
}

/* tsl_schedule_check_fn over the target ctx points to (so a --schedule file's lowering
 * errors name their line). */
static tsl_status lowers_for_target(const tsl_schedule *s, void *ctx) { return tsl_user_schedule_lowers(s, ctx); }

/* --records: the best record's schedule of this instance. A conv layer's family workload
 * (ops/conv2d/algorithms_conv.h: the key `tunecli tune MODEL` writes) resolves as the graph
 * compiler resolves it: the best record over every algorithm of the family
 * (tsl_dispatch_schedule_any), whose operator then gives the program; an algorithm's own
 * operator over its own records of this instance (tsl_dispatch_schedule), else over that
 * algorithm's records of its layer (tsl_dispatch_schedule_conv_algo); any other operator
 * over its own templates (tsl_dispatch_schedule). */
static bool schedule_from_records(const char *cmd, op_args *a) {
  tsl_target t;
  tsl_records *db = NULL;
  tsl_workload w;
  const int64_t *shapes[OP_ARGS_MAX_INPUTS];
  for (int i = 0; i < a->ninputs; i++) shapes[i] = a->shapes[i];
  tsl_status st = tsl_target_parse(a->target, &t);
  if (st == TSL_OK) st = tsl_records_new(&db);
  if (st == TSL_OK) st = tsl_records_load(db, a->records_file, true, stderr);
  if (st == TSL_OK) st = tsl_workload_init(&w, a->name, a->ninputs, shapes, a->ndims, a->nparams, a->params);
  if (st != TSL_OK) {
    tsl_records_free(db);
    tunecli_fail(cmd, st);
    return false;
  }
  if (!op_args_register_user_op(cmd, a)) {
    tsl_records_free(db);
    return false;
  }
  tsl_tuner_register_templates();
  bool family = tsl_conv2d_is_family(&w);
  /* an algorithm's own operator (im2col, Winograd, ...): that algorithm's best record of
   * the layer it computes, under the layer's family key (tune MODEL) or the operator key
   * the layer's algorithm runs (tune-op of it), ranked as the graph compiler ranks them
   * (tuner/dispatch.h); an instance the compiler would not run (im2col at another
   * pack_rows) takes its own records first */
  tsl_conv2d_algo algo = TSL_CONV2D_DIRECT;
  tsl_conv2d_layer layer;
  bool algo_op = !family && tsl_conv2d_algo_of_op(a->name, NULL);
  tsl_workload inst = w;
  char *inst_key = NULL;
  if (algo_op && tsl_workload_key_of(&inst, &inst_key) != TSL_OK) tsl_clear_error();
  if (algo_op && (st = tsl_conv2d_layer_of_algo_workload(&w, &layer, &algo)) == TSL_OK)
    st = tsl_conv2d_family_workload(&layer, &w);
  tsl_status layer_st = st;
  char layer_why[512] = "";
  if (layer_st != TSL_OK) snprintf(layer_why, sizeof layer_why, "%s", tsl_last_error());
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info info;
  memset(&info, 0, sizeof info);
  if (st == TSL_OK)
    st = algo_op  ? tsl_dispatch_schedule_conv_algo(db, &t, &w, algo, NULL, &p, &s, &info)
         : family ? tsl_dispatch_schedule_any(db, &t, &w, NULL, &p, &s, &info)
                  : tsl_dispatch_schedule(db, &t, &w, NULL, &p, &s, &info);
  char *ran_key = NULL;
  if (algo_op && st == TSL_OK && tsl_workload_key_of(&info.op_workload, &ran_key) != TSL_OK) tsl_clear_error();
  bool other_instance = algo_op && (layer_st != TSL_OK || !ran_key || !inst_key || strcmp(ran_key, inst_key) != 0);
  free(ran_key);
  free(inst_key);
  if (other_instance && (layer_st != TSL_OK || st == TSL_OK)) {
    tsl_te_program *p2 = NULL;
    tsl_schedule *s2 = NULL;
    tsl_dispatch_info info2;
    tsl_status so = tsl_dispatch_schedule(db, &t, &inst, NULL, &p2, &s2, &info2);
    if (so == TSL_OK && info2.tuned) {
      tsl_schedule_free(s);
      p = p2;
      s = s2;
      info = info2;
      st = TSL_OK;
    } else if (so != TSL_OK && so != TSL_ERR_NOT_FOUND) {
      tsl_schedule_free(s);
      tsl_records_free(db);
      tunecli_fail(cmd, so);
      return false;
    } else {
      tsl_schedule_free(s2);
      if (so != TSL_OK) tsl_clear_error();
    }
  }
  if (layer_st != TSL_OK && !(st == TSL_OK && info.tuned)) { /* no layer, and no record of the instance */
    tsl_records_free(db);
    tunecli_fail(cmd, tsl_error(layer_st, "%s", layer_why));
    return false;
  }
  tsl_records_free(db);
  bool no_template = st == TSL_ERR_NOT_FOUND; /* the op has no template: it has no records either */
  if (no_template) tsl_clear_error();
  if (no_template || (st == TSL_OK && !info.tuned)) {
    tsl_schedule_free(s);
    char *key = NULL;
    if (tsl_workload_key_of(&w, &key) != TSL_OK) tsl_clear_error();
    char tbuf[192];
    fprintf(stderr,
            "tunecli %s: error: %s holds no usable record of %s on %s (nor its target family) for %s%s "
            "%s(tune it first: tunecli tune-op %s%s%s ... --records %s)\n",
            cmd, a->records_file, key ? key : a->name, tsl_target_str(&t, tbuf, sizeof tbuf),
            family ? "an algorithm of the conv family " : algo_op ? "the conv layer's algorithm of " : "a template of ",
            a->name, no_template ? "(it has no template: give its op a schedule block, docs/dsl.md section 11) " : "",
            a->name, a->file ? " --file " : "", a->file ? a->file : "",
            a->records_file);
    free(key);
    return false;
  }
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  a->program = p;
  a->schedule = s;
  note_record(a, &info, family || algo_op);
  return true;
}

/* --template NAME: the template's default config for this instance on --target, i.e. the
 * schedule the graph compiler and the tuner start from when there is no record. */
static bool schedule_from_template(const char *cmd, op_args *a) {
  if (!op_args_register_user_op(cmd, a)) return false;
  tsl_tuner_register_templates();
  const tsl_template *tpl = tsl_template_find(a->template_name);
  if (!tpl || strcmp(tpl->op, a->name) != 0) {
    const tsl_template *list[64];
    int n = tsl_template_list(a->name, list, 64);
    fprintf(stderr, "tunecli %s: error: --template '%s' is not a template of %s (%s", cmd, a->template_name, a->name,
            n ? "its templates: " : "it has none");
    for (int i = 0; i < n && i < 64; i++) fprintf(stderr, "%s%s", i ? ", " : "", list[i]->name);
    fprintf(stderr, ")\n");
    return false;
  }
  tsl_target t;
  tsl_config_space space;
  tsl_config c;
  tsl_status st = tsl_target_parse(a->target, &t);
  if (st == TSL_OK) st = tpl->space(a->program, &t, &space);
  if (st == TSL_OK) st = tpl->default_config(a->program, &t, &space, &c);
  if (st == TSL_OK) st = tpl->apply(a->program, &t, &space, &c, &a->schedule);
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  char cbuf[512];
  snprintf(a->record_note, sizeof a->record_note, "template %s, default config: %s", tpl->name,
           tsl_config_str(&space, &c, cbuf, sizeof cbuf));
  return true;
}

bool op_args_build(const char *cmd, op_args *a) {
  /* before the records lookup: it prefers records timed with this many threads */
  if (a->threads > 0) {
    tsl_status tst = tsl_set_num_threads(a->threads);
    if (tst != TSL_OK) {
      tunecli_fail(cmd, tst);
      return false;
    }
  }
  const int64_t *shapes[OP_ARGS_MAX_INPUTS];
  for (int i = 0; i < a->ninputs; i++) shapes[i] = a->shapes[i];
  tsl_status st = tsl_dsl_instantiate(a->def, a->ninputs, shapes, a->ndims, a->nparams, a->params, &a->program);
  if (st == TSL_OK) st = tsl_te_check(a->program);
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  if (a->schedule_file) {
    char *text = tunecli_read_text_file(cmd, a->schedule_file);
    if (!text) return false;
    tsl_target t;
    st = tsl_target_parse(a->target, &t);
    if (st != TSL_OK) {
      free(text);
      tunecli_fail(cmd, st);
      return false;
    }
    st = tsl_schedule_from_text_file_checked(a->program, text, a->schedule_file, lowers_for_target, &t, &a->schedule);
    free(text);
    if (st != TSL_OK) {
      fprintf(stderr, "tunecli %s: %s\n", cmd, tsl_last_error());
      return false;
    }
    return true;
  }
  if (a->records_file) return schedule_from_records(cmd, a);
  if (a->template_name) return schedule_from_template(cmd, a);
  st = tsl_schedule_create(a->program, &a->schedule);
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  return true;
}

void op_args_print_config(FILE *f, const op_args *a) {
  for (int i = 0; i < a->ninputs; i++) {
    fprintf(f, "%s%s=", i ? ", " : "", a->input_names[i]);
    for (int d = 0; d < a->ndims[i]; d++) fprintf(f, "%s%lld", d ? "x" : "", (long long)a->shapes[i][d]);
  }
  for (int i = 0; i < a->nparams; i++) {
    fprintf(f, "%s%s=", i ? ", " : "; ", a->params[i].name);
    if (a->params[i].kind == TSL_DSL_PARAM_INT) fprintf(f, "%lld", (long long)a->params[i].i);
    else fprintf(f, "%g", a->params[i].f);
  }
}

void op_args_free(op_args *a) {
  tsl_schedule_free(a->schedule);
  a->schedule = NULL;
  if (!a->keep_module) tsl_dsl_module_free(a->module); /* else registered: lives for the process */
  a->module = NULL;
}

static int cmp_double_asc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double tunecli_median_sort(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp_double_asc);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}
