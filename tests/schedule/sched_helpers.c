/* Shared helpers of the schedule suites (see sched_tests.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codegen/jit.h"
#include "dsl/te_interp.h"
#include "runtime/module.h"
#include "sched_tests.h"
#include "target/target.h"

st_arena st_arena_begin(void) {
  st_arena a;
  a.arena = tsl_arena_new();
  a.prev = tsl_arena_set_current(a.arena);
  return a;
}

void st_arena_end(st_arena a) {
  tsl_arena_set_current(a.prev);
  tsl_arena_free(a.arena);
}

/* ---- programs ---- */

tsl_te_program *st_matmul(int64_t M, int64_t N, int64_t K) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 2, (int64_t[]){M, K});
  tsl_te_tensor *B = tsl_te_placeholder("B", TSL_F32, 2, (int64_t[]){K, N});
  tsl_iter_var *ax = tsl_te_axes(2, (int64_t[]){M, N}, (const char *[]){"i", "j"});
  tsl_iter_var k = tsl_te_reduce_axis("k", 0, K);
  tsl_expr *a = tsl_te_read(A, 2, (tsl_expr *[]){ax[0].var, k.var});
  tsl_expr *b = tsl_te_read(B, 2, (tsl_expr *[]){k.var, ax[1].var});
  tsl_te_tensor *C = tsl_te_compute("C", 2, ax, tsl_te_sum(tsl_mul(a, b), 1, &k, NULL), NULL);
  if (!C) return NULL;
  return tsl_te_program_new("matmul", 2, (tsl_te_tensor *[]){A, B}, 1, &C);
}

tsl_te_program *st_conv_padded(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
                               int64_t pad, int64_t stride) {
  tsl_te_tensor *data = tsl_te_placeholder("data", TSL_F32, 4, (int64_t[]){N, C, H, W});
  tsl_te_tensor *weight = tsl_te_placeholder("weight", TSL_F32, 4, (int64_t[]){K, C, R, S});
  int64_t PH = H + 2 * pad, PW = W + 2 * pad;
  tsl_iter_var *pa = tsl_te_axes(4, (int64_t[]){N, C, PH, PW}, (const char *[]){"n", "c", "y", "x"});
  tsl_expr *y = pa[2].var, *x = pa[3].var, *P = tsl_i64(pad);
  tsl_expr *inside = tsl_and(tsl_and(tsl_ge(y, P), tsl_lt(y, tsl_i64(H + pad))),
                             tsl_and(tsl_ge(x, P), tsl_lt(x, tsl_i64(W + pad))));
  tsl_expr *rd = tsl_te_read(data, 4, (tsl_expr *[]){pa[0].var, pa[1].var, tsl_sub(y, P), tsl_sub(x, P)});
  tsl_te_tensor *padded = tsl_te_compute("padded", 4, pa, tsl_select(inside, rd, tsl_f32(0.0f)), "injective");
  if (!padded) return NULL;
  int64_t OH = (PH - R) / stride + 1, OW = (PW - S) / stride + 1;
  tsl_iter_var *oa = tsl_te_axes(4, (int64_t[]){N, K, OH, OW}, (const char *[]){"n", "k", "y", "x"});
  tsl_iter_var red[3] = {tsl_te_reduce_axis("rc", 0, C), tsl_te_reduce_axis("ry", 0, R),
                         tsl_te_reduce_axis("rx", 0, S)};
  tsl_expr *st = tsl_i64(stride);
  tsl_expr *pv = tsl_te_read(padded, 4,
                             (tsl_expr *[]){oa[0].var, red[0].var, tsl_add(tsl_mul(oa[2].var, st), red[1].var),
                                            tsl_add(tsl_mul(oa[3].var, st), red[2].var)});
  tsl_expr *wv = tsl_te_read(weight, 4, (tsl_expr *[]){oa[1].var, red[0].var, red[1].var, red[2].var});
  tsl_te_tensor *out = tsl_te_compute("out", 4, oa, tsl_te_sum(tsl_mul(pv, wv), 3, red, NULL), "conv2d");
  if (!out) return NULL;
  return tsl_te_program_new("conv", 2, (tsl_te_tensor *[]){data, weight}, 1, &out);
}

