/* Contiguous axes of a stage (axis_access.h). */
#include "schedule/axis_access.h"

#include <string.h>

#include "dsl/te.h"

#define MAX_BIND 16
#define MAX_INLINE_DEPTH 8
#define MAX_CHILDREN 8

/* An integer index as a function of the stage's root axes: c[a] the linear coefficient
 * of axis a; bits of `sub` the axes it depends on only through a quotient / remainder
 * of a unit-stride expression by a positive constant; bits of `nonlin` the axes it
 * depends on in any other non-linear way; k the constant term, which with c gives the
 * index exactly unless `inexact` (a variable other than the axes, a quotient, ...). */
typedef struct lin {
  double c[TSL_AXIS_ACCESS_MAX];
  unsigned sub, nonlin;
  double k;
  bool inexact;
} lin;

typedef struct binding {
  const tsl_expr *var;
  lin value;
} binding;

typedef struct walker {
  const tsl_schedule *s;
  int naxes;
  int64_t extent[TSL_AXIS_ACCESS_MAX]; /* of each root axis (the ranges min/max are decided by) */
  bool unit[TSL_AXIS_ACCESS_MAX];    /* some access moves by +1 */
  bool strided[TSL_AXIS_ACCESS_MAX]; /* some access moves otherwise */
  int fuse_first, fuse_last;         /* tsl_axis_fusable: the axes fused (first > last: none) */
  bool fuse_broken;                  /* some access does not walk them as one axis */
  const tsl_buffer *target;          /* tsl_axis_read_deps: the buffer whose reads count */
  unsigned deps;                     /* the axes its read indices depend on */
  unsigned dim_deps[TSL_AXIS_ACCESS_MAX]; /* the same per dimension of target */
} walker;

/* The children of e (at most MAX_CHILDREN; a call's further arguments are left out). */
static int children(const tsl_expr *e, const tsl_expr **out) {
  int n = 0;
  switch (e->kind) {
  case TSL_E_INT:
  case TSL_E_FLOAT:
  case TSL_E_VAR: break;
  case TSL_E_NOT:
  case TSL_E_CAST: out[n++] = e->un.a; break;
  case TSL_E_SELECT:
    out[n++] = e->select.cond;
    out[n++] = e->select.t;
    out[n++] = e->select.f;
    break;
  case TSL_E_BROADCAST: out[n++] = e->broadcast.value; break;
  case TSL_E_RAMP:
    out[n++] = e->ramp.base;
    out[n++] = e->ramp.stride;
    break;
  case TSL_E_LOAD:
    for (int i = 0; i < e->load.nindex && n < MAX_CHILDREN; i++) out[n++] = e->load.index[i];
    if (e->load.predicate && n < MAX_CHILDREN) out[n++] = e->load.predicate;
    break;
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs && n < MAX_CHILDREN; i++) out[n++] = e->call.args[i];
    break;
  case TSL_E_LET:
    out[n++] = e->let.value;
    out[n++] = e->let.body;
    break;
  case TSL_E_REDUCE:
    out[n++] = e->reduce.source;
    if (e->reduce.condition) out[n++] = e->reduce.condition;
    break;
  default: /* binary */
    out[n++] = e->bin.a;
    out[n++] = e->bin.b;
    break;
  }
  return n;
}

static unsigned dep_mask(const lin *l, int naxes) {
  unsigned m = l->sub | l->nonlin;
  for (int a = 0; a < naxes; a++)
    if (l->c[a] != 0) m |= 1u << a;
  return m;
}

/* Every axis e depends on, as non-linear. */
static lin all_nonlinear(const tsl_expr *e, const binding *env, int nenv, const walker *w, int depth);

/* The range [*lo, *hi] of an exact linear form over the axes' ranges (0 .. extent - 1);
 * false when l is not exact. */
static bool lin_range(const lin *l, const walker *w, double *lo, double *hi) {
  if (l->inexact || l->sub || l->nonlin) return false;
  *lo = *hi = l->k;
  for (int a = 0; a < w->naxes; a++) {
    double span = l->c[a] * (double)(w->extent[a] - 1);
    if (span < 0) *lo += span;
    else *hi += span;
  }
  return true;
}

