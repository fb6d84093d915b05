/* Structural equality and hashing of IR trees, up to renaming of binders.
 *
 * Equality walks both trees together with a stack of binder pairs: entering a For,
 * Let or reduction in both trees pushes (var_a, var_b). A variable use on each side
 * is equal when both resolve to the same stack entry (innermost first), or when
 * neither is bound and they are the same node. The hash replaces a bound variable
 * by its binder's depth in the stack (a de Bruijn level) and a free one by its
 * address, so alpha-equivalent trees hash alike. Float constants compare by bit
 * pattern (NaN equals the same NaN; -0.0 differs from 0.0), buffers by identity.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* Pairs of nodes (or node -> hash) already done, so that a DAG with shared subtrees
 * costs its distinct nodes rather than its unfolded tree. Only used with no binder in
 * scope (then a subtree's answer does not depend on where it sits), and only once a
 * call has visited many nodes, so small compares allocate nothing. */
typedef struct pair_slot {
  const void *a, *b;
  uint64_t value;
} pair_slot;

typedef struct pair_memo {
  pair_slot *slots;
  size_t cap, n;
} pair_memo;

enum { MEMO_AFTER_VISITS = 256 };

static size_t pair_index(const void *a, const void *b, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)b * 0xc2b2ae3d27d4eb4full;
  x ^= x >> 29;
  return (size_t)x & (cap - 1);
}

static pair_slot *pair_find(pair_memo *m, const void *a, const void *b) {
  if (!m->cap) return NULL;
  for (size_t i = pair_index(a, b, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->slots[i].a == a && m->slots[i].b == b) return &m->slots[i];
    if (!m->slots[i].a) return NULL;
  }
}

static void pair_put(pair_memo *m, const void *a, const void *b, uint64_t value) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 256;
    pair_slot *ns = calloc(cap, sizeof *ns);
    if (!ns) abort();
    for (size_t i = 0; i < m->cap; i++)
      if (m->slots[i].a) {
        size_t j = pair_index(m->slots[i].a, m->slots[i].b, cap);
        while (ns[j].a) j = (j + 1) & (cap - 1);
        ns[j] = m->slots[i];
      }
    free(m->slots);
    m->slots = ns;
    m->cap = cap;
  }
  size_t j = pair_index(a, b, m->cap);
  while (m->slots[j].a && !(m->slots[j].a == a && m->slots[j].b == b)) j = (j + 1) & (m->cap - 1);
  if (!m->slots[j].a) m->n++;
  m->slots[j].a = a;
  m->slots[j].b = b;
  m->slots[j].value = value;
}

typedef struct binders {
  const tsl_expr **a, **b;
  int n, cap;
  bool renamed; /* some pair has a != b: pointer-equal subtrees must still be walked */
  size_t visits;
  pair_memo memo;
} binders;

static void binders_free(binders *s) {
  free(s->a);
  free(s->b);
  free(s->memo.slots);
}

static void push(binders *s, const tsl_expr *a, const tsl_expr *b) {
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    const tsl_expr **na = realloc(s->a, sizeof *na * (size_t)cap);
    if (!na) abort();
    s->a = na;
    const tsl_expr **nb = realloc(s->b, sizeof *nb * (size_t)cap);
    if (!nb) abort();
    s->b = nb;
    s->cap = cap;
  }
  s->a[s->n] = a;
  s->b[s->n] = b;
  s->n++;
  s->renamed |= a != b;
}

static void pop(binders *s, int n) {
  s->n -= n;
  s->renamed = false;
  for (int i = 0; i < s->n; i++) s->renamed |= s->a[i] != s->b[i];
}

/* Index of the innermost binding of v on side `side` (0 = a, 1 = b), or -1. */
static int lookup(const binders *s, const tsl_expr *v, int side) {
  const tsl_expr **xs = side ? s->b : s->a;
  for (int i = s->n - 1; i >= 0; i--)
    if (xs[i] == v) return i;
  return -1;
}

static bool same_bits(double x, double y) {
  uint64_t a, b;
  memcpy(&a, &x, sizeof a);
  memcpy(&b, &y, sizeof b);
  return a == b;
}

static bool eq_expr(const tsl_expr *a, const tsl_expr *b, binders *s);

