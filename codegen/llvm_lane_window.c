/* Vector loads whose lanes read fixed offsets around one address: contiguous loads of
 * the few windows the lanes fall in, then shuffles (llvm_internal.h). */
#include <stdlib.h>

#include "codegen/llvm_internal.h"
#include "ir/passes/vectorize.h"


/* At most this many uniform terms in an index, and windows per load. */
#define MAX_UNIFORM_TERMS 8
#define MAX_WINDOWS 4

/* Floor division and modulo of the IR (ir.h: a divisor of 0 gives 0). */
static int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t floor_mod(int64_t a, int64_t b) { return b == 0 ? 0 : a - floor_div(a, b) * b; }

/* The lanes' values of e when it uses no variable and no memory (a constant, ramp or
 * broadcast of constants, and arithmetic of those); false otherwise. */
static bool lane_constants(const tsl_expr *e, int lanes, int64_t *v) {
  if (!tsl_type_is_int(e->type)) return false;
  switch (e->kind) {
  case TSL_E_INT:
    for (int j = 0; j < lanes; j++) v[j] = e->int_value;
    return true;
  case TSL_E_BROADCAST: return lane_constants(e->broadcast.value, lanes, v);
  case TSL_E_RAMP: {
    int64_t base, stride;
    if (!tsl_expr_is_const_int(e->ramp.base, &base) || !tsl_expr_is_const_int(e->ramp.stride, &stride)) return false;
    for (int j = 0; j < lanes; j++) v[j] = base + j * stride;
    return true;
  }
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD: case TSL_E_MIN: case TSL_E_MAX: {
    int64_t b[TSL_VECTORIZE_MAX_LANES];
    if (!lane_constants(e->bin.a, lanes, v) || !lane_constants(e->bin.b, lanes, b)) return false;
    for (int j = 0; j < lanes; j++) {
      int64_t x = v[j], y = b[j];
      switch (e->kind) {
      case TSL_E_ADD: v[j] = x + y; break;
      case TSL_E_SUB: v[j] = x - y; break;
      case TSL_E_MUL: v[j] = x * y; break;
      case TSL_E_DIV: v[j] = floor_div(x, y); break;
      case TSL_E_MOD: v[j] = floor_mod(x, y); break;
      case TSL_E_MIN: v[j] = x < y ? x : y; break;
      default: v[j] = x > y ? x : y; break;
      }
    }
    return true;
  }
  default: return false;
  }
}

/* The lanes of a predicate that uses no variable and no memory (comparisons of constant
 * lane expressions, and/or/not of those); false otherwise. */
bool cg_lane_predicate(const tsl_expr *e, int lanes, bool *m) {
  int64_t a[TSL_VECTORIZE_MAX_LANES], b[TSL_VECTORIZE_MAX_LANES];
  bool q[TSL_VECTORIZE_MAX_LANES];
  switch (e->kind) {
  case TSL_E_INT:
    for (int j = 0; j < lanes; j++) m[j] = e->int_value != 0;
    return tsl_type_is_bool(e->type);
  case TSL_E_BROADCAST: return cg_lane_predicate(e->broadcast.value, lanes, m);
  case TSL_E_NOT:
    if (!cg_lane_predicate(e->un.a, lanes, m)) return false;
    for (int j = 0; j < lanes; j++) m[j] = !m[j];
    return true;
  case TSL_E_AND: case TSL_E_OR:
    if (!cg_lane_predicate(e->bin.a, lanes, m) || !cg_lane_predicate(e->bin.b, lanes, q)) return false;
    for (int j = 0; j < lanes; j++) m[j] = e->kind == TSL_E_AND ? m[j] && q[j] : m[j] || q[j];
    return true;
  case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
    if (!lane_constants(e->bin.a, lanes, a) || !lane_constants(e->bin.b, lanes, b)) return false;
    for (int j = 0; j < lanes; j++)
      m[j] = e->kind == TSL_E_EQ ? a[j] == b[j] : e->kind == TSL_E_NE ? a[j] != b[j] : e->kind == TSL_E_LT ? a[j] < b[j]
             : e->kind == TSL_E_LE ? a[j] <= b[j] : e->kind == TSL_E_GT ? a[j] > b[j] : a[j] >= b[j];
    return true;
  default: return false;
  }
}

typedef struct split_index {
  const tsl_expr *uniform[MAX_UNIFORM_TERMS]; /* scalar terms, the same on every lane */
  int sign[MAX_UNIFORM_TERMS];
  int nuniform;
  int64_t lane[TSL_VECTORIZE_MAX_LANES]; /* the per-lane constant part */
} split_index;

/* Splits the index e (sign +1 or -1) into sums of scalar terms and lane constants:
 * through additions and subtractions down to broadcasts of scalars, ramps of a scalar
 * base and a constant stride, and constant lane expressions. */
