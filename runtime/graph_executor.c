/* The graph executor: a plan of kernel calls over planned buffers (graph_executor.h). */
#include "runtime/graph_executor.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/claim_policy.h"
#include "runtime/host_memory.h"
#include "runtime/parallel.h"
#include "tessel/runtime.h"

typedef enum { BUF_CONST, BUF_ACT, BUF_VIEW } buf_kind;

typedef struct plan_buf {
  buf_kind kind;
  tsl_tensor *constant; /* BUF_CONST (owned) */
  int base;             /* BUF_VIEW: the buffer viewed */
  int64_t offset;       /* BUF_ACT: arena offset; BUF_VIEW: offset into base */
  int64_t bytes;
} plan_buf;

typedef struct plan_step {
  const tsl_kernel *kernel;
  char *label;
  int nargs;
  int *bufs;
  bool *claimed; /* [nargs]: the argument's buffer is claimed before the call (tsl_graph_plan_claim_output) */
  bool any_claimed;
} plan_step;

typedef struct plan_io {
  char *name;
  int buf;
  tsl_graph_io_info info;
} plan_io;

struct tsl_graph_plan {
  tsl_module *module;
  int nbufs, cap_bufs;
  plan_buf *bufs;
  int nsteps, cap_steps;
  plan_step *steps;
  int ninputs, noutputs;
  plan_io *inputs, *outputs;
  int64_t arena_bytes;
  int claiming_steps; /* steps with a claimed argument */
};

struct tsl_graph_ctx {
  const tsl_graph_plan *plan;
  void *arena;
  void **ptrs;  /* data pointer of every buffer */
  void ***args; /* per step: pointers to the entries of ptrs (tsl_kernel_call's form) */
  int num_threads; /* this context's own thread count; 0: the process-wide setting */
  tsl_claim_policy claims;
};

tsl_status tsl_graph_plan_new(tsl_graph_plan **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "graph plan: NULL out");
  *out = calloc(1, sizeof **out);
  return *out ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "graph plan: out of memory");
}

void tsl_graph_plan_free(tsl_graph_plan *p) {
  if (!p) return;
  for (int i = 0; i < p->nbufs; i++) tsl_tensor_free(p->bufs[i].constant);
  for (int i = 0; i < p->nsteps; i++) {
    free(p->steps[i].label);
    free(p->steps[i].bufs);
    free(p->steps[i].claimed);
  }
  for (int i = 0; i < p->ninputs; i++) free(p->inputs[i].name);
  for (int i = 0; i < p->noutputs; i++) free(p->outputs[i].name);
  free(p->bufs);
  free(p->steps);
  free(p->inputs);
  free(p->outputs);
  tsl_module_free(p->module);
  free(p);
}

void tsl_graph_plan_set_module(tsl_graph_plan *p, tsl_module *m) {
  if (p) p->module = m;
}

static bool claimed_anywhere(const tsl_graph_plan *p, int buf, int *step);

static tsl_status push_buf(tsl_graph_plan *p, plan_buf b, int *id) {
  if (p->nbufs == p->cap_bufs) {
    int cap = p->cap_bufs ? 2 * p->cap_bufs : 64;
    plan_buf *nb = realloc(p->bufs, (size_t)cap * sizeof *nb);
    if (!nb) return tsl_error(TSL_ERR_NOMEM, "graph plan: out of memory");
    p->bufs = nb;
    p->cap_bufs = cap;
  }
  p->bufs[p->nbufs] = b;
  if (id) *id = p->nbufs;
  p->nbufs++;
  return TSL_OK;
}

tsl_status tsl_graph_plan_add_constant(tsl_graph_plan *p, tsl_tensor *t, int *buf) {
  if (!p || !t || !buf) {
    tsl_tensor_free(t);
    return tsl_error(TSL_ERR_INVALID, "graph plan: add_constant: NULL argument");
  }
  if (!tsl_tensor_is_contiguous(t)) {
    tsl_tensor_free(t);
    return tsl_error(TSL_ERR_INVALID, "graph plan: add_constant: the tensor is not compact");
  }
  plan_buf b = {BUF_CONST, t, -1, 0, (int64_t)tsl_tensor_nbytes(t)};
  tsl_status st = push_buf(p, b, buf);
  if (st != TSL_OK) tsl_tensor_free(t);
  return st;
}