/* min(a, b) or max(a, b) when the axes' ranges decide it: the operand it always is
 * (lowering's simplifier removes such a clamp); NULL otherwise. */
static const lin *decided_min_max(bool is_min, const lin *a, const lin *b, const walker *w) {
  lin d = *a;
  for (int i = 0; i < w->naxes; i++) d.c[i] -= b->c[i];
  d.k -= b->k;
  d.inexact |= b->inexact;
  d.sub |= b->sub;
  d.nonlin |= b->nonlin;
  double lo, hi;
  if (!lin_range(&d, w, &lo, &hi)) return NULL;
  if (hi <= 0) return is_min ? a : b; /* a <= b everywhere */
  if (lo >= 0) return is_min ? b : a; /* a >= b everywhere */
  return NULL;
}

static lin linear_form(const tsl_expr *e, const binding *env, int nenv, const walker *w, int depth) {
  lin r;
  memset(&r, 0, sizeof r);
  if (!e || depth > 64) return r.inexact = true, r;
  int naxes = w->naxes;
  int64_t k;
  switch (e->kind) {
  case TSL_E_INT:
    if (tsl_expr_is_const_int(e, &k)) r.k = (double)k;
    else r.inexact = true;
    return r;
  case TSL_E_FLOAT: return r.inexact = true, r;
  case TSL_E_VAR:
    for (int i = nenv - 1; i >= 0; i--)
      if (env[i].var == e) return env[i].value;
    return r.inexact = true, r; /* a scalar parameter: constant in the axes, value unknown */
  case TSL_E_CAST: return linear_form(e->un.a, env, nenv, w, depth + 1);
  case TSL_E_ADD:
  case TSL_E_SUB: {
    lin a = linear_form(e->bin.a, env, nenv, w, depth + 1), b = linear_form(e->bin.b, env, nenv, w, depth + 1);
    for (int i = 0; i < naxes; i++) r.c[i] = e->kind == TSL_E_ADD ? a.c[i] + b.c[i] : a.c[i] - b.c[i];
    r.k = e->kind == TSL_E_ADD ? a.k + b.k : a.k - b.k;
    r.inexact = a.inexact || b.inexact;
    r.sub = a.sub | b.sub;
    r.nonlin = a.nonlin | b.nonlin;
    return r;
  }
  case TSL_E_MIN:
  case TSL_E_MAX: {
    lin a = linear_form(e->bin.a, env, nenv, w, depth + 1), b = linear_form(e->bin.b, env, nenv, w, depth + 1);
    const lin *x = decided_min_max(e->kind == TSL_E_MIN, &a, &b, w);
    if (x) return *x;
    break;
  }
  case TSL_E_MUL: {
    const tsl_expr *x = NULL;
    if (tsl_expr_is_const_int(e->bin.b, &k)) x = e->bin.a;
    else if (tsl_expr_is_const_int(e->bin.a, &k)) x = e->bin.b;
    if (!x) break;
    if (k == 0) return r;
    r = linear_form(x, env, nenv, w, depth + 1);
    for (int i = 0; i < naxes; i++) r.c[i] *= (double)k;
    r.k *= (double)k;
    if (k != 1) r.nonlin |= r.sub, r.sub = 0; /* 2 * (x / 2): steps of 2 */
    return r;
  }
  case TSL_E_DIV:
  case TSL_E_MOD: {
    if (!tsl_expr_is_const_int(e->bin.b, &k) || k <= 0) break;
    lin a = linear_form(e->bin.a, env, nenv, w, depth + 1);
    r.inexact = true;
    r.nonlin = a.nonlin | a.sub;
    for (int i = 0; i < naxes; i++) {
      if (a.c[i] == 0 || (r.nonlin >> i & 1u)) continue;
      if (a.c[i] == 1) r.sub |= 1u << i;
      else r.nonlin |= 1u << i;
    }
    return r;
  }
  default: break;
  }
  return all_nonlinear(e, env, nenv, w, depth);
}

