/* A stand-in for an AOT-compiled kernel object: exports the kernel table the runtime
 * loader reads. Built several times (tests/runtime/meson.build) with
 * TSL_AOT_TEST_VARIANT selecting a well-formed table (0) or a broken one (1-4: the
 * table; 5, 6: its layout version tsl_aot_abi missing or another one). */
#include <stdint.h>

#include "runtime/module.h"

#ifndef TSL_AOT_TEST_VARIANT
#define TSL_AOT_TEST_VARIANT 0
#endif

int32_t aot_scale(float *x, int64_t n, float s);
int32_t aot_fail(void);

int32_t aot_scale(float *x, int64_t n, float s) {
  for (int64_t i = 0; i < n; i++) x[i] *= s;
  return 0;
}

int32_t aot_fail(void) { return 42; }

#if TSL_AOT_TEST_VARIANT == 5 /* an older writer: no layout version */
#elif TSL_AOT_TEST_VARIANT == 6 /* another row layout */
const int tsl_aot_abi = TSL_AOT_FORMAT * 1000 + 32;
#else
const int tsl_aot_abi = TSL_AOT_ABI_VERSION;
#endif

#if TSL_AOT_TEST_VARIANT == 0 || TSL_AOT_TEST_VARIANT >= 5 /* well formed (5, 6: but for tsl_aot_abi) */
const tsl_aot_entry tsl_aot_kernels[] = {
    {"aot_scale", (void *)aot_scale, {3, {TSL_ARG_PTR, TSL_ARG_I64, TSL_ARG_F32}}},
    {"aot_fail", (void *)aot_fail, {0, {TSL_ARG_PTR}}},
};
const int tsl_aot_nkernels = 2;
#elif TSL_AOT_TEST_VARIANT == 1 /* no table at all */
#elif TSL_AOT_TEST_VARIANT == 2 /* a signature with more arguments than allowed */
const tsl_aot_entry tsl_aot_kernels[] = {
    {"aot_scale", (void *)aot_scale, {3, {TSL_ARG_PTR, TSL_ARG_I64, TSL_ARG_F32}}},
    {"aot_too_many", (void *)aot_fail, {TSL_MAX_KERNEL_ARGS + 8, {TSL_ARG_PTR}}},
};
const int tsl_aot_nkernels = 2;
#elif TSL_AOT_TEST_VARIANT == 3 /* the same name twice */
const tsl_aot_entry tsl_aot_kernels[] = {
    {"aot_scale", (void *)aot_scale, {3, {TSL_ARG_PTR, TSL_ARG_I64, TSL_ARG_F32}}},
    {"aot_scale", (void *)aot_fail, {0, {TSL_ARG_PTR}}},
};
const int tsl_aot_nkernels = 2;
#elif TSL_AOT_TEST_VARIANT == 4 /* a row without a function */
const tsl_aot_entry tsl_aot_kernels[] = {
    {"aot_null", 0, {0, {TSL_ARG_PTR}}},
};
const int tsl_aot_nkernels = 1;
#endif