tsl_status tsl_graph_plan_add_activation(tsl_graph_plan *p, int64_t offset, int64_t bytes, int *buf) {
  if (!p || !buf) return tsl_error(TSL_ERR_INVALID, "graph plan: add_activation: NULL argument");
  if (offset < 0 || offset % TSL_TENSOR_ALIGN || bytes < 0 || bytes > INT64_MAX - offset)
    return tsl_error(TSL_ERR_INVALID, "graph plan: activation at offset %lld of %lld bytes (offset must be a "
                     "non-negative multiple of %d)", (long long)offset, (long long)bytes, TSL_TENSOR_ALIGN);
  plan_buf b = {BUF_ACT, NULL, -1, offset, bytes};
  tsl_status st = push_buf(p, b, buf);
  if (st == TSL_OK && offset + bytes > p->arena_bytes) p->arena_bytes = offset + bytes;
  return st;
}

tsl_status tsl_graph_plan_add_view(tsl_graph_plan *p, int base, int64_t offset, int64_t bytes, int *buf) {
  if (!p || !buf) return tsl_error(TSL_ERR_INVALID, "graph plan: add_view: NULL argument");
  if (base < 0 || base >= p->nbufs) return tsl_error(TSL_ERR_INVALID, "graph plan: add_view: bad base buffer %d", base);
  if (offset < 0 || bytes < 0 || offset > p->bufs[base].bytes || bytes > p->bufs[base].bytes - offset)
    return tsl_error(TSL_ERR_INVALID, "graph plan: view [%lld, +%lld) outside buffer %d of %lld bytes",
                     (long long)offset, (long long)bytes, base, (long long)p->bufs[base].bytes);
  /* kernels take 64-byte aligned pointers (runtime/module.h) and claim that alignment */
  if (offset % TSL_TENSOR_ALIGN != 0)
    return tsl_error(TSL_ERR_INVALID, "graph plan: view at offset %lld of buffer %d is not %d-byte aligned",
                     (long long)offset, base, TSL_TENSOR_ALIGN);
  int claimer;
  if (claimed_anywhere(p, base, &claimer))
    return tsl_error(TSL_ERR_INVALID, "graph plan: add_view: buffer %d is the claimed output of step %s", base,
                     p->steps[claimer].label);
  plan_buf b = {BUF_VIEW, NULL, base, offset, bytes};
  return push_buf(p, b, buf);
}

int64_t tsl_graph_plan_buffer_bytes(const tsl_graph_plan *p, int buf) {
  return p && buf >= 0 && buf < p->nbufs ? p->bufs[buf].bytes : 0;
}

tsl_status tsl_graph_plan_add_step(tsl_graph_plan *p, const tsl_kernel *k, const char *label, int nargs,
                                   const int *bufs) {
  if (!p || !k || (nargs > 0 && !bufs)) return tsl_error(TSL_ERR_INVALID, "graph plan: add_step: NULL argument");
  const tsl_kernel_sig *sig = tsl_kernel_signature(k);
  if (sig->nargs != nargs)
    return tsl_error(TSL_ERR_INVALID, "graph plan: step %s: kernel %s takes %d arguments, given %d",
                     label ? label : "?", tsl_kernel_name(k), sig->nargs, nargs);
  for (int i = 0; i < nargs; i++) {
    if (sig->args[i] != TSL_ARG_PTR)
      return tsl_error(TSL_ERR_INVALID, "graph plan: kernel %s: argument %d is not a pointer", tsl_kernel_name(k), i);
    if (bufs[i] < 0 || bufs[i] >= p->nbufs)
      return tsl_error(TSL_ERR_INVALID, "graph plan: step %s: bad buffer id %d", label ? label : "?", bufs[i]);
  }
  if (p->nsteps == p->cap_steps) {
    int cap = p->cap_steps ? 2 * p->cap_steps : 64;
    plan_step *ns = realloc(p->steps, (size_t)cap * sizeof *ns);
    if (!ns) return tsl_error(TSL_ERR_NOMEM, "graph plan: out of memory");
    p->steps = ns;
    p->cap_steps = cap;
  }
  plan_step s = {k, strdup(label ? label : tsl_kernel_name(k)), nargs, malloc((size_t)(nargs ? nargs : 1) * sizeof(int)),
                 calloc((size_t)(nargs ? nargs : 1), sizeof(bool)), false};
  if (!s.label || !s.bufs || !s.claimed) {
    free(s.label);
    free(s.bufs);
    free(s.claimed);
    return tsl_error(TSL_ERR_NOMEM, "graph plan: out of memory");
  }
  if (nargs) memcpy(s.bufs, bufs, (size_t)nargs * sizeof(int));
  p->steps[p->nsteps++] = s;
  return TSL_OK;
}