static lin all_nonlinear(const tsl_expr *e, const binding *env, int nenv, const walker *w, int depth) {
  lin r;
  memset(&r, 0, sizeof r);
  r.inexact = true;
  const tsl_expr *ch[MAX_CHILDREN];
  int n = children(e, ch);
  for (int i = 0; i < n; i++) {
    lin x = linear_form(ch[i], env, nenv, w, depth + 1);
    r.nonlin |= dep_mask(&x, w->naxes);
  }
  return r;
}

/* One access of buffer buf with index forms idx[0..ndim), its dimensions stored in the
 * order `order` (a stage's storage_order; NULL: row-major or the buffer's strides). */
static void record(walker *w, const tsl_buffer *buf, const int *order, const lin *idx) {
  int64_t rs = 1;
  double stride[TSL_AXIS_ACCESS_MAX] = {0};
  unsigned bad = 0, sub = 0;
  for (int k = buf->ndim - 1; k >= 0; k--) {
    int d = order ? order[k] : k;
    int64_t st = buf->strides && !order ? buf->strides[d] : rs;
    for (int a = 0; a < w->naxes; a++) stride[a] += idx[d].c[a] * (double)st;
    bad |= idx[d].nonlin;
    if (st == 1) sub |= idx[d].sub;
    else bad |= idx[d].sub;
    rs *= buf->shape[d];
  }
  /* axes first..last fused: each moves as far as one step of the axes inside it */
  double span = 1;
  for (int a = w->fuse_last; a > w->fuse_first && a < w->naxes; a--) {
    span *= (double)w->extent[a];
    if (((bad | sub) >> a & 1u) || ((bad | sub) >> (a - 1) & 1u) || stride[a - 1] != span * stride[w->fuse_last])
      w->fuse_broken = true;
  }
  for (int a = 0; a < w->naxes; a++) {
    bool b = bad >> a & 1u, s = sub >> a & 1u;
    if (b || (stride[a] != 0 && stride[a] != 1) || (s && stride[a] != 0)) w->strided[a] = true;
    else if (stride[a] == 1) w->unit[a] = true;
  }
}

static void walk(walker *w, const tsl_expr *e, const binding *env, int nenv, int depth) {
  if (!e) return;
  if (e->kind == TSL_E_LOAD) {
    int nd = e->load.nindex;
    lin idx[MAX_BIND];
    if (nd > (int)(sizeof idx / sizeof idx[0])) nd = (int)(sizeof idx / sizeof idx[0]);
    for (int i = 0; i < nd; i++) idx[i] = linear_form(e->load.index[i], env, nenv, w, 0);
    for (int i = 0; e->load.buf == w->target && i < nd; i++) {
      unsigned m = dep_mask(&idx[i], w->naxes);
      w->deps |= m;
      if (i < TSL_AXIS_ACCESS_MAX) w->dim_deps[i] |= m;
    }
    const tsl_te_tensor *t = tsl_te_tensor_of(e->load.buf);
    const tsl_stage *ps = t && t->op->kind == TSL_TE_COMPUTE ? tsl_schedule_stage_of_op(w->s, t->op) : NULL;
    if (ps && ps->attach == TSL_ATTACH_INLINE && depth < MAX_INLINE_DEPTH && t->op->naxis == nd && nd <= MAX_BIND) {
      binding inner[MAX_BIND];
      for (int i = 0; i < nd; i++) inner[i].var = t->op->axis[i].var, inner[i].value = idx[i];
      walk(w, t->op->body, inner, nd, depth + 1);
    } else {
      record(w, e->load.buf, ps && ps->attach != TSL_ATTACH_INLINE ? ps->storage_order : NULL, idx);
    }
  }
  const tsl_expr *ch[MAX_CHILDREN];
  int n = children(e, ch);
  for (int i = 0; i < n; i++) walk(w, ch[i], env, nenv, depth);
}