tsl_te_program *st_depthwise_padded(int64_t N, int64_t C, int64_t H, int64_t W, int64_t R, int64_t S, int64_t pad,
                                    int64_t stride) {
  tsl_te_tensor *data = tsl_te_placeholder("data", TSL_F32, 4, (int64_t[]){N, C, H, W});
  tsl_te_tensor *weight = tsl_te_placeholder("weight", TSL_F32, 4, (int64_t[]){C, 1, R, S});
  int64_t PH = H + 2 * pad, PW = W + 2 * pad;
  tsl_iter_var *pa = tsl_te_axes(4, (int64_t[]){N, C, PH, PW}, (const char *[]){"n", "c", "y", "x"});
  tsl_expr *y = pa[2].var, *x = pa[3].var, *P = tsl_i64(pad);
  tsl_expr *inside = tsl_and(tsl_and(tsl_ge(y, P), tsl_lt(y, tsl_i64(H + pad))),
                             tsl_and(tsl_ge(x, P), tsl_lt(x, tsl_i64(W + pad))));
  tsl_expr *rd = tsl_te_read(data, 4, (tsl_expr *[]){pa[0].var, pa[1].var, tsl_sub(y, P), tsl_sub(x, P)});
  tsl_te_tensor *padded = tsl_te_compute("padded", 4, pa, tsl_select(inside, rd, tsl_f32(0.0f)), "injective");
  if (!padded) return NULL;
  int64_t OH = (PH - R) / stride + 1, OW = (PW - S) / stride + 1;
  tsl_iter_var *oa = tsl_te_axes(4, (int64_t[]){N, C, OH, OW}, (const char *[]){"n", "c", "y", "x"});
  tsl_iter_var red[2] = {tsl_te_reduce_axis("ry", 0, R), tsl_te_reduce_axis("rx", 0, S)};
  tsl_expr *st = tsl_i64(stride);
  tsl_expr *pv = tsl_te_read(padded, 4,
                             (tsl_expr *[]){oa[0].var, oa[1].var, tsl_add(tsl_mul(oa[2].var, st), red[0].var),
                                            tsl_add(tsl_mul(oa[3].var, st), red[1].var)});
  tsl_expr *wv = tsl_te_read(weight, 4, (tsl_expr *[]){oa[1].var, tsl_i64(0), red[0].var, red[1].var});
  tsl_te_tensor *out = tsl_te_compute("out", 4, oa, tsl_te_sum(tsl_mul(pv, wv), 2, red, NULL), "depthwise");
  if (!out) return NULL;
  return tsl_te_program_new("depthwise", 2, (tsl_te_tensor *[]){data, weight}, 1, &out);
}

/* out[i] = combiner(j: A[i, j]) as stage `stage` of program `prog`. */
static tsl_te_program *row_reduce(int64_t M, int64_t N, tsl_combiner c, const char *stage, const char *prog) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 2, (int64_t[]){M, N});
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){M}, (const char *[]){"i"});
  tsl_iter_var j = tsl_te_reduce_axis("j", 0, N);
  tsl_expr *a = tsl_te_read(A, 2, (tsl_expr *[]){ax[0].var, j.var});
  tsl_te_tensor *out = tsl_te_compute(stage, 1, ax, tsl_reduce(c, a, 1, &j, NULL), NULL);
  if (!out) return NULL;
  return tsl_te_program_new(prog, 1, &A, 1, &out);
}

tsl_te_program *st_row_max(int64_t M, int64_t N) { return row_reduce(M, N, TSL_REDUCE_MAX, "rmax", "row_max"); }

tsl_te_program *st_row_sum(int64_t M, int64_t N) { return row_reduce(M, N, TSL_REDUCE_SUM, "rsum", "row_sum"); }

