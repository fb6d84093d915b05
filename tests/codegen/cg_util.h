/* Helpers shared by the codegen tests: one host JIT per suite, aligned buffers,
 * IR shorthands, kernels that apply an expression in scalar and vector regions,
 * and naive references. */
#ifndef TESSEL_TESTS_CODEGEN_CG_UTIL_H
#define TESSEL_TESTS_CODEGEN_CG_UTIL_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdint.h>

#include "codegen/jit.h"
#include "ir/ir.h"
#include "runtime/module.h"

/* The suite's JIT (host target), created by cg_suite_init, freed by cg_suite_clean. */
extern tsl_jit *cg_jit;
int cg_suite_init(void);
int cg_suite_clean(void);

/* Compiles f with cg_jit into a fresh module and calls it once with args (addresses
 * of the argument values, as tsl_kernel_call takes them). Returns the compile status
 * or the call's (TSL_ERR_RUNTIME when the kernel returned nonzero). */
tsl_status cg_run(const tsl_func *f, void *const *args);
/* Same, calling the kernel `times` times (0 = compile only). */
tsl_status cg_run_n(const tsl_func *f, void *const *args, int times);
/* cg_run_n compiling with JIT j instead of cg_jit. */
tsl_status cg_run_n_on(tsl_jit *j, const tsl_func *f, void *const *args, int times);

/* 64-byte aligned zeroed memory of at least `bytes` (rounded up to 64); free(). */
void *cg_alloc(size_t bytes);

/* A 1-d kernel-argument buffer of n elements. */
tsl_buffer *cg_buf(const char *name, tsl_type t, int64_t n);
/* buf[index] (one flattened index), and buf[ramp(base, 1, lanes)]. */
tsl_expr *cg_ld(tsl_buffer *b, tsl_expr *index);
tsl_expr *cg_ldv(tsl_buffer *b, tsl_expr *base, int lanes);
tsl_stmt *cg_st(tsl_buffer *b, tsl_expr *index, tsl_expr *value);
tsl_stmt *cg_stv(tsl_buffer *b, tsl_expr *base, int lanes, tsl_expr *value);
/* value broadcast to lanes (value itself when lanes == 1). */
tsl_expr *cg_bc(tsl_expr *value, int lanes);
/* A kernel whose arguments are the given buffers, in order. */
tsl_func *cg_func(const char *name, int nbufs, tsl_buffer *const *bufs, tsl_stmt *body);

/* The four regions of a lanes kernel: scalar, then vectors of 4, 8 and 16 lanes. */
#define CG_NREGIONS 4
extern const int cg_region_lanes[CG_NREGIONS];

/* Builds the expression for one region from the inputs loaded with `lanes` lanes. */
typedef tsl_expr *(*cg_expr_fn)(tsl_expr *const *in, int lanes);

/* A kernel `name(in_0, ..., in_{nin-1}, out)`: for each region r,
 * out[r*n + i] = fn(in_0[i], ...) for i in [0, n), computed cg_region_lanes[r] lanes
 * at a time (n must be a multiple of 16). in_types are scalar element types. */
tsl_func *cg_lanes_kernel(const char *name, int nin, const tsl_type *in_types, tsl_type out_type, int64_t n,
                          cg_expr_fn fn);
/* The same with nfn expressions: out[(k*CG_NREGIONS + r)*n + i] = fns[k](...). */
tsl_func *cg_lanes_kernel_multi(const char *name, int nin, const tsl_type *in_types, tsl_type out_type, int64_t n,
                                int nfn, const cg_expr_fn *fns);
/* Runs a lanes kernel on inputs (nin pointers to n elements, 64-byte aligned) into
 * out (CG_NREGIONS * n elements). */
tsl_status cg_run_lanes(const tsl_func *f, int nin, void *const *inputs, void *out);
/* The same compiled with JIT j. */
tsl_status cg_run_lanes_on(tsl_jit *j, const tsl_func *f, int nin, void *const *inputs, void *out);

/* Naive references. */
int64_t ref_floor_div(int64_t a, int64_t b); /* via long double floor, exact for int64 */
int64_t ref_floor_mod(int64_t a, int64_t b); /* a - b * floor(a / b), wrapping */
bool same_float(double a, double b);         /* equal, or both NaN */

/* Suites of each test file. */
void cg_add_target_tests(void);
void cg_add_expr_tests(void);
void cg_add_intrinsic_tests(void);
void cg_add_memory_tests(void);
void cg_add_stmt_tests(void);
void cg_add_build_cache_tests(void);
void cg_add_math_tests(void);
void cg_add_transpose_tests(void);

#endif