/* Walks every access of st (its write, then its body) into *w. */
static tsl_status walk_stage(const tsl_schedule *s, const tsl_stage *st, walker *w) {
  const tsl_te_op *op = st->op;
  int nsp = op->naxis, nr = op->nreduce;
  if (nsp + nr > TSL_AXIS_ACCESS_MAX)
    return tsl_error(TSL_ERR_INVALID, "axis access: stage %s has %d axes (at most %d)", st->name, nsp + nr,
                     TSL_AXIS_ACCESS_MAX);
  w->s = s;
  w->naxes = nsp + nr;
  for (int a = 0; a < nsp + nr; a++) w->extent[a] = a < st->nroot ? st->iters[a].extent : 1;
  binding env[2 * TSL_AXIS_ACCESS_MAX];
  memset(env, 0, sizeof env);
  int nenv = 0;
  for (int a = 0; a < nsp + nr; a++) {
    lin u;
    memset(&u, 0, sizeof u);
    u.c[a] = 1;
    env[nenv++] = (binding){a < nsp ? op->axis[a].var : op->reduce_axis[a - nsp].var, u};
    if (a >= nsp && op->body && op->body->kind == TSL_E_REDUCE && a - nsp < op->body->reduce.naxes &&
        op->body->reduce.axes[a - nsp].var != op->reduce_axis[a - nsp].var)
      env[nenv++] = (binding){op->body->reduce.axes[a - nsp].var, u};
  }
  /* the write out[axes...] */
  lin idx[TSL_AXIS_ACCESS_MAX];
  memset(idx, 0, sizeof idx);
  for (int d = 0; d < nsp; d++) idx[d].c[d] = 1;
  record(w, op->output->buf, st->is_output ? NULL : st->storage_order, idx);
  walk(w, op->body, env, nenv, 0);
  return TSL_OK;
}

tsl_status tsl_axis_contiguous(const tsl_schedule *s, const tsl_stage *st, bool *contiguous) {
  if (!s || !st || !contiguous) return tsl_error(TSL_ERR_INVALID, "axis access: NULL argument");
  for (int a = 0; a < TSL_AXIS_ACCESS_MAX; a++) contiguous[a] = false;
  walker w;
  memset(&w, 0, sizeof w);
  tsl_status rc = walk_stage(s, st, &w);
  for (int a = 0; rc == TSL_OK && a < w.naxes; a++) contiguous[a] = w.unit[a] && !w.strided[a];
  return rc;
}

tsl_status tsl_axis_fusable(const tsl_schedule *s, const tsl_stage *st, int first, int last, bool *fusable) {
  if (!s || !st || !fusable) return tsl_error(TSL_ERR_INVALID, "axis access: NULL argument");
  *fusable = false;
  if (first < 0 || last < first || last >= st->op->naxis)
    return tsl_error(TSL_ERR_INVALID, "axis access: axes %d..%d are not spatial axes of stage %s", first, last,
                     st->name);
  bool contig[TSL_AXIS_ACCESS_MAX];
  tsl_status rc = tsl_axis_contiguous(s, st, contig);
  if (rc != TSL_OK) return rc;
  walker w;
  memset(&w, 0, sizeof w);
  w.fuse_first = first;
  w.fuse_last = last;
  rc = walk_stage(s, st, &w);
  *fusable = rc == TSL_OK && contig[last] && !w.fuse_broken;
  return rc;
}

tsl_status tsl_axis_read_deps(const tsl_schedule *s, const tsl_stage *st, const tsl_buffer *buf, unsigned *deps) {
  if (!s || !st || !buf || !deps) return tsl_error(TSL_ERR_INVALID, "axis access: NULL argument");
  walker w;
  memset(&w, 0, sizeof w);
  w.target = buf;
  tsl_status rc = walk_stage(s, st, &w);
  *deps = rc == TSL_OK ? w.deps : 0;
  return rc;
}

tsl_status tsl_axis_read_dim_deps(const tsl_schedule *s, const tsl_stage *st, const tsl_buffer *buf, unsigned *deps) {
  if (!s || !st || !buf || !deps) return tsl_error(TSL_ERR_INVALID, "axis access: NULL argument");
  if (buf->ndim > TSL_AXIS_ACCESS_MAX)
    return tsl_error(TSL_ERR_INVALID, "axis access: tensor %s has %d dimensions (at most %d)", buf->name, buf->ndim,
                     TSL_AXIS_ACCESS_MAX);
  walker w;
  memset(&w, 0, sizeof w);
  w.target = buf;
  tsl_status rc = walk_stage(s, st, &w);
  for (int d = 0; d < buf->ndim; d++) deps[d] = rc == TSL_OK ? w.dim_deps[d] : 0;
  return rc;
}