tsl_te_program *st_elemwise_chain(int64_t M, int64_t N) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 2, (int64_t[]){M, N});
  tsl_iter_var *ax = tsl_te_axes(2, (int64_t[]){M, N}, (const char *[]){"i", "j"});
  tsl_expr *a = tsl_te_read(A, 2, (tsl_expr *[]){ax[0].var, ax[1].var});
  tsl_te_tensor *B = tsl_te_compute("B", 2, ax, tsl_mul(a, tsl_f32(2.0f)), "elemwise");
  if (!B) return NULL;
  tsl_iter_var *bx = tsl_te_axes(2, (int64_t[]){M, N}, (const char *[]){"i", "j"});
  tsl_expr *b = tsl_te_read(B, 2, (tsl_expr *[]){bx[0].var, bx[1].var});
  tsl_te_tensor *out = tsl_te_compute("out", 2, bx, tsl_add(b, tsl_f32(1.0f)), "elemwise");
  if (!out) return NULL;
  return tsl_te_program_new("chain", 1, &A, 1, &out);
}

tsl_te_program *st_row_center(int64_t M, int64_t N) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 2, (int64_t[]){M, N});
  tsl_iter_var *rx = tsl_te_axes(1, (int64_t[]){M}, (const char *[]){"i"});
  tsl_iter_var j = tsl_te_reduce_axis("j", 0, N);
  tsl_expr *a = tsl_te_read(A, 2, (tsl_expr *[]){rx[0].var, j.var});
  tsl_te_tensor *rowsum = tsl_te_compute("rowsum", 1, rx, tsl_te_sum(a, 1, &j, NULL), NULL);
  if (!rowsum) return NULL;
  tsl_iter_var *ox = tsl_te_axes(2, (int64_t[]){M, N}, (const char *[]){"i", "j"});
  tsl_expr *a2 = tsl_te_read(A, 2, (tsl_expr *[]){ox[0].var, ox[1].var});
  tsl_expr *rs = tsl_te_read(rowsum, 1, (tsl_expr *[]){ox[0].var});
  tsl_te_tensor *out = tsl_te_compute("out", 2, ox, tsl_sub(a2, rs), "injective");
  if (!out) return NULL;
  return tsl_te_program_new("row_center", 1, &A, 1, &out);
}

/* ---- IR inspection ---- */

typedef void (*expr_fn)(const tsl_expr *e, void *ud);

static void walk_expr(const tsl_expr *e, expr_fn fn, void *ud) {
  if (!e) return;
  fn(e, ud);
  switch (e->kind) {
  case TSL_E_INT: case TSL_E_FLOAT: case TSL_E_VAR: return;
  case TSL_E_NOT: case TSL_E_CAST: walk_expr(e->un.a, fn, ud); return;
  case TSL_E_SELECT:
    walk_expr(e->select.cond, fn, ud);
    walk_expr(e->select.t, fn, ud);
    walk_expr(e->select.f, fn, ud);
    return;
  case TSL_E_BROADCAST: walk_expr(e->broadcast.value, fn, ud); return;
  case TSL_E_RAMP:
    walk_expr(e->ramp.base, fn, ud);
    walk_expr(e->ramp.stride, fn, ud);
    return;
  case TSL_E_LOAD:
    for (int i = 0; i < e->load.nindex; i++) walk_expr(e->load.index[i], fn, ud);
    walk_expr(e->load.predicate, fn, ud);
    return;
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs; i++) walk_expr(e->call.args[i], fn, ud);
    return;
  case TSL_E_LET:
    walk_expr(e->let.value, fn, ud);
    walk_expr(e->let.body, fn, ud);
    return;
  case TSL_E_REDUCE:
    walk_expr(e->reduce.source, fn, ud);
    walk_expr(e->reduce.condition, fn, ud);
    return;
  default:
    walk_expr(e->bin.a, fn, ud);
    walk_expr(e->bin.b, fn, ud);
    return;
  }
}

typedef void (*stmt_fn)(const tsl_stmt *s, void *ud);