/* The arena bytes [*lo, *hi) of an activation or a view (of a view ...) of one; false
 * for a constant or a view of one. */
static bool arena_range(const tsl_graph_plan *p, int buf, int64_t *lo, int64_t *hi) {
  int64_t off = 0, bytes = p->bufs[buf].bytes;
  while (p->bufs[buf].kind == BUF_VIEW) {
    off += p->bufs[buf].offset;
    buf = p->bufs[buf].base;
  }
  if (p->bufs[buf].kind != BUF_ACT) return false;
  *lo = off + p->bufs[buf].offset;
  *hi = *lo + bytes;
  return true;
}

static bool claimed_anywhere(const tsl_graph_plan *p, int buf, int *step) {
  for (int s = 0; s < p->nsteps; s++)
    for (int a = 0; a < p->steps[s].nargs; a++)
      if (p->steps[s].claimed[a] && p->steps[s].bufs[a] == buf) {
        *step = s;
        return true;
      }
  return false;
}

tsl_status tsl_graph_plan_claim_output(tsl_graph_plan *p, int step, int arg) {
  if (!p || step < 0 || step >= p->nsteps)
    return tsl_error(TSL_ERR_INVALID, "graph plan: claim_output: bad step %d", step);
  plan_step *st = &p->steps[step];
  if (arg < 0 || arg >= st->nargs)
    return tsl_error(TSL_ERR_INVALID, "graph plan: claim_output: step %s has no argument %d", st->label, arg);
  int buf = st->bufs[arg];
  const plan_buf *b = &p->bufs[buf];
  if (b->kind != BUF_ACT)
    return tsl_error(TSL_ERR_INVALID, "graph plan: claim_output: step %s argument %d is a %s, not an activation of "
                     "its own", st->label, arg, b->kind == BUF_VIEW ? "view" : "constant");
  for (int v = 0; v < p->nbufs; v++)
    if (p->bufs[v].kind == BUF_VIEW && p->bufs[v].base == buf)
      return tsl_error(TSL_ERR_INVALID, "graph plan: claim_output: step %s argument %d: buffer %d has views (other "
                       "steps may write parts of it)", st->label, arg, buf);
  for (int i = 0; i < p->ninputs; i++)
    if (p->inputs[i].buf == buf)
      return tsl_error(TSL_ERR_INVALID, "graph plan: claim_output: step %s argument %d is graph input %s",
                       st->label, arg, p->inputs[i].name);
  /* an output is first written by the step that claims it: a buffer an earlier step
   * passes holds bytes someone wrote before */
  for (int s = 0; s < step; s++)
    for (int a = 0; a < p->steps[s].nargs; a++)
      if (p->steps[s].bufs[a] == buf)
        return tsl_error(TSL_ERR_INVALID, "graph plan: claim_output: step %s argument %d: earlier step %s passes "
                         "the same buffer (an output is first written by the step that claims it)",
                         st->label, arg, p->steps[s].label);
  int64_t lo = b->offset, hi = b->offset + b->bytes, olo, ohi;
  for (int a = 0; a < st->nargs; a++)
    if (a != arg && arena_range(p, st->bufs[a], &olo, &ohi) && olo < hi && lo < ohi)
      return tsl_error(TSL_ERR_INVALID, "graph plan: claim_output: step %s argument %d overlaps its argument %d",
                       st->label, arg, a);
  st->claimed[arg] = true;
  if (!st->any_claimed) p->claiming_steps++;
  st->any_claimed = true;
  return TSL_OK;
}

