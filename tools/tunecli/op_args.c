/* Operator arguments shared by tunecli commands: see op_args.h. */
#include "op_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tunecli_fail(const char *cmd, tsl_status st) {
  fprintf(stderr, "tunecli %s: error (%s): %s\n", cmd, tsl_status_name(st), tsl_last_error());
  return 1;
}

static bool parse_dims(const char *s, int64_t *dims, int *ndim) {
  *ndim = 0;
  const char *p = s;
  while (*p) {
    if (*ndim == 8) return false;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || v <= 0) return false;
    dims[(*ndim)++] = v;
    p = end;
    if (*p == 'x' || *p == 'X' || *p == ',') p++;
    else if (*p) return false;
  }
  return *ndim > 0;
}

static int input_index(const tsl_op_info *info, const char *name, size_t len) {
  for (int i = 0; i < info->ninputs; i++)
    if (strlen(info->input_names[i]) == len && strncmp(info->input_names[i], name, len) == 0) return i;
  return -1;
}

bool op_args_parse(const char *cmd, int argc, char **argv, op_args *a, char **rest, int *nrest) {
  memset(a, 0, sizeof *a);
  a->target = "host";
  *nrest = 0;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    bool has_value = i + 1 < argc;
    if (strcmp(arg, "--shape") == 0 || strcmp(arg, "--param") == 0 || strcmp(arg, "--schedule") == 0 ||
        strcmp(arg, "--target") == 0) {
      if (!has_value) {
        fprintf(stderr, "tunecli %s: error: %s needs a value\n", cmd, arg);
        return false;
      }
      const char *v = argv[++i];
      if (strcmp(arg, "--schedule") == 0) {
        a->schedule_file = v;
      } else if (strcmp(arg, "--target") == 0) {
        a->target = v;
      } else if (strcmp(arg, "--param") == 0) {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || a->nparams == OP_ARGS_MAX_PARAMS) {
          fprintf(stderr, "tunecli %s: error: --param wants NAME=VALUE, got '%s'\n", cmd, v);
          return false;
        }
        size_t len = (size_t)(eq - v);
        if (len >= sizeof a->param_names[0]) len = sizeof a->param_names[0] - 1;
        char *name = a->param_names[a->nparams];
        memcpy(name, v, len);
        name[len] = '\0';
        char *end;
        errno = 0;
        long long iv = strtoll(eq + 1, &end, 10);
        if (*end == '\0' && !errno && end != eq + 1) {
          a->params[a->nparams++] = tsl_dsl_int_param(name, iv);
        } else {
          double fv = strtod(eq + 1, &end);
          if (*end != '\0' || end == eq + 1) {
            fprintf(stderr, "tunecli %s: error: --param %s: '%s' is not a number\n", cmd, name, eq + 1);
            return false;
          }
          a->params[a->nparams++] = tsl_dsl_float_param(name, fv);
        }
      } else {
        /* --shape: resolved once the op is known (it may come after the shapes) */
        rest[(*nrest)++] = (char *)"--shape";
        rest[(*nrest)++] = (char *)v;
      }
    } else if (arg[0] != '-' && !a->op_name) {
      a->op_name = arg;
    } else {
      rest[(*nrest)++] = argv[i];
    }
  }
  if (!a->op_name) {
    fprintf(stderr, "tunecli %s: error: which operator? (try `tunecli list`)\n", cmd);
    return false;
  }
  tsl_status st = tsl_op_lookup(a->op_name, &a->info);
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  const tsl_op_info *info = a->info;
  if (info->ninputs > OP_ARGS_MAX_INPUTS) {
    fprintf(stderr, "tunecli %s: error: %s has too many inputs\n", cmd, info->name);
    return false;
  }
  for (int i = 0; i < info->ninputs; i++) {
    a->ndims[i] = info->example.ndims[i];
    memcpy(a->shapes[i], info->example.shapes[i], sizeof(int64_t) * (size_t)a->ndims[i]);
  }
  /* the example's params come first so that --param overrides them */
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
  /* resolve --shape now; keep the other leftovers */
  int kept = 0;
  for (int i = 0; i < *nrest; i++) {
    if (strcmp(rest[i], "--shape") == 0 && i + 1 < *nrest) {
      const char *v = rest[++i];
      const char *eq = strchr(v, '=');
      int idx = eq ? input_index(info, v, (size_t)(eq - v)) : (info->ninputs == 1 ? 0 : -1);
      const char *dims = eq ? eq + 1 : v;
      if (idx < 0) {
        fprintf(stderr, "tunecli %s: error: --shape '%s': name one input of %s (", cmd, v, info->name);
        for (int k = 0; k < info->ninputs; k++) fprintf(stderr, "%s%s", k ? ", " : "", info->input_names[k]);
        fprintf(stderr, "), e.g. --shape %s=1x3x32x32\n", info->input_names[0]);
        return false;
      }
      if (!parse_dims(dims, a->shapes[idx], &a->ndims[idx])) {
        fprintf(stderr, "tunecli %s: error: --shape '%s': dimensions must be positive integers like 1x64x56x56\n", cmd, v);
        return false;
      }
    } else {
      rest[kept++] = rest[i];
    }
  }
  *nrest = kept;
  return true;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (cap - n - 1 == 0) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  return buf;
}

bool op_args_build(const char *cmd, op_args *a) {
  const int64_t *shapes[OP_ARGS_MAX_INPUTS];
  for (int i = 0; i < a->info->ninputs; i++) shapes[i] = a->shapes[i];
  tsl_status st = tsl_op_instantiate(a->info->name, a->info->ninputs, shapes, a->ndims, a->nparams, a->params,
                                     &a->program);
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  if (a->schedule_file) {
    char *text = read_file(a->schedule_file);
    if (!text) {
      fprintf(stderr, "tunecli %s: error: cannot read schedule file '%s'\n", cmd, a->schedule_file);
      return false;
    }
    st = tsl_schedule_from_text(a->program, text, &a->schedule);
    free(text);
  } else {
    st = tsl_schedule_create(a->program, &a->schedule);
  }
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  return true;
}

void op_args_free(op_args *a) {
  tsl_schedule_free(a->schedule);
  a->schedule = NULL;
}
