/* Multi-dimensional accesses -> one element offset (see storage_flatten.h). */
#include "ir/passes/storage_flatten.h"

#include "ir/passes/mutate.h"

static tsl_expr *constant_like(const tsl_expr *like, int64_t v) {
  tsl_expr *c = tsl_int(tsl_type_element(like->type), v);
  return like->type.lanes > 1 ? tsl_broadcast(c, like->type.lanes) : c;
}

/* The element offset of index[0..n) into buf. */
static tsl_expr *flat_index(const tsl_buffer *buf, int n, tsl_expr *const *index) {
  if (buf->strides) {
    tsl_expr *off = NULL;
    for (int d = 0; d < n; d++) {
      tsl_expr *t = buf->strides[d] == 1 ? index[d] : tsl_mul(index[d], constant_like(index[d], buf->strides[d]));
      off = off ? tsl_add(off, t) : t;
    }
    return off;
  }
  tsl_expr *off = index[0];
  for (int d = 1; d < n; d++) off = tsl_add(tsl_mul(off, constant_like(off, buf->shape[d])), index[d]);
  return off;
}

static bool needs_flattening(const tsl_buffer *buf, int nindex) { return nindex > 1 && nindex == buf->ndim; }

static tsl_expr *flatten_expr(tsl_mutator *m, tsl_expr *e) {
  if (e->kind != TSL_E_LOAD || !needs_flattening(e->load.buf, e->load.nindex)) return tsl_mutate_expr_children(m, e);
  tsl_expr *ld = tsl_mutate_expr_children(m, e);
  tsl_expr *off = flat_index(ld->load.buf, ld->load.nindex, ld->load.index);
  return tsl_load(ld->load.buf, 1, &off, ld->load.predicate);
}

static tsl_stmt *flatten_stmt(tsl_mutator *m, tsl_stmt *s) {
  if (s->kind != TSL_S_STORE || !needs_flattening(s->store.buf, s->store.nindex)) return tsl_mutate_stmt_children(m, s);
  tsl_stmt *st = tsl_mutate_stmt_children(m, s);
  tsl_expr *off = flat_index(st->store.buf, st->store.nindex, st->store.index);
  return tsl_store(st->store.buf, 1, &off, st->store.value, st->store.predicate);
}

tsl_stmt *tsl_pass_storage_flatten(tsl_stmt *s) {
  tsl_mutator m = {flatten_expr, flatten_stmt, NULL};
  return tsl_mutate_stmt(&m, s);
}