bool tsl_graph_plan_step_claims(const tsl_graph_plan *p, int step) {
  return p && step >= 0 && step < p->nsteps && p->steps[step].any_claimed;
}

static tsl_status add_io(tsl_graph_plan *p, bool input, const char *name, int buf, tsl_dtype dt, int ndim,
                         const int64_t *shape) {
  const char *what = input ? "input" : "output";
  if (!p || (ndim > 0 && !shape)) return tsl_error(TSL_ERR_INVALID, "graph plan: add_%s: NULL argument", what);
  if (buf < 0 || buf >= p->nbufs) return tsl_error(TSL_ERR_INVALID, "graph plan: %s %s: bad buffer %d", what, name, buf);
  if (ndim < 0 || ndim > TSL_MAX_NDIM || !tsl_dtype_valid(dt))
    return tsl_error(TSL_ERR_INVALID, "graph plan: %s %s: bad dtype or rank", what, name ? name : "?");
  if (input && p->bufs[buf].kind == BUF_CONST)
    return tsl_error(TSL_ERR_INVALID, "graph plan: input %s is a constant buffer", name ? name : "?");
  int claimer;
  if (input && claimed_anywhere(p, buf, &claimer))
    return tsl_error(TSL_ERR_INVALID, "graph plan: input %s is the claimed output of step %s", name ? name : "?",
                     p->steps[claimer].label);
  int64_t esize = (int64_t)tsl_dtype_bytes(dt), numel;
  char where[160];
  snprintf(where, sizeof where, "graph plan: %s %s (its byte size must fit int64)", what, name ? name : "?");
  tsl_status st = tsl_shape_check(where, ndim, shape, INT64_MAX / esize, &numel);
  if (st != TSL_OK) return st;
  tsl_graph_io_info info = {NULL, dt, ndim, {0}, numel * esize};
  for (int d = 0; d < ndim; d++) info.shape[d] = shape[d];
  if (info.bytes != p->bufs[buf].bytes)
    return tsl_error(TSL_ERR_INVALID, "graph plan: %s %s holds %lld bytes, its buffer %lld", what, name ? name : "?",
                     (long long)info.bytes, (long long)p->bufs[buf].bytes);
  int *n = input ? &p->ninputs : &p->noutputs;
  plan_io **arr = input ? &p->inputs : &p->outputs;
  plan_io *na = realloc(*arr, (size_t)(*n + 1) * sizeof *na);
  if (!na) return tsl_error(TSL_ERR_NOMEM, "graph plan: out of memory");
  *arr = na;
  char *nm = strdup(name ? name : "");
  if (!nm) return tsl_error(TSL_ERR_NOMEM, "graph plan: out of memory");
  info.name = nm;
  na[*n] = (plan_io){nm, buf, info};
  (*n)++;
  return TSL_OK;
}

tsl_status tsl_graph_plan_add_input(tsl_graph_plan *p, const char *name, int buf, tsl_dtype dt, int ndim,
                                    const int64_t *shape) {
  return add_io(p, true, name, buf, dt, ndim, shape);
}

tsl_status tsl_graph_plan_add_output(tsl_graph_plan *p, const char *name, int buf, tsl_dtype dt, int ndim,
                                     const int64_t *shape) {
  return add_io(p, false, name, buf, dt, ndim, shape);
}

int tsl_graph_plan_num_steps(const tsl_graph_plan *p) { return p ? p->nsteps : 0; }
int tsl_graph_plan_num_inputs(const tsl_graph_plan *p) { return p ? p->ninputs : 0; }
int tsl_graph_plan_num_outputs(const tsl_graph_plan *p) { return p ? p->noutputs : 0; }

const char *tsl_graph_plan_step_label(const tsl_graph_plan *p, int step) {
  return p && step >= 0 && step < p->nsteps ? p->steps[step].label : NULL;
}

const tsl_kernel *tsl_graph_plan_step_kernel(const tsl_graph_plan *p, int step) {
  return p && step >= 0 && step < p->nsteps ? p->steps[step].kernel : NULL;
}

tsl_graph_io_info tsl_graph_plan_input_info(const tsl_graph_plan *p, int i) {
  tsl_graph_io_info none = {0};
  return p && i >= 0 && i < p->ninputs ? p->inputs[i].info : none;
}

