/* Loop trip counts of optimized LLVM IR (loop_trips.h). */
#include "codegen/loop_trips.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool const_int(LLVMValueRef v, int64_t *out) {
  if (!v || !LLVMIsAConstantInt(v)) return false;
  *out = LLVMConstIntGetSExtValue(v);
  return true;
}

/* The predicate that holds when `p` does not (continue <-> exit). */
static LLVMIntPredicate inverse(LLVMIntPredicate p) {
  switch (p) {
  case LLVMIntEQ: return LLVMIntNE;
  case LLVMIntNE: return LLVMIntEQ;
  case LLVMIntUGT: return LLVMIntULE;
  case LLVMIntUGE: return LLVMIntULT;
  case LLVMIntULT: return LLVMIntUGE;
  case LLVMIntULE: return LLVMIntUGT;
  case LLVMIntSGT: return LLVMIntSLE;
  case LLVMIntSGE: return LLVMIntSLT;
  case LLVMIntSLT: return LLVMIntSGE;
  case LLVMIntSLE: return LLVMIntSGT;
  }
  return p;
}

/* The predicate with its operands swapped (C PRED X -> X PRED' C). */
static LLVMIntPredicate swapped(LLVMIntPredicate p) {
  switch (p) {
  case LLVMIntUGT: return LLVMIntULT;
  case LLVMIntUGE: return LLVMIntULE;
  case LLVMIntULT: return LLVMIntUGT;
  case LLVMIntULE: return LLVMIntUGE;
  case LLVMIntSGT: return LLVMIntSLT;
  case LLVMIntSGE: return LLVMIntSLE;
  case LLVMIntSLT: return LLVMIntSGT;
  case LLVMIntSLE: return LLVMIntSGE;
  default: return p;
  }
}

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Latch executions of a loop whose i-th latch (i = 0, 1, ...) tests v_i = s + d*(i + after)
 * and continues while `cont(v_i, c)`; -1 when the loop would not end. */
static int64_t solve(LLVMIntPredicate cont, int64_t s, int64_t d, int after, int64_t c) {
  if (d == 0) return -1;
  int64_t i;
  switch (cont) {
  case LLVMIntNE:
    if ((c - s) % d != 0) return -1;
    i = (c - s) / d - after;
    break;
  case LLVMIntEQ: return s + d * after != c ? 1 : -1;
  case LLVMIntULT:
  case LLVMIntSLT:
    if (d < 0) return -1;
    i = ceil_div(c - s, d) - after;
    break;
  case LLVMIntULE:
  case LLVMIntSLE:
    if (d < 0) return -1;
    i = floor_div(c - s, d) + 1 - after;
    break;
  case LLVMIntUGT:
  case LLVMIntSGT:
    if (d > 0) return -1;
    i = ceil_div(s - c, -d) - after;
    break;
  case LLVMIntUGE:
  case LLVMIntSGE:
    if (d > 0) return -1;
    i = floor_div(s - c, -d) + 1 - after;
    break;
  default: return -1;
  }
  return i < 0 ? 1 : i + 1;
}

/* The constant step of `phi`'s update on the back edge from latch, or false. */
static bool phi_step(LLVMValueRef phi, LLVMBasicBlockRef latch, int64_t *start, int64_t *step) {
  unsigned n = LLVMCountIncoming(phi);
  bool have_start = false, have_step = false;
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef v = LLVMGetIncomingValue(phi, k);
    if (LLVMGetIncomingBlock(phi, k) != latch) {
      if (!const_int(v, start)) return false;
      have_start = true;
    } else {
      if (!LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMAdd) return false;
      LLVMValueRef a = LLVMGetOperand(v, 0), b = LLVMGetOperand(v, 1);
      if (a == phi && const_int(b, step)) have_step = true;
      else if (b == phi && const_int(a, step)) have_step = true;
      else return false;
    }
  }
  return have_start && have_step;
}

