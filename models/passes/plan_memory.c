/* Memory planning: greedy by size (plan_memory.h). */
#include "models/passes/plan_memory.h"

#include <stdlib.h>

#include "tessel/tensor.h"

typedef struct sized {
  int64_t bytes;
  int index;
} sized;

static int by_size_desc(const void *a, const void *b) {
  const sized *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
  return x->index - y->index; /* stable: the same graph always gets the same plan */
}

static int by_offset(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

tsl_status tsl_pass_plan_memory(int n, const tsl_mem_request *req, int64_t *offsets, int64_t *peak) {
  if (!peak || n < 0 || (n > 0 && (!req || !offsets)))
    return tsl_error(TSL_ERR_INVALID, "plan_memory: bad arguments");
  *peak = 0;
  /* Every offset plus size is at most the sum of the aligned sizes: bounding the sum
   * keeps the arithmetic below clear of overflow. */
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    if (req[i].bytes < 0 || req[i].first > req[i].last)
      return tsl_error(TSL_ERR_INVALID, "plan_memory: tensor %d: %lld bytes live over [%d, %d]", i,
                       (long long)req[i].bytes, req[i].first, req[i].last);
    if (req[i].bytes > INT64_MAX - TSL_TENSOR_ALIGN ||
        __builtin_add_overflow(total, (req[i].bytes + TSL_TENSOR_ALIGN - 1) / TSL_TENSOR_ALIGN * TSL_TENSOR_ALIGN,
                               &total))
      return tsl_error(TSL_ERR_INVALID, "plan_memory: tensor %d of %lld bytes takes the tensors' total past 2^63 bytes",
                       i, (long long)req[i].bytes);
  }
  if (n == 0) return TSL_OK;
  sized *order = malloc((size_t)n * sizeof *order);
  int *placed = malloc((size_t)n * sizeof *placed);
  int64_t(*busy)[2] = malloc((size_t)n * sizeof *busy);
  if (!order || !placed || !busy) {
    free(order);
    free(placed);
    free(busy);
    return tsl_error(TSL_ERR_NOMEM, "plan_memory: out of memory");
  }
  for (int i = 0; i < n; i++) order[i] = (sized){req[i].bytes, i};
  qsort(order, (size_t)n, sizeof *order, by_size_desc);
  int nplaced = 0;
  for (int k = 0; k < n; k++) {
    int t = order[k].index;
    int64_t size = (req[t].bytes + TSL_TENSOR_ALIGN - 1) / TSL_TENSOR_ALIGN * TSL_TENSOR_ALIGN;
    /* address ranges of placed tensors alive at the same time, by offset */
    int nb = 0;
    for (int j = 0; j < nplaced; j++) {
      int o = placed[j];
      if (req[o].first <= req[t].last && req[t].first <= req[o].last) {
        int64_t osize = (req[o].bytes + TSL_TENSOR_ALIGN - 1) / TSL_TENSOR_ALIGN * TSL_TENSOR_ALIGN;
        busy[nb][0] = offsets[o];
        busy[nb][1] = offsets[o] + osize;
        nb++;
      }
    }
    qsort(busy, (size_t)nb, sizeof *busy, by_offset);
    /* the lowest gap that holds it; the best-fitting gap would pack tighter but the
     * lowest keeps the arena's top for the large tensors placed first */
    int64_t at = 0;
    for (int j = 0; j < nb; j++) {
      if (busy[j][0] - at >= size) break;
      if (busy[j][1] > at) at = busy[j][1];
    }
    offsets[t] = at;
    if (at + size > *peak) *peak = at + size;
    placed[nplaced++] = t;
  }
  free(order);
  free(placed);
  free(busy);
  return TSL_OK;
}
