/* Generated operators (op_call.h): building and reading calls, the text helpers, and the
 * registry of generators. */
#include "ops/op_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/families.h"

int tsl_op_call_add_tensor(tsl_op_call *c, int ndim, const int64_t *shape, int block) {
  int a = c->nargs;
  if (a >= TSL_OP_CALL_MAX_ARGS || ndim < 0 || ndim > TSL_MAX_NDIM) {
    c->overflow = true;
    return -1;
  }
  c->args[a].ndim = ndim;
  for (int d = 0; d < ndim; d++) c->args[a].shape[d] = shape[d];
  c->args[a].block = block;
  c->nargs++;
  return a;
}

static tsl_op_attr *new_attr(tsl_op_call *c, const char *name, tsl_op_attr_kind kind) {
  if (c->nattrs >= TSL_OP_CALL_MAX_ATTRS) {
    c->overflow = true;
    return NULL;
  }
  tsl_op_attr *a = &c->attrs[c->nattrs++];
  memset(a, 0, sizeof *a);
  a->name = name;
  a->kind = kind;
  return a;
}

bool tsl_op_call_set_int(tsl_op_call *c, const char *name, int64_t v) {
  tsl_op_attr *a = new_attr(c, name, TSL_OP_ATTR_INT);
  if (a) a->i = v;
  return a != NULL;
}

bool tsl_op_call_set_float(tsl_op_call *c, const char *name, double v) {
  tsl_op_attr *a = new_attr(c, name, TSL_OP_ATTR_FLOAT);
  if (a) a->f = v;
  return a != NULL;
}

bool tsl_op_call_set_ints(tsl_op_call *c, const char *name, int n, const int64_t *v) {
  if (n < 0 || n > TSL_OP_ATTR_MAX_INTS) {
    c->overflow = true;
    return false;
  }
  tsl_op_attr *a = new_attr(c, name, TSL_OP_ATTR_INTS);
  if (!a) return false;
  a->nints = n;
  for (int i = 0; i < n; i++) a->ints[i] = v[i];
  return true;
}

bool tsl_op_call_set_string(tsl_op_call *c, const char *name, const char *v) {
  tsl_op_attr *a = new_attr(c, name, TSL_OP_ATTR_STRING);
  if (a) a->s = v;
  return a != NULL;
}

const tsl_op_attr *tsl_op_call_attr(const tsl_op_call *c, const char *name) {
  for (int i = c->nattrs - 1; i >= 0; i--)
    if (strcmp(c->attrs[i].name, name) == 0) return &c->attrs[i];
  return NULL;
}

int64_t tsl_op_call_int(const tsl_op_call *c, const char *name, int64_t dflt) {
  const tsl_op_attr *a = tsl_op_call_attr(c, name);
  if (!a) return dflt;
  return a->kind == TSL_OP_ATTR_INT ? a->i : a->kind == TSL_OP_ATTR_FLOAT ? (int64_t)a->f : dflt;
}

double tsl_op_call_float(const tsl_op_call *c, const char *name, double dflt) {
  const tsl_op_attr *a = tsl_op_call_attr(c, name);
  if (!a) return dflt;
  return a->kind == TSL_OP_ATTR_FLOAT ? a->f : a->kind == TSL_OP_ATTR_INT ? (double)a->i : dflt;
}

const int64_t *tsl_op_call_ints(const tsl_op_call *c, const char *name, int *n) {
  const tsl_op_attr *a = tsl_op_call_attr(c, name);
  if (!a || a->kind != TSL_OP_ATTR_INTS) {
    *n = 0;
    return NULL;
  }
  *n = a->nints;
  return a->ints;
}

const char *tsl_op_call_string(const tsl_op_call *c, const char *name, const char *dflt) {
  const tsl_op_attr *a = tsl_op_call_attr(c, name);
  return a && a->kind == TSL_OP_ATTR_STRING && a->s ? a->s : dflt;
}

void tsl_op_text_view(tsl_op_text *t, int a, int nd, const int64_t *dims) {
  t->ndims[a] = nd;
  for (int d = 0; d < nd; d++) t->views[a][d] = dims[d];
  if (a >= t->nargs) t->nargs = a + 1;
}