/* Pre-order over statements; expressions of each statement go to efn. */
static void walk_stmt(const tsl_stmt *s, stmt_fn sfn, expr_fn efn, void *ud) {
  if (!s) return;
  if (sfn) sfn(s, ud);
  switch (s->kind) {
  case TSL_S_FOR:
    if (efn) walk_expr(s->loop.min, efn, ud), walk_expr(s->loop.extent, efn, ud);
    walk_stmt(s->loop.body, sfn, efn, ud);
    return;
  case TSL_S_STORE:
    if (efn) {
      for (int i = 0; i < s->store.nindex; i++) walk_expr(s->store.index[i], efn, ud);
      walk_expr(s->store.value, efn, ud);
      walk_expr(s->store.predicate, efn, ud);
    }
    return;
  case TSL_S_ALLOCATE: walk_stmt(s->allocate.body, sfn, efn, ud); return;
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) walk_stmt(s->seq.stmts[i], sfn, efn, ud);
    return;
  case TSL_S_IF:
    if (efn) walk_expr(s->if_.cond, efn, ud);
    walk_stmt(s->if_.then_case, sfn, efn, ud);
    walk_stmt(s->if_.else_case, sfn, efn, ud);
    return;
  case TSL_S_LET:
    if (efn) walk_expr(s->let.value, efn, ud);
    walk_stmt(s->let.body, sfn, efn, ud);
    return;
  case TSL_S_EVALUATE:
    if (efn) walk_expr(s->evaluate.value, efn, ud);
    return;
  }
}

static void count_stmt(const tsl_stmt *s, void *ud) {
  st_counts *c = ud;
  if (s->kind == TSL_S_FOR) {
    c->loops++;
    switch (s->loop.for_kind) {
    case TSL_FOR_SERIAL: c->serial++; break;
    case TSL_FOR_PARALLEL: c->parallel++; break;
    case TSL_FOR_VECTORIZED: c->vectorized++; break;
    case TSL_FOR_UNROLLED: c->unrolled++; break;
    }
  } else if (s->kind == TSL_S_ALLOCATE) {
    c->allocates++;
  } else if (s->kind == TSL_S_STORE) {
    c->stores++;
    if (s->store.value->type.lanes > 1) c->vector_stores++;
    if (s->store.predicate) c->predicated_stores++;
    if (s->store.nindex > 1) c->multi_index_accesses++;
  }
}

static void count_expr(const tsl_expr *e, void *ud) {
  st_counts *c = ud;
  if (e->kind != TSL_E_LOAD) return;
  c->loads++;
  if (e->type.lanes > 1) c->vector_loads++;
  if (e->load.predicate) c->predicated_loads++;
  if (e->load.nindex > 1) c->multi_index_accesses++;
}

st_counts st_count(const tsl_stmt *s) {
  st_counts c;
  memset(&c, 0, sizeof c);
  walk_stmt(s, count_stmt, count_expr, &c);
  return c;
}

static bool find_store(const tsl_stmt *s, const char *buf, bool want_const, const tsl_stmt **path, int depth,
                       char *out, size_t n) {
  if (!s) return false;
  switch (s->kind) {
  case TSL_S_FOR:
    path[depth] = s;
    return find_store(s->loop.body, buf, want_const, path, depth + 1, out, n);
  case TSL_S_STORE: {
    const tsl_expr *v = s->store.value;
    bool is_const = v->kind == TSL_E_INT || v->kind == TSL_E_FLOAT ||
                    (v->kind == TSL_E_BROADCAST && (v->broadcast.value->kind == TSL_E_FLOAT ||
                                                    v->broadcast.value->kind == TSL_E_INT));
    if (strcmp(s->store.buf->name, buf) != 0 || is_const != want_const) return false;
    out[0] = '\0';
    for (int i = 0; i < depth; i++) {
      size_t len = strlen(out);
      snprintf(out + len, n - len, "%s%s", i ? " " : "", path[i]->loop.var->var.name);
    }
    return true;
  }
  case TSL_S_ALLOCATE: return find_store(s->allocate.body, buf, want_const, path, depth, out, n);
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++)
      if (find_store(s->seq.stmts[i], buf, want_const, path, depth, out, n)) return true;
    return false;
  case TSL_S_IF:
    return find_store(s->if_.then_case, buf, want_const, path, depth, out, n) ||
           find_store(s->if_.else_case, buf, want_const, path, depth, out, n);
  case TSL_S_LET: return find_store(s->let.body, buf, want_const, path, depth, out, n);
  case TSL_S_EVALUATE: return false;
  }
  return false;
}

bool st_loops_around_store(const tsl_stmt *s, const char *buf, bool want_const_value, char *out, size_t n) {
  const tsl_stmt *path[64];
  return find_store(s, buf, want_const_value, path, 0, out, n);
}

