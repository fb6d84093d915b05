/* The schedule suites, one function per source file (tsl_tests_schedule adds them all),
 * and the helpers they share: small TE programs, IR inspection, running kernels. */
#ifndef TESSEL_TESTS_SCHEDULE_SCHED_TESTS_H
#define TESSEL_TESTS_SCHEDULE_SCHED_TESTS_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/te.h"
#include "ir/arena.h"
#include "ir/ir.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"

void tsl_tests_schedule_steps(void);
void tsl_tests_schedule_lower(void);
void tsl_tests_schedule_passes(void);
void tsl_tests_schedule_numeric(void);
void tsl_tests_schedule_primitives(void);
void tsl_tests_schedule_illegal(void);
void tsl_tests_schedule_fuzz(void);
void tsl_tests_schedule_rfactor(void);
void tsl_tests_schedule_vector_width(void);

/* Each test runs in its own arena. */
typedef struct st_arena {
  tsl_arena *arena, *prev;
} st_arena;
st_arena st_arena_begin(void);
void st_arena_end(st_arena a);

/* ---- programs (built with the te.h builder in the current arena) ---- */

/* C[i, j] = sum(k: A[i, k] * B[k, j]); inputs A[M,K], B[K,N]; output C[M,N]. */
tsl_te_program *st_matmul(int64_t M, int64_t N, int64_t K);
/* padded[n,c,y,x] = select(in the data, data[n,c,y-pad,x-pad], 0) (tag "injective");
 * out[n,k,y,x] = sum(c, r, s: padded[n,c,y*stride+r,x*stride+s] * weight[k,c,r,s]).
 * Inputs data[N,C,H,W], weight[K,C,R,S]; output out[N,K,OH,OW]. */
tsl_te_program *st_conv_padded(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
                               int64_t pad, int64_t stride);
/* Depthwise conv: padded as above (tag "injective"), out[n,c,y,x] = sum(ry, rx:
 * padded[n,c,y*stride+ry,x*stride+rx] * weight[c,0,ry,rx]). Inputs data[N,C,H,W],
 * weight[C,1,R,S]; output out[N,C,OH,OW]. */
tsl_te_program *st_depthwise_padded(int64_t N, int64_t C, int64_t H, int64_t W, int64_t R, int64_t S, int64_t pad,
                                    int64_t stride);
/* out[i] = max(j: A[i, j]); input A[M,N]. */
tsl_te_program *st_row_max(int64_t M, int64_t N);
/* out[i] = sum(j: A[i, j]); input A[M,N]; output rsum[M]. */
tsl_te_program *st_row_sum(int64_t M, int64_t N);
/* B = A * 2 (tag "elemwise"), out = B + 1; input A[M,N]. */
tsl_te_program *st_elemwise_chain(int64_t M, int64_t N);
/* rowsum[i] = sum(j: A[i,j]) (a reduction: never inlined); out[i,j] = A[i,j] - rowsum[i]. */
tsl_te_program *st_row_center(int64_t M, int64_t N);

/* ---- IR inspection ---- */

typedef struct st_counts {
  int loops, serial, parallel, vectorized, unrolled;
  int allocates, stores, vector_stores, predicated_stores;
  int loads, vector_loads, predicated_loads, multi_index_accesses;
} st_counts;
st_counts st_count(const tsl_stmt *s);

/* Names of the loops enclosing the first store into a buffer called `buf` whose value
 * satisfies want_const_value (a constant when true, not a constant when false), outermost
 * first, joined with spaces into out (size n). false when no such store exists. */
bool st_loops_around_store(const tsl_stmt *s, const char *buf, bool want_const_value, char *out, size_t n);

/* The buffer of the first allocation in s of a buffer called `name` (pre-order), or NULL. */
const tsl_buffer *st_find_allocation(const tsl_stmt *s, const char *name);

/* Does any load/store/allocation in s name a buffer called `name`? */
bool st_mentions_buffer(const tsl_stmt *s, const char *name);
/* Every buffer loaded or stored in s is one of f's argument buffers or allocated in s. */
bool st_buffers_are_args_or_local(const tsl_func *f);
/* Every For and Let binds a distinct variable. */
bool st_binders_unique(const tsl_stmt *s);

/* ---- running kernels ---- */

/* Compiles f with a JIT shared by the suite and calls it with the data pointers of its
 * argument buffers in order. false (with a CUnit-visible message on stderr) when the
 * JIT or the call fails. */
bool st_run(const tsl_func *f, void *const *data);
/* Lowers s as `name` with the given tail strategy and the host's vector width. NULL
 * (message on stderr) when lowering fails. */
tsl_func *st_lower_host(const tsl_schedule *s, const char *name, tsl_tail_strategy tail);
/* The host target's native vector width in bits (0 when the host cannot be parsed). */
int st_host_vector_bits(void);
/* Frees the suite's JIT (suite cleanup). */
void st_jit_release(void);
/* The interpreter's result (dsl/te_interp.h) of a program with f32 inputs and one f32
 * output, on caller arrays (compact row-major); false (message on stderr) on error. */
bool st_interpret_f32(const tsl_te_program *p, float *const *inputs, float *out);
/* n floats, 64-byte aligned (free with free()). */
float *st_alloc_f32(int64_t n);
/* n floats (n * 4 a multiple of 64) ending right before an inaccessible page, so an
 * access past the end faults; NULL when n does not fit that rule. Free with
 * st_free_guarded(p, n). */
float *st_alloc_guarded(int64_t n);
void st_free_guarded(float *p, int64_t n);

#endif