tsl_graph_io_info tsl_graph_plan_output_info(const tsl_graph_plan *p, int i) {
  tsl_graph_io_info none = {0};
  return p && i >= 0 && i < p->noutputs ? p->outputs[i].info : none;
}

/* find_io: the index of the input (or output) called `name`; the NOT_FOUND message
 * lists the names there are. */
static tsl_status find_io(const tsl_graph_plan *p, bool input, const char *name, int *i) {
  const char *what = input ? "input" : "output";
  if (!p || !name || !i) return tsl_error(TSL_ERR_INVALID, "tsl_graph_plan_find_%s: NULL argument", what);
  int n = input ? p->ninputs : p->noutputs;
  char names[512] = "";
  size_t len = 0;
  for (int k = 0; k < n; k++) {
    const char *nm = (input ? p->inputs[k] : p->outputs[k]).info.name;
    if (nm && strcmp(nm, name) == 0) {
      *i = k;
      return TSL_OK;
    }
    if (len < sizeof names)
      len += (size_t)snprintf(names + len, sizeof names - len, "%s'%s'", k ? ", " : "", nm ? nm : "");
  }
  return tsl_error(TSL_ERR_NOT_FOUND, "no %s named '%s' (the model's %ss: %s)", what, name, what, n ? names : "none");
}

tsl_status tsl_graph_plan_find_input(const tsl_graph_plan *p, const char *name, int *i) {
  return find_io(p, true, name, i);
}

tsl_status tsl_graph_plan_find_output(const tsl_graph_plan *p, const char *name, int *i) {
  return find_io(p, false, name, i);
}

int64_t tsl_graph_plan_arena_bytes(const tsl_graph_plan *p) { return p ? p->arena_bytes : 0; }

int64_t tsl_graph_plan_constant_bytes(const tsl_graph_plan *p) {
  int64_t n = 0;
  for (int i = 0; p && i < p->nbufs; i++)
    if (p->bufs[i].kind == BUF_CONST) n += p->bufs[i].bytes;
  return n;
}

tsl_status tsl_graph_ctx_new(const tsl_graph_plan *p, tsl_graph_ctx **out) {
  if (!p || !out) return tsl_error(TSL_ERR_INVALID, "graph context: NULL argument");
  tsl_graph_ctx *c = calloc(1, sizeof *c);
  if (!c) return tsl_error(TSL_ERR_NOMEM, "graph context: out of memory");
  c->plan = p;
  tsl_claim_policy_init(&c->claims, TSL_CLAIMS_AUTO);
  size_t arena = (size_t)(p->arena_bytes + TSL_TENSOR_ALIGN - 1) / TSL_TENSOR_ALIGN * TSL_TENSOR_ALIGN;
  c->arena = tsl_host_alloc_zeroed(arena, TSL_TENSOR_ALIGN); /* huge pages when large */
  c->ptrs = calloc((size_t)(p->nbufs ? p->nbufs : 1), sizeof *c->ptrs);
  c->args = calloc((size_t)(p->nsteps ? p->nsteps : 1), sizeof *c->args);
  if (!c->arena || !c->ptrs || !c->args) {
    tsl_graph_ctx_free(c);
    return tsl_error(TSL_ERR_NOMEM, "graph context: out of memory (arena of %lld bytes)", (long long)p->arena_bytes);
  }
  /* views always follow their base (add_view checks the id exists), so one pass fills all */
  for (int i = 0; i < p->nbufs; i++) {
    const plan_buf *b = &p->bufs[i];
    if (b->kind == BUF_CONST) c->ptrs[i] = b->constant->data;
    else if (b->kind == BUF_ACT) c->ptrs[i] = (char *)c->arena + b->offset;
    else c->ptrs[i] = (char *)c->ptrs[b->base] + b->offset;
  }
  for (int s = 0; s < p->nsteps; s++) {
    c->args[s] = malloc((size_t)(p->steps[s].nargs ? p->steps[s].nargs : 1) * sizeof(void *));
    if (!c->args[s]) {
      tsl_graph_ctx_free(c);
      return tsl_error(TSL_ERR_NOMEM, "graph context: out of memory");
    }
    for (int a = 0; a < p->steps[s].nargs; a++) c->args[s][a] = &c->ptrs[p->steps[s].bufs[a]];
  }
  *out = c;
  return TSL_OK;
}