static bool split(const tsl_expr *e, int lanes, int sign, split_index *s) {
  int64_t v[TSL_VECTORIZE_MAX_LANES];
  if (lane_constants(e, lanes, v)) {
    for (int j = 0; j < lanes; j++) s->lane[j] += sign * v[j];
    return true;
  }
  int64_t stride;
  switch (e->kind) {
  case TSL_E_ADD: return split(e->bin.a, lanes, sign, s) && split(e->bin.b, lanes, sign, s);
  case TSL_E_SUB: return split(e->bin.a, lanes, sign, s) && split(e->bin.b, lanes, -sign, s);
  case TSL_E_RAMP:
    if (!tsl_expr_is_const_int(e->ramp.stride, &stride)) return false;
    for (int j = 0; j < lanes; j++) s->lane[j] += sign * j * stride;
    /* the base: a uniform term */
    if (s->nuniform == MAX_UNIFORM_TERMS) return false;
    s->uniform[s->nuniform] = e->ramp.base;
    s->sign[s->nuniform++] = sign;
    return true;
  case TSL_E_BROADCAST:
    if (s->nuniform == MAX_UNIFORM_TERMS) return false;
    s->uniform[s->nuniform] = e->broadcast.value;
    s->sign[s->nuniform++] = sign;
    return true;
  default: return false;
  }
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

tsl_status cg_load_lane_windows(cg *c, const tsl_expr *e, LLVMValueRef *out) {
  *out = NULL;
  int lanes = e->type.lanes;
  if (e->load.nindex != 1 || lanes < 2 || lanes > TSL_VECTORIZE_MAX_LANES ||
      tsl_type_is_bool(e->load.buf->dtype))
    return TSL_OK;
  const tsl_expr *idx = e->load.index[0];
  if (idx->kind == TSL_E_BROADCAST || !tsl_type_is_int(idx->type)) return TSL_OK;
  split_index s = {0};
  if (!split(idx, lanes, 1, &s)) return TSL_OK;
  /* a predicate fixed per lane (a channel padding's `c < C`): its off lanes read 0 and
   * take no part in the windows */
  bool on[TSL_VECTORIZE_MAX_LANES];
  for (int j = 0; j < lanes; j++) on[j] = true;
  if (e->load.predicate && !cg_lane_predicate(e->load.predicate, lanes, on)) return TSL_OK;
  int non = 0;
  /* windows: the sorted offsets cut where a window would exceed one vector */
  int64_t sorted[TSL_VECTORIZE_MAX_LANES], wmin[MAX_WINDOWS], wmax[MAX_WINDOWS];
  for (int j = 0; j < lanes; j++)
    if (on[j]) sorted[non++] = s.lane[j];
  qsort(sorted, (size_t)non, sizeof sorted[0], cmp_i64);
  int nw = 0;
  for (int j = 0; j < non; j++) {
    if (nw > 0 && sorted[j] - wmin[nw - 1] < lanes) {
      wmax[nw - 1] = sorted[j];
      continue;
    }
    if (nw == MAX_WINDOWS) return TSL_OK; /* too scattered: a gather */
    wmin[nw] = wmax[nw] = sorted[j];
    nw++;
  }
  /* A dense ramp is handled by the caller; one window of unit steps would be one too. */
  const cg_buf *cb;
  CG_TRY(cg_lookup_buf(c, e->load.buf, &cb));
  LLVMTypeRef elem;
  CG_TRY(cg_mem_type(c, e->load.buf->dtype, &elem));
  LLVMValueRef base = LLVMConstInt(c->t_i64, 0, 0);
  for (int u = 0; u < s.nuniform; u++) {
    LLVMValueRef t;
    CG_TRY(cg_index_i64(c, s.uniform[u], &t));
    base = s.sign[u] > 0 ? LLVMBuildAdd(c->b, base, t, "") : LLVMBuildSub(c->b, base, t, "");
  }
  LLVMTypeRef vt = LLVMVectorType(elem, (unsigned)lanes);
  unsigned align = (unsigned)tsl_type_bytes(tsl_type_element(e->load.buf->dtype));
  LLVMValueRef acc = LLVMConstNull(vt); /* lanes no window fills (predicated off) read 0 */
  for (int w = 0; w < nw; w++) {
    /* every element between two lanes' addresses lies in the buffer: the window's load
     * stays in bounds (masked to its width when narrower than a vector) */
    int64_t width = wmax[w] - wmin[w] + 1;
    LLVMValueRef off = LLVMBuildAdd(c->b, base, LLVMConstInt(c->t_i64, (unsigned long long)wmin[w], 1), "");
    LLVMValueRef addr = LLVMBuildInBoundsGEP2(c->b, elem, cb->ptr, &off, 1, "");
    LLVMValueRef win;
    if (width == lanes) {
      win = LLVMBuildLoad2(c->b, vt, addr, "");
      LLVMSetAlignment(win, align);
    } else {
      LLVMValueRef m[TSL_VECTORIZE_MAX_LANES];
      for (int j = 0; j < lanes; j++) m[j] = LLVMConstInt(c->t_i1, j < width, 0);
      LLVMTypeRef ov[2] = {vt, c->t_ptr};
      LLVMValueRef args[4] = {addr, LLVMConstInt(c->t_i32, align, 0), LLVMConstVector(m, (unsigned)lanes),
                              LLVMGetPoison(vt)};
      CG_TRY(cg_intrinsic(c, "llvm.masked.load", ov, 2, args, 4, &win));
    }
    /* lanes of this window come from `win` (the second operand), the others keep acc */
    LLVMValueRef mask[TSL_VECTORIZE_MAX_LANES];
    for (int j = 0; j < lanes; j++) {
      bool mine = on[j] && s.lane[j] >= wmin[w] && s.lane[j] <= wmax[w];
      int64_t pick = mine ? lanes + (s.lane[j] - wmin[w]) : j;
      mask[j] = LLVMConstInt(c->t_i32, (unsigned long long)pick, 0);
    }
    acc = LLVMBuildShuffleVector(c->b, acc, win, LLVMConstVector(mask, (unsigned)lanes), "");
  }
  *out = acc;
  return TSL_OK;
}
