/* The operator registry: parses the families' DSL texts once (pthread_once) and serves
 * lookups from the resulting table, which lives for the process. */
#include "ops/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/families.h"

static const struct {
  const char *alias, *name;
} aliases[] = {{"conv2d", "conv2d_nchw"}};

static pthread_once_t registry_once = PTHREAD_ONCE_INIT;
/* users' operators (tsl_op_register_user), each info malloc'd and kept for the process */
enum { MAX_USER_OPS = 64 };
static pthread_mutex_t user_lock = PTHREAD_MUTEX_INITIALIZER;
static tsl_op_info *users[MAX_USER_OPS];
static int nusers;
static tsl_op_info *infos;
static const tsl_op_info **info_list;
static int ninfos;

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "tessel op registry: out of memory\n");
    abort();
  }
  return p;
}

/* A built-in text that does not parse is a bug in tessel, not user input. */
static void add_family(const tsl_op_source *src, int n) {
  for (int i = 0; i < n; i++) {
    const tsl_op_source *s = &src[i];
    char filename[96];
    snprintf(filename, sizeof filename, "builtin:%s", s->name);
    tsl_dsl_module *m;
    if (tsl_dsl_parse(s->text, filename, &m) != TSL_OK) {
      fprintf(stderr, "tessel op registry: built-in operator %s does not parse:\n%s\n", s->name, tsl_last_error());
      abort();
    }
    const tsl_dsl_op *def = tsl_dsl_module_find(m, s->name);
    if (!def || tsl_dsl_module_count(m) != 1) {
      fprintf(stderr, "tessel op registry: the text of %s must define exactly op %s\n", s->name, s->name);
      abort();
    }
    tsl_op_info *info = &infos[ninfos++];
    info->name = s->name;
    info->text = s->text;
    info->description = s->description;
    info->ninputs = tsl_dsl_op_ninputs(def);
    const char **inputs = xcalloc((size_t)info->ninputs, sizeof(char *));
    for (int k = 0; k < info->ninputs; k++) inputs[k] = tsl_dsl_op_input(def, k)->name;
    info->input_names = inputs;
    info->nparams = tsl_dsl_op_nparams(def);
    const char **params = xcalloc((size_t)info->nparams, sizeof(char *));
    for (int k = 0; k < info->nparams; k++) params[k] = tsl_dsl_op_param(def, k)->name;
    info->param_names = params;
    info->example = s->example;
    info->def = def; /* the module stays alive with the registry */
  }
}

/* Every operator family, in `tunecli list` order. A new family file adds one line here
 * and one declaration in families.h. */
static const tsl_op_source *(*const families[])(int *n) = {
    tsl_ops_matmul_family,
    tsl_ops_conv2d_family,
    tsl_ops_elemwise_family,
    tsl_ops_winograd_family,
    tsl_ops_conv2d_nchwc_family,
    tsl_ops_layout_family,
    tsl_ops_depthwise_family,
    tsl_ops_expand_depthwise_family,
    tsl_ops_im2col_family,
    tsl_ops_pool_family,
    tsl_ops_nn_family,
    tsl_ops_binary_family,
};
enum { NFAMILIES = sizeof families / sizeof families[0] };

static void registry_init(void) {
  int counts[NFAMILIES], total = 0;
  const tsl_op_source *srcs[NFAMILIES];
  for (int f = 0; f < NFAMILIES; f++) {
    srcs[f] = families[f](&counts[f]);
    total += counts[f];
  }
  infos = xcalloc((size_t)total, sizeof(tsl_op_info));
  for (int f = 0; f < NFAMILIES; f++) add_family(srcs[f], counts[f]);
  info_list = xcalloc((size_t)ninfos, sizeof(tsl_op_info *));
  for (int i = 0; i < ninfos; i++) info_list[i] = &infos[i];
}

const tsl_op_info *const *tsl_op_list(int *n) {
  pthread_once(&registry_once, registry_init);
  if (n) *n = ninfos;
  return info_list;
}

