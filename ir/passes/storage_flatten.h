/* Pass: storage flattening (TVM's StorageFlatten, without realize regions: lowering has
 * already offset every access by its region's origin).
 *
 * Every load and store with one index per buffer dimension gets one element offset
 * instead: sum over d of index[d] * stride[d], with the buffer's explicit strides when it
 * has them and row-major (last dimension contiguous) otherwise, written in Horner form
 * (((i0 * s1 + i1) * s2 + i2) ...) for row-major buffers. Vector indices are flattened
 * lane-wise. Accesses that already carry a single index are left as they are.
 */
#ifndef TESSEL_IR_PASSES_STORAGE_FLATTEN_H
#define TESSEL_IR_PASSES_STORAGE_FLATTEN_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* s with flat accesses (s itself when every access was already flat). */
tsl_stmt *tsl_pass_storage_flatten(tsl_stmt *s);

#ifdef __cplusplus
}
#endif
#endif