typedef struct alloc_search {
  const char *name;
  const tsl_buffer *buf;
} alloc_search;

static void alloc_in_stmt(const tsl_stmt *s, void *ud) {
  alloc_search *as = ud;
  if (!as->buf && s->kind == TSL_S_ALLOCATE && strcmp(s->allocate.buf->name, as->name) == 0) as->buf = s->allocate.buf;
}

const tsl_buffer *st_find_allocation(const tsl_stmt *s, const char *name) {
  alloc_search as = {name, NULL};
  walk_stmt(s, alloc_in_stmt, NULL, &as);
  return as.buf;
}

typedef struct name_search {
  const char *name;
  bool found;
} name_search;

static void name_in_stmt(const tsl_stmt *s, void *ud) {
  name_search *ns = ud;
  if ((s->kind == TSL_S_STORE && strcmp(s->store.buf->name, ns->name) == 0) ||
      (s->kind == TSL_S_ALLOCATE && strcmp(s->allocate.buf->name, ns->name) == 0))
    ns->found = true;
}

static void name_in_expr(const tsl_expr *e, void *ud) {
  name_search *ns = ud;
  if (e->kind == TSL_E_LOAD && strcmp(e->load.buf->name, ns->name) == 0) ns->found = true;
}

bool st_mentions_buffer(const tsl_stmt *s, const char *name) {
  name_search ns = {name, false};
  walk_stmt(s, name_in_stmt, name_in_expr, &ns);
  return ns.found;
}

typedef struct buf_check {
  const tsl_func *f;
  const tsl_buffer *local[64];
  int nlocal;
  bool ok;
} buf_check;

static bool known_buffer(const buf_check *bc, const tsl_buffer *b) {
  for (int i = 0; i < bc->f->nargs; i++)
    if (bc->f->args[i].is_buffer && bc->f->args[i].buf == b) return true;
  for (int i = 0; i < bc->nlocal; i++)
    if (bc->local[i] == b) return true;
  return false;
}

static void collect_local(const tsl_stmt *s, void *ud) {
  buf_check *bc = ud;
  if (s->kind == TSL_S_ALLOCATE && bc->nlocal < 64) bc->local[bc->nlocal++] = s->allocate.buf;
}

static void check_stmt_buf(const tsl_stmt *s, void *ud) {
  buf_check *bc = ud;
  if (s->kind == TSL_S_STORE && !known_buffer(bc, s->store.buf)) bc->ok = false;
}

static void check_expr_buf(const tsl_expr *e, void *ud) {
  buf_check *bc = ud;
  if (e->kind == TSL_E_LOAD && !known_buffer(bc, e->load.buf)) bc->ok = false;
}

bool st_buffers_are_args_or_local(const tsl_func *f) {
  buf_check bc;
  memset(&bc, 0, sizeof bc);
  bc.f = f;
  bc.ok = true;
  walk_stmt(f->body, collect_local, NULL, &bc);
  walk_stmt(f->body, check_stmt_buf, check_expr_buf, &bc);
  return bc.ok;
}

typedef struct binder_check {
  const tsl_expr *seen[4096];
  int n;
  bool ok;
} binder_check;

static void note_binder(binder_check *bc, const tsl_expr *v) {
  for (int i = 0; i < bc->n; i++)
    if (bc->seen[i] == v) bc->ok = false;
  if (bc->n < 4096) bc->seen[bc->n++] = v;
}

static void binder_stmt(const tsl_stmt *s, void *ud) {
  if (s->kind == TSL_S_FOR) note_binder(ud, s->loop.var);
  if (s->kind == TSL_S_LET) note_binder(ud, s->let.var);
}

static void binder_expr(const tsl_expr *e, void *ud) {
  if (e->kind == TSL_E_LET) note_binder(ud, e->let.var);
}

bool st_binders_unique(const tsl_stmt *s) {
  binder_check *bc = calloc(1, sizeof *bc);
  bc->ok = true;
  walk_stmt(s, binder_stmt, binder_expr, bc);
  bool ok = bc->ok;
  free(bc);
  return ok;
}

/* ---- running kernels ---- */

static tsl_jit *suite_jit;