void tsl_op_text_header(tsl_op_text *t, int ninputs) {
  tsl_text_put(&t->text, "op k(");
  for (int a = 0; a < ninputs; a++) {
    tsl_text_put(&t->text, "%sx%d: f32[", a ? ", " : "", a);
    for (int d = 0; d < t->ndims[a]; d++)
      tsl_text_put(&t->text, "%s%lld", d ? ", " : "", (long long)t->views[a][d]);
    tsl_text_put(&t->text, "]");
  }
  tsl_text_put(&t->text, ")\n");
}

/* Every family's generators, in `tunecli list` order. A family with generators adds one
 * line here and one declaration in families.h. */
static const tsl_op_generator *(*const generator_families[])(int *n) = {
    tsl_ops_nn_generators,
    tsl_ops_conv2d_generators,
    tsl_ops_matmul_generators,
};
enum { NGENFAMILIES = sizeof generator_families / sizeof generator_families[0] };

/* Up to this many generators in all (a static table: no allocation, no init order). */
enum { MAX_GENERATORS = 128 };

static const tsl_op_generator *const *collect(int *n) {
  static const tsl_op_generator *list[MAX_GENERATORS];
  static int count = -1;
  if (count < 0) { /* idempotent: racing first callers write the same table */
    int k = 0;
    for (int f = 0; f < NGENFAMILIES; f++) {
      int m;
      const tsl_op_generator *g = generator_families[f](&m);
      for (int i = 0; i < m && k < MAX_GENERATORS; i++) list[k++] = &g[i];
    }
    __atomic_store_n(&count, k, __ATOMIC_RELEASE);
  }
  *n = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
  return list;
}

const tsl_op_generator *const *tsl_op_generator_list(int *n) {
  int k;
  const tsl_op_generator *const *l = collect(&k);
  if (n) *n = k;
  return l;
}

tsl_status tsl_op_generator_lookup(const char *name, const tsl_op_generator **out) {
  if (out) *out = NULL;
  if (!name || !out) return tsl_error(TSL_ERR_INVALID, "tsl_op_generator_lookup: NULL name or output");
  int n;
  const tsl_op_generator *const *l = collect(&n);
  for (int i = 0; i < n; i++)
    if (strcmp(l[i]->name, name) == 0) {
      *out = l[i];
      return TSL_OK;
    }
  char known[1024];
  size_t o = 0;
  known[0] = '\0';
  for (int i = 0; i < n && o < sizeof known; i++)
    o += (size_t)snprintf(known + o, sizeof known - o, "%s%s", i ? ", " : "", l[i]->name);
  return tsl_error(TSL_ERR_NOT_FOUND, "op registry: no generated operator '%s' (known: %s)", name, known);
}

tsl_status tsl_op_generate(const char *name, const tsl_op_call *call, tsl_op_text *out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "tsl_op_generate: NULL output");
  memset(out, 0, sizeof *out);
  if (!name || !call) return tsl_error(TSL_ERR_INVALID, "tsl_op_generate: NULL name or call");
  int nargs = call->nargs;
  if (nargs < 1 || nargs > TSL_OP_CALL_MAX_ARGS || call->ninputs < 0 || call->ninputs > nargs)
    return tsl_error(TSL_ERR_INVALID, "%s: %d arguments, %d of them inputs (1..%d arguments in all)", name, nargs,
                     call->ninputs, TSL_OP_CALL_MAX_ARGS);
  const tsl_op_generator *g;
  tsl_status st = tsl_op_generator_lookup(name, &g);
  if (st != TSL_OK) return st;
  if (call->overflow)
    return tsl_error(TSL_ERR_INVALID, "%s: an argument or attribute did not fit in the call (at most %d arguments of rank "
                     "<= %d, %d attributes, %d integers a list)", name, TSL_OP_CALL_MAX_ARGS, TSL_MAX_NDIM,
                     TSL_OP_CALL_MAX_ATTRS, TSL_OP_ATTR_MAX_INTS);
  st = g->fn(call, out);
  if (st == TSL_OK && out->text.oom) st = tsl_error(TSL_ERR_NOMEM, "%s: out of memory writing the kernel text", name);
  if (st == TSL_OK && out->nargs != nargs)
    st = tsl_error(TSL_ERR_INVALID, "%s: the generator gave views for %d of %d arguments", name, out->nargs, nargs);
  if (st != TSL_OK) {
    free(out->text.s);
    out->text.s = NULL;
  }
  return st;
}