void tsl_graph_ctx_free(tsl_graph_ctx *c) {
  if (!c) return;
  for (int s = 0; c->args && s < c->plan->nsteps; s++) free(c->args[s]);
  free(c->args);
  free(c->ptrs);
  tsl_host_free(c->arena);
  free(c);
}

void *tsl_graph_ctx_input(tsl_graph_ctx *c, int i) {
  return c && i >= 0 && i < c->plan->ninputs ? c->ptrs[c->plan->inputs[i].buf] : NULL;
}

const void *tsl_graph_ctx_output(const tsl_graph_ctx *c, int i) {
  return c && i >= 0 && i < c->plan->noutputs ? c->ptrs[c->plan->outputs[i].buf] : NULL;
}

/* Kernels of few pointer arguments are called directly (a few ns) rather than through
 * libffi (tens of ns): the ABI of runtime/module.h fixes their prototype. */
typedef int32_t (*fn1)(void *);
typedef int32_t (*fn2)(void *, void *);
typedef int32_t (*fn3)(void *, void *, void *);
typedef int32_t (*fn4)(void *, void *, void *, void *);
typedef int32_t (*fn5)(void *, void *, void *, void *, void *);
typedef int32_t (*fn6)(void *, void *, void *, void *, void *, void *);

static tsl_status call_step(tsl_graph_ctx *c, int s) {
  const plan_step *st = &c->plan->steps[s];
  void *fn = tsl_kernel_fn(st->kernel);
  void **a = c->ptrs;
  const int *b = st->bufs;
  int32_t rc;
  switch (st->nargs) {
  case 1: rc = ((fn1)fn)(a[b[0]]); break;
  case 2: rc = ((fn2)fn)(a[b[0]], a[b[1]]); break;
  case 3: rc = ((fn3)fn)(a[b[0]], a[b[1]], a[b[2]]); break;
  case 4: rc = ((fn4)fn)(a[b[0]], a[b[1]], a[b[2]], a[b[3]]); break;
  case 5: rc = ((fn5)fn)(a[b[0]], a[b[1]], a[b[2]], a[b[3]], a[b[4]]); break;
  case 6: rc = ((fn6)fn)(a[b[0]], a[b[1]], a[b[2]], a[b[3]], a[b[4]], a[b[5]]); break;
  default: {
    tsl_status r = tsl_kernel_call(st->kernel, (void *const *)c->args[s], st->nargs);
    if (r != TSL_OK) return tsl_error(r, "graph run: step %d (%s): %s", s, st->label, tsl_last_error());
    return TSL_OK;
  }
  }
  if (rc != 0)
    return tsl_error(TSL_ERR_RUNTIME, "graph run: step %d (%s): kernel %s returned %d", s, st->label,
                     tsl_kernel_name(st->kernel), (int)rc);
  return TSL_OK;
}

/* Claiming: participant i of a launch of `parts` zeroes the i-th of `parts` equal
 * 64-byte-aligned pieces of the buffer, so that each piece's cache lines are owned by
 * the thread whose static share of the kernel's parallel loop writes it (kernels split
 * their outermost loop into contiguous shares in participant order, runtime/parallel.h). */
typedef struct claim_job {
  unsigned char *data;
  int64_t bytes, piece;
} claim_job;

static int32_t claim_piece(int64_t begin, int64_t end, void *closure) {
  const claim_job *j = closure;
  for (int64_t i = begin; i < end; i++) {
    int64_t lo = i * j->piece, hi = lo + j->piece < j->bytes ? lo + j->piece : j->bytes;
    if (lo < hi) memset(j->data + lo, 0, (size_t)(hi - lo));
  }
  return 0;
}

/* A buffer below this many bytes a thread is not claimed: the launch would cost more
 * than the lines it saves. */
#define CLAIM_MIN_BYTES_PER_THREAD 4096