/* The trip count of the loop whose back edge is `br` (in latch, to header). */
static int64_t latch_trip(LLVMValueRef br, LLVMBasicBlockRef latch, LLVMBasicBlockRef header) {
  LLVMValueRef cond = LLVMGetCondition(br);
  if (!cond || !LLVMIsAICmpInst(cond)) return -1;
  LLVMIntPredicate p = LLVMGetICmpPredicate(cond);
  LLVMValueRef x = LLVMGetOperand(cond, 0), y = LLVMGetOperand(cond, 1);
  int64_t c;
  if (!const_int(y, &c)) {
    if (!const_int(x, &c)) return -1;
    x = y;
    p = swapped(p);
  }
  /* the branch continues (goes to the header) on true when its first successor is it */
  LLVMIntPredicate cont = LLVMGetSuccessor(br, 0) == header ? p : inverse(p);
  int after = 0;
  LLVMValueRef phi = x;
  if (LLVMIsAInstruction(x) && LLVMGetInstructionOpcode(x) == LLVMAdd) {
    LLVMValueRef a = LLVMGetOperand(x, 0), b = LLVMGetOperand(x, 1);
    phi = LLVMIsAPHINode(a) ? a : b;
    after = 1;
  }
  if (!LLVMIsAPHINode(phi) || LLVMGetInstructionParent(phi) != header) return -1;
  int64_t s = 0, d = 0;
  if (!phi_step(phi, latch, &s, &d)) return -1;
  if (after) { /* x must be the phi's own update */
    int64_t d2;
    LLVMValueRef a = LLVMGetOperand(x, 0), b = LLVMGetOperand(x, 1);
    if (!const_int(a == phi ? b : a, &d2) || d2 != d) return -1;
  }
  return solve(cont, s, d, after, c);
}

static void copy_name(char *dst, size_t n, const char *src, size_t len) {
  if (len >= n) len = n - 1;
  memcpy(dst, src, len);
  dst[len] = '\0';
}

tsl_status tsl_llvm_loop_trips(LLVMModuleRef m, tsl_llvm_loop **out, int *n) {
  if (!m || !out || !n) return tsl_error(TSL_ERR_INVALID, "loop trips: NULL argument");
  *out = NULL;
  *n = 0;
  int cap = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMCountBasicBlocks(fn) == 0) continue;
    size_t fl = 0;
    const char *fname = LLVMGetValueName2(fn, &fl);
    int first = *n;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b)) {
      LLVMValueRef br = LLVMGetBasicBlockTerminator(b);
      if (!br || LLVMGetInstructionOpcode(br) != LLVMBr || !LLVMIsConditional(br)) continue;
      for (unsigned k = 0; k < 2; k++) {
        LLVMBasicBlockRef h = LLVMGetSuccessor(br, k);
        bool back = false; /* h at or before b */
        for (LLVMBasicBlockRef q = LLVMGetFirstBasicBlock(fn); q; q = LLVMGetNextBasicBlock(q)) {
          if (q == h) back = true;
          if (q == b) break;
        }
        if (!back) continue;
        const char *hn = LLVMGetBasicBlockName(h);
        bool seen = false;
        for (int i = first; i < *n && !seen; i++) seen = strcmp((*out)[i].header, hn ? hn : "") == 0 && hn && *hn;
        if (seen) break;
        if (*n == cap) {
          int nc = cap ? 2 * cap : 16;
          tsl_llvm_loop *g = realloc(*out, sizeof *g * (size_t)nc);
          if (!g) {
            free(*out);
            *out = NULL;
            *n = 0;
            return tsl_error(TSL_ERR_NOMEM, "loop trips: out of memory");
          }
          *out = g;
          cap = nc;
        }
        tsl_llvm_loop *l = &(*out)[(*n)++];
        copy_name(l->function, sizeof l->function, fname ? fname : "", fl);
        copy_name(l->header, sizeof l->header, hn ? hn : "", hn ? strlen(hn) : 0);
        l->trip = latch_trip(br, b, h);
        break;
      }
    }
  }
  return TSL_OK;
}