static bool eq_list(int n, tsl_expr *const *a, tsl_expr *const *b, binders *s) {
  for (int i = 0; i < n; i++)
    if (!eq_expr(a[i], b[i], s)) return false;
  return true;
}

static bool eq_opt(const tsl_expr *a, const tsl_expr *b, binders *s) {
  if (!a || !b) return a == b;
  return eq_expr(a, b, s);
}

static bool eq_node(const tsl_expr *a, const tsl_expr *b, binders *s);

static bool eq_expr(const tsl_expr *a, const tsl_expr *b, binders *s) {
  if (a == b && !s->renamed) return true;
  if (!a || !b) return a == b;
  if (a->kind != b->kind || !tsl_type_eq(a->type, b->type)) return false;
  bool memo = s->n == 0 && ++s->visits > MEMO_AFTER_VISITS;
  if (memo && pair_find(&s->memo, a, b)) return true;
  bool r = eq_node(a, b, s);
  /* a false answer ends the whole compare, so only true ones are worth keeping */
  if (memo && r) pair_put(&s->memo, a, b, 1);
  return r;
}

static bool eq_node(const tsl_expr *a, const tsl_expr *b, binders *s) {
  switch (a->kind) {
  case TSL_E_INT: return a->int_value == b->int_value;
  case TSL_E_FLOAT: return same_bits(a->float_value, b->float_value);
  case TSL_E_VAR: {
    int i = lookup(s, a, 0), j = lookup(s, b, 1);
    if (i < 0 && j < 0) return a == b;
    return i == j;
  }
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD:
  case TSL_E_MIN: case TSL_E_MAX: case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE:
  case TSL_E_GT: case TSL_E_GE: case TSL_E_AND: case TSL_E_OR:
    return eq_expr(a->bin.a, b->bin.a, s) && eq_expr(a->bin.b, b->bin.b, s);
  case TSL_E_NOT:
  case TSL_E_CAST: return eq_expr(a->un.a, b->un.a, s);
  case TSL_E_SELECT:
    return eq_expr(a->select.cond, b->select.cond, s) && eq_expr(a->select.t, b->select.t, s) &&
           eq_expr(a->select.f, b->select.f, s);
  case TSL_E_BROADCAST: return a->broadcast.lanes == b->broadcast.lanes && eq_expr(a->broadcast.value, b->broadcast.value, s);
  case TSL_E_RAMP:
    return a->ramp.lanes == b->ramp.lanes && eq_expr(a->ramp.base, b->ramp.base, s) &&
           eq_expr(a->ramp.stride, b->ramp.stride, s);
  case TSL_E_LOAD:
    return a->load.buf == b->load.buf && a->load.nindex == b->load.nindex &&
           eq_list(a->load.nindex, a->load.index, b->load.index, s) && eq_opt(a->load.predicate, b->load.predicate, s);
  case TSL_E_CALL:
    return a->call.op == b->call.op && a->call.nargs == b->call.nargs && eq_list(a->call.nargs, a->call.args, b->call.args, s);
  case TSL_E_LET: {
    if (!eq_expr(a->let.value, b->let.value, s) || !tsl_type_eq(a->let.var->type, b->let.var->type)) return false;
    push(s, a->let.var, b->let.var);
    bool r = eq_expr(a->let.body, b->let.body, s);
    pop(s, 1);
    return r;
  }
  case TSL_E_REDUCE: {
    if (a->reduce.combiner != b->reduce.combiner || a->reduce.naxes != b->reduce.naxes) return false;
    int n = a->reduce.naxes;
    for (int i = 0; i < n; i++) {
      const tsl_iter_var *x = &a->reduce.axes[i], *y = &b->reduce.axes[i];
      if (x->min != y->min || x->extent != y->extent || x->is_reduce != y->is_reduce ||
          !tsl_type_eq(x->var->type, y->var->type))
        return false;
    }
    for (int i = 0; i < n; i++) push(s, a->reduce.axes[i].var, b->reduce.axes[i].var);
    bool r = eq_expr(a->reduce.source, b->reduce.source, s) && eq_opt(a->reduce.condition, b->reduce.condition, s);
    pop(s, n);
    return r;
  }
  }
  return false;
}

