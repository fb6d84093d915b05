/* Grouping the axes of a generated operator (generators.h). */
#include "ops/nn/generators.h"

int tsl_gen_group_axes(int nd, const int64_t *dims, const unsigned *cls, int64_t *gdims, unsigned *gcls) {
  int n = 0;
  for (int d = 0; d < nd; d++) {
    if (dims[d] == 1) continue; /* only index 0 there, whatever the class */
    if (n > 0 && gcls[n - 1] == cls[d]) {
      gdims[n - 1] *= dims[d];
      continue;
    }
    gdims[n] = dims[d];
    gcls[n++] = cls[d];
  }
  if (n == 0) {
    gdims[0] = 1;
    gcls[0] = 0;
    n = 1;
  }
  return n;
}

void tsl_gen_put_index(tsl_text_buf *b, const char *prefix, int n, const unsigned *gcls, unsigned zero_mask) {
  for (int d = 0; d < n; d++) {
    if (d) tsl_text_put(b, ", ");
    if (gcls[d] & zero_mask) tsl_text_put(b, "0");
    else tsl_text_put(b, "%s%d", prefix, d);
  }
}

void tsl_gen_operand_view(int n, const int64_t *gdims, const unsigned *gcls, unsigned bcast_mask, int64_t *view) {
  for (int d = 0; d < n; d++) view[d] = gcls[d] & bcast_mask ? 1 : gdims[d];
}