int st_host_vector_bits(void) {
  tsl_target t;
  return tsl_target_parse("host", &t) == TSL_OK ? t.vector_bits : 0;
}

tsl_func *st_lower_host(const tsl_schedule *s, const char *name, tsl_tail_strategy tail) {
  tsl_lower_options o = tsl_lower_options_default();
  o.tail = tail;
  o.vector_bits = st_host_vector_bits();
  tsl_func *f = NULL;
  if (tsl_lower_with(s, name, &o, &f) != TSL_OK) fprintf(stderr, "\n%s: %s\n", name, tsl_last_error());
  return f;
}

void st_jit_release(void) {
  tsl_jit_free(suite_jit);
  suite_jit = NULL;
}

bool st_run(const tsl_func *f, void *const *data) {
  if (!suite_jit) {
    tsl_target t;
    if (tsl_target_parse("host", &t) != TSL_OK || tsl_jit_new(&t, &suite_jit) != TSL_OK) {
      fprintf(stderr, "\nschedule tests: no JIT: %s\n", tsl_last_error());
      return false;
    }
  }
  tsl_module *m = NULL;
  const tsl_kernel *k = NULL;
  bool ok = tsl_module_new(&m) == TSL_OK && tsl_jit_compile(suite_jit, f, m, NULL) == TSL_OK &&
            tsl_module_get_kernel(m, f->name, &k) == TSL_OK;
  if (ok) {
    void *ptrs[TSL_MAX_KERNEL_ARGS];
    void *argv[TSL_MAX_KERNEL_ARGS];
    for (int i = 0; i < f->nargs && i < TSL_MAX_KERNEL_ARGS; i++) {
      ptrs[i] = data[i];
      argv[i] = &ptrs[i];
    }
    ok = tsl_kernel_call(k, argv, f->nargs) == TSL_OK;
  }
  if (!ok) fprintf(stderr, "\nschedule tests: kernel %s: %s\n", f->name, tsl_last_error());
  tsl_module_free(m);
  return ok;
}

float *st_alloc_f32(int64_t n) {
  size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(float) + 63) / 64 * 64;
  float *p = aligned_alloc(64, bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

/* The buffer ends exactly where an inaccessible page begins, so any load or store past
 * its last element faults at once (the JIT's code is not instrumented by ASan). */
float *st_alloc_guarded(int64_t n) {
  size_t bytes = (size_t)n * sizeof(float);
  if (n <= 0 || bytes % 64 != 0) return NULL;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t data_pages = (bytes + page - 1) / page;
  char *base = mmap(NULL, (data_pages + 1) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return NULL;
  if (mprotect(base + data_pages * page, page, PROT_NONE) != 0) {
    munmap(base, (data_pages + 1) * page);
    return NULL;
  }
  return (float *)(base + data_pages * page - bytes);
}

void st_free_guarded(float *p, int64_t n) {
  if (!p) return;
  size_t bytes = (size_t)n * sizeof(float);
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t data_pages = (bytes + page - 1) / page;
  char *end = (char *)p + bytes;
  munmap(end - data_pages * page, (data_pages + 1) * page);
}

bool st_interpret_f32(const tsl_te_program *p, float *const *inputs, float *out) {
  tsl_tensor *t[9] = {0};
  int n = p->ninputs + 1;
  bool ok = p->noutputs == 1 && n <= 9;
  for (int i = 0; ok && i < n; i++) {
    const tsl_buffer *b = i < p->ninputs ? p->inputs[i]->buf : p->outputs[0]->buf;
    ok = b->dtype.code == TSL_TYPE_FLOAT && b->dtype.bits == 32 &&
         tsl_tensor_wrap(TSL_DTYPE_F32, b->ndim, b->shape, NULL, i < p->ninputs ? inputs[i] : out, &t[i]) == TSL_OK;
  }
  if (ok && tsl_te_interpret(p, (const tsl_tensor *const *)t, &t[p->ninputs]) != TSL_OK) {
    fprintf(stderr, "\ninterpreter: %s\n", tsl_last_error());
    ok = false;
  }
  for (int i = 0; i < n; i++) tsl_tensor_free(t[i]);
  return ok;
}