tsl_status tsl_op_lookup(const char *name, const tsl_op_info **out) {
  if (out) *out = NULL;
  if (!name || !out) return tsl_error(TSL_ERR_INVALID, "tsl_op_lookup: NULL name or output");
  pthread_once(&registry_once, registry_init);
  const char *canonical = name;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(aliases[i].alias, name) == 0) canonical = aliases[i].name;
  for (int i = 0; i < ninfos; i++)
    if (strcmp(infos[i].name, canonical) == 0) {
      *out = &infos[i];
      return TSL_OK;
    }
  pthread_mutex_lock(&user_lock);
  for (int i = 0; i < nusers && !*out; i++)
    if (strcmp(users[i]->name, name) == 0) *out = users[i];
  pthread_mutex_unlock(&user_lock);
  if (*out) return TSL_OK;
  char known[512];
  size_t o = 0;
  known[0] = '\0';
  for (int i = 0; i < ninfos && o < sizeof known; i++)
    o += (size_t)snprintf(known + o, sizeof known - o, "%s%s", i ? ", " : "", infos[i].name);
  return tsl_error(TSL_ERR_NOT_FOUND, "op registry: unknown operator '%s' (known: %s)", name, known);
}

tsl_status tsl_op_instantiate(const char *name, int ninputs, const int64_t *const *shapes, const int *ndims,
                              int nparams, const tsl_dsl_param_value *params, tsl_te_program **out) {
  if (out) *out = NULL;
  if (!out) return tsl_error(TSL_ERR_INVALID, "tsl_op_instantiate: NULL output");
  const tsl_op_info *info;
  tsl_status st = tsl_op_lookup(name, &info);
  if (st != TSL_OK) return st;
  tsl_te_program *p;
  if ((st = tsl_dsl_instantiate(info->def, ninputs, shapes, ndims, nparams, params, &p)) != TSL_OK) return st;
  if ((st = tsl_te_check(p)) != TSL_OK) return st;
  *out = p;
  return TSL_OK;
}

tsl_status tsl_op_register_user(const tsl_dsl_op *def, const char *text, const tsl_op_info **out) {
  if (out) *out = NULL;
  if (!def || !text || !out) return tsl_error(TSL_ERR_INVALID, "tsl_op_register_user: NULL argument");
  const char *name = tsl_dsl_op_name(def);
  pthread_once(&registry_once, registry_init);
  const char *canonical = name;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(aliases[i].alias, name) == 0) canonical = aliases[i].name;
  for (int i = 0; i < ninfos; i++)
    if (strcmp(infos[i].name, canonical) == 0)
      return tsl_error(TSL_ERR_INVALID,
                       "op registry: your op '%s' has the name of a built-in operator (tunecli list): rename it", name);
  tsl_status st = TSL_OK;
  pthread_mutex_lock(&user_lock);
  for (int i = 0; i < nusers && !*out; i++) {
    if (strcmp(users[i]->name, name) != 0) continue;
    if (users[i]->def == def || strcmp(users[i]->text, text) == 0) *out = users[i];
    else st = tsl_error(TSL_ERR_INVALID, "op registry: another op called '%s' is registered already", name);
  }
  if (!*out && st == TSL_OK) {
    tsl_op_info *info = calloc(1, sizeof *info);
    char *text_copy = strdup(text);
    int ni = tsl_dsl_op_ninputs(def), np = tsl_dsl_op_nparams(def);
    const char **inputs = calloc((size_t)(ni ? ni : 1), sizeof(char *));
    const char **params = calloc((size_t)(np ? np : 1), sizeof(char *));
    if (nusers >= MAX_USER_OPS) {
      st = tsl_error(TSL_ERR_INVALID, "op registry: more than %d users' operators", MAX_USER_OPS);
    } else if (!info || !text_copy || !inputs || !params) {
      st = tsl_error(TSL_ERR_NOMEM, "op registry: out of memory");
    } else {
      for (int k = 0; k < ni; k++) inputs[k] = tsl_dsl_op_input(def, k)->name;
      for (int k = 0; k < np; k++) params[k] = tsl_dsl_op_param(def, k)->name;
      *info = (tsl_op_info){.name = name, .text = text_copy, .description = "a user's operator (DSL file)",
                            .ninputs = ni, .input_names = inputs, .nparams = np, .param_names = params, .def = def};
      users[nusers++] = info;
      *out = info;
    }
    if (st != TSL_OK) {
      free(info);
      free(text_copy);
      free(inputs);
      free(params);
    }
  }
  pthread_mutex_unlock(&user_lock);
  return st;
}