static void claim_outputs(tsl_graph_ctx *c, const plan_step *st, int threads) {
  for (int a = 0; a < st->nargs; a++) {
    if (!st->claimed[a]) continue;
    int64_t bytes = c->plan->bufs[st->bufs[a]].bytes;
    claim_job j = {c->ptrs[st->bufs[a]], bytes, ((bytes + threads - 1) / threads + 63) / 64 * 64};
    /* claim_piece cannot fail: the launch's status is always 0 */
    if (j.data && bytes >= (int64_t)threads * CLAIM_MIN_BYTES_PER_THREAD)
      (void)tsl_parallel_for(claim_piece, &j, threads);
  }
}

tsl_status tsl_graph_run(tsl_graph_ctx *c, double *step_seconds) {
  if (!c) return tsl_error(TSL_ERR_INVALID, "graph run: NULL context");
  int prev_threads = c->num_threads ? tsl_parallel_set_local_threads(c->num_threads) : 0;
  int threads = tsl_get_num_threads();
  /* the workers stay awake from one step's launch to the next (runtime/parallel.h) */
  bool warm = tsl_parallel_warm_begin();
  /* claims match the kernels' shares only when their loops split statically over all
   * the threads: not nested in a parallel task (warm is false there), not under a
   * dynamic schedule (the balanced one runs each thread's static share front to back;
   * only the last pieces of a share that another thread takes from its back move) */
  tsl_sched kind;
  tsl_get_parallel_schedule(&kind, NULL);
  bool can_claim = warm && threads > 1 && (kind == TSL_SCHED_STATIC || kind == TSL_SCHED_BALANCED) &&
                   c->plan->claiming_steps > 0;
  /* claims or not by the context's mode (under TSL_CLAIMS_AUTO the kind of run timed
   * faster here, runtime/claim_policy.h) */
  bool claim = can_claim && tsl_claim_policy_next(&c->claims);
  bool timed = can_claim && c->claims.mode == TSL_CLAIMS_AUTO;
  double run_t0 = timed ? tsl_time_now() : 0.0;
  tsl_status st = TSL_OK;
  for (int s = 0; s < c->plan->nsteps && st == TSL_OK; s++) {
    double t0 = step_seconds ? tsl_time_now() : 0.0;
    if (claim && c->plan->steps[s].any_claimed) claim_outputs(c, &c->plan->steps[s], threads);
    st = call_step(c, s);
    if (st == TSL_OK && step_seconds) step_seconds[s] = tsl_time_now() - t0;
  }
  if (timed)
    tsl_claim_policy_record(&c->claims, claim, st == TSL_OK ? tsl_time_now() - run_t0 : 0.0,
                            (int64_t)threads * 4 + (int64_t)kind);
  tsl_parallel_warm_end(warm);
  if (c->num_threads) tsl_parallel_set_local_threads(prev_threads);
  return st;
}

tsl_status tsl_graph_ctx_set_num_threads(tsl_graph_ctx *c, int n) {
  if (!c) return tsl_error(TSL_ERR_INVALID, "tsl_graph_ctx_set_num_threads: NULL context");
  if (n < 0 || n > TSL_MAX_THREADS)
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_ctx_set_num_threads: %d threads (allowed 1..%d, or 0 for the "
                     "process-wide setting)", n, TSL_MAX_THREADS);
  c->num_threads = n;
  return TSL_OK;
}

tsl_status tsl_graph_ctx_set_claims(tsl_graph_ctx *c, tsl_claims_mode m) {
  if (!c) return tsl_error(TSL_ERR_INVALID, "tsl_graph_ctx_set_claims: NULL context");
  tsl_status st = tsl_claims_mode_check("tsl_graph_ctx_set_claims", m);
  if (st == TSL_OK) tsl_claim_policy_init(&c->claims, m);
  return st;
}

bool tsl_graph_ctx_claims_next(const tsl_graph_ctx *c) {
  return c && c->plan->claiming_steps > 0 && tsl_claim_policy_next(&c->claims);
}

int tsl_graph_ctx_claims_kept(const tsl_graph_ctx *c) {
  if (!c || c->plan->claiming_steps == 0) return 0;
  return tsl_claim_policy_kept(&c->claims);
}

int tsl_graph_ctx_num_threads(const tsl_graph_ctx *c) {
  if (!c) return 0;
  return c->num_threads ? c->num_threads : tsl_get_num_threads();
}