static bool eq_stmt(const tsl_stmt *a, const tsl_stmt *b, binders *s) {
  if (a == b && !s->renamed) return true;
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case TSL_S_FOR: {
    if (a->loop.for_kind != b->loop.for_kind || !tsl_type_eq(a->loop.var->type, b->loop.var->type) ||
        !eq_expr(a->loop.min, b->loop.min, s) || !eq_expr(a->loop.extent, b->loop.extent, s))
      return false;
    push(s, a->loop.var, b->loop.var);
    bool r = eq_stmt(a->loop.body, b->loop.body, s);
    pop(s, 1);
    return r;
  }
  case TSL_S_STORE:
    return a->store.buf == b->store.buf && a->store.nindex == b->store.nindex &&
           eq_list(a->store.nindex, a->store.index, b->store.index, s) && eq_expr(a->store.value, b->store.value, s) &&
           eq_opt(a->store.predicate, b->store.predicate, s);
  case TSL_S_ALLOCATE: return a->allocate.buf == b->allocate.buf && eq_stmt(a->allocate.body, b->allocate.body, s);
  case TSL_S_SEQ:
    if (a->seq.n != b->seq.n) return false;
    for (int i = 0; i < a->seq.n; i++)
      if (!eq_stmt(a->seq.stmts[i], b->seq.stmts[i], s)) return false;
    return true;
  case TSL_S_IF:
    return eq_expr(a->if_.cond, b->if_.cond, s) && eq_stmt(a->if_.then_case, b->if_.then_case, s) &&
           eq_stmt(a->if_.else_case, b->if_.else_case, s);
  case TSL_S_LET: {
    if (!eq_expr(a->let.value, b->let.value, s) || !tsl_type_eq(a->let.var->type, b->let.var->type)) return false;
    push(s, a->let.var, b->let.var);
    bool r = eq_stmt(a->let.body, b->let.body, s);
    pop(s, 1);
    return r;
  }
  case TSL_S_EVALUATE: return eq_expr(a->evaluate.value, b->evaluate.value, s);
  }
  return false;
}

bool tsl_expr_equal(const tsl_expr *a, const tsl_expr *b) {
  if (a == b) return true;
  binders s = {0};
  bool r = eq_expr(a, b, &s);
  binders_free(&s);
  return r;
}

bool tsl_stmt_equal(const tsl_stmt *a, const tsl_stmt *b) {
  if (a == b) return true;
  binders s = {0};
  bool r = eq_stmt(a, b, &s);
  binders_free(&s);
  return r;
}

/* ---- hashing ---- */

