/* Internal to codegen/: f32 exp, log and tanh as straight-line LLVM IR (no calls), so
 * they vectorize at any lane count (llvm.exp on a vector otherwise becomes one libm call
 * per lane). Each takes and returns an f32 scalar or an f32 vector of `lanes` lanes.
 *
 * Method: Cephes' single-precision routines (S. L. Moshier, "Methods and Programs for
 * Mathematical Functions", 1989; expf.c, logf.c, tanhf.c): range reduction to a small
 * interval, a minimax polynomial there, and exponent arithmetic on the float bits
 * (exp's 2^n: AVX-512's vscalefps where the target has it at the vector's width, else
 * two factors from the bits of the rounding fma; llvm_math.c).
 * Accuracy in f32: exp within 1 ulp of the correctly rounded result over the whole range
 * (subnormal results in subnormal steps) on both of its 2^n paths, log and tanh within 2
 * ulp (tests/codegen/test_math.c checks against libm in double precision).
 * Special values as IEEE 754: exp(-inf) = 0, exp(+inf) = +inf, overflow to +inf,
 * gradual underflow to 0; log(0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, subnormal
 * inputs exact; tanh(+-inf) = +-1; NaN in, NaN out. */
#ifndef TESSEL_CODEGEN_LLVM_MATH_H
#define TESSEL_CODEGEN_LLVM_MATH_H

#include "codegen/llvm_internal.h"

tsl_status cg_math_exp_f32(cg *c, LLVMValueRef x, int lanes, LLVMValueRef *out);
tsl_status cg_math_log_f32(cg *c, LLVMValueRef x, int lanes, LLVMValueRef *out);
tsl_status cg_math_tanh_f32(cg *c, LLVMValueRef x, int lanes, LLVMValueRef *out);

/* erf of x of IR type t: f32 as a piecewise polynomial within 1 ulp of the correctly
 * rounded result (coefficients and measurement: scripts/erf_fit.py), odd, saturating to
 * +-1, NaN in NaN out; f64 through libm's erf lane by lane. Errors: another type. */
tsl_status cg_math_erf(cg *c, LLVMValueRef x, tsl_type t, LLVMValueRef *out);

#endif