static uint64_t mix(uint64_t h, uint64_t v) {
  /* splitmix64 finalizer over the running state */
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

static uint64_t type_bits(tsl_type t) { return (uint64_t)t.code | (uint64_t)t.bits << 8 | (uint64_t)t.lanes << 16; }

static uint64_t hash_expr(const tsl_expr *e, binders *s);

static uint64_t hash_opt(const tsl_expr *e, binders *s) { return e ? hash_expr(e, s) : 0x51ed27ull; }

static uint64_t hash_node(const tsl_expr *e, binders *s);

static uint64_t hash_expr(const tsl_expr *e, binders *s) {
  bool memo = s->n == 0 && ++s->visits > MEMO_AFTER_VISITS;
  if (memo) {
    pair_slot *p = pair_find(&s->memo, e, e);
    if (p) return p->value;
  }
  uint64_t h = hash_node(e, s);
  if (memo) pair_put(&s->memo, e, e, h);
  return h;
}

static uint64_t hash_node(const tsl_expr *e, binders *s) {
  uint64_t h = mix((uint64_t)e->kind + 1, type_bits(e->type));
  switch (e->kind) {
  case TSL_E_INT: return mix(h, (uint64_t)e->int_value);
  case TSL_E_FLOAT: {
    uint64_t bits;
    memcpy(&bits, &e->float_value, sizeof bits);
    return mix(h, bits);
  }
  case TSL_E_VAR: {
    int i = lookup(s, e, 0);
    return i >= 0 ? mix(h, 0xb0b0ull + (uint64_t)i) : mix(h, (uint64_t)(uintptr_t)e);
  }
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD:
  case TSL_E_MIN: case TSL_E_MAX: case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE:
  case TSL_E_GT: case TSL_E_GE: case TSL_E_AND: case TSL_E_OR:
    h = mix(h, hash_expr(e->bin.a, s));
    return mix(h, hash_expr(e->bin.b, s));
  case TSL_E_NOT:
  case TSL_E_CAST: return mix(h, hash_expr(e->un.a, s));
  case TSL_E_SELECT:
    h = mix(h, hash_expr(e->select.cond, s));
    h = mix(h, hash_expr(e->select.t, s));
    return mix(h, hash_expr(e->select.f, s));
  case TSL_E_BROADCAST: return mix(h, hash_expr(e->broadcast.value, s));
  case TSL_E_RAMP:
    h = mix(h, hash_expr(e->ramp.base, s));
    return mix(h, hash_expr(e->ramp.stride, s));
  case TSL_E_LOAD:
    h = mix(h, (uint64_t)(uintptr_t)e->load.buf);
    for (int i = 0; i < e->load.nindex; i++) h = mix(h, hash_expr(e->load.index[i], s));
    return mix(h, hash_opt(e->load.predicate, s));
  case TSL_E_CALL:
    h = mix(h, (uint64_t)e->call.op);
    for (int i = 0; i < e->call.nargs; i++) h = mix(h, hash_expr(e->call.args[i], s));
    return h;
  case TSL_E_LET:
    h = mix(h, hash_expr(e->let.value, s));
    push(s, e->let.var, e->let.var);
    h = mix(h, hash_expr(e->let.body, s));
    pop(s, 1);
    return h;
  case TSL_E_REDUCE:
    h = mix(h, (uint64_t)e->reduce.combiner);
    for (int i = 0; i < e->reduce.naxes; i++) {
      h = mix(h, (uint64_t)e->reduce.axes[i].min);
      h = mix(h, (uint64_t)e->reduce.axes[i].extent);
      push(s, e->reduce.axes[i].var, e->reduce.axes[i].var);
    }
    h = mix(h, hash_expr(e->reduce.source, s));
    h = mix(h, hash_opt(e->reduce.condition, s));
    pop(s, e->reduce.naxes);
    return h;
  }
  return h;
}

static uint64_t hash_stmt(const tsl_stmt *st, binders *s) {
  if (!st) return 0x5eedull;
  uint64_t h = mix(0x57a7ull, (uint64_t)st->kind);
  switch (st->kind) {
  case TSL_S_FOR:
    h = mix(h, (uint64_t)st->loop.for_kind);
    h = mix(h, hash_expr(st->loop.min, s));
    h = mix(h, hash_expr(st->loop.extent, s));
    push(s, st->loop.var, st->loop.var);
    h = mix(h, hash_stmt(st->loop.body, s));
    pop(s, 1);
    return h;
  case TSL_S_STORE:
    h = mix(h, (uint64_t)(uintptr_t)st->store.buf);
    for (int i = 0; i < st->store.nindex; i++) h = mix(h, hash_expr(st->store.index[i], s));
    h = mix(h, hash_expr(st->store.value, s));
    return mix(h, hash_opt(st->store.predicate, s));
  case TSL_S_ALLOCATE:
    h = mix(h, (uint64_t)(uintptr_t)st->allocate.buf);
    return mix(h, hash_stmt(st->allocate.body, s));
  case TSL_S_SEQ:
    for (int i = 0; i < st->seq.n; i++) h = mix(h, hash_stmt(st->seq.stmts[i], s));
    return h;
  case TSL_S_IF:
    h = mix(h, hash_expr(st->if_.cond, s));
    h = mix(h, hash_stmt(st->if_.then_case, s));
    return mix(h, hash_stmt(st->if_.else_case, s));
  case TSL_S_LET:
    h = mix(h, hash_expr(st->let.value, s));
    push(s, st->let.var, st->let.var);
    h = mix(h, hash_stmt(st->let.body, s));
    pop(s, 1);
    return h;
  case TSL_S_EVALUATE: return mix(h, hash_expr(st->evaluate.value, s));
  }
  return h;
}

uint64_t tsl_expr_hash(const tsl_expr *e) {
  if (!e) return 0;
  binders s = {0};
  uint64_t h = hash_expr(e, &s);
  binders_free(&s);
  return h;
}

uint64_t tsl_stmt_hash(const tsl_stmt *st) {
  binders s = {0};
  uint64_t h = hash_stmt(st, &s);
  binders_free(&s);
  return h;
}
