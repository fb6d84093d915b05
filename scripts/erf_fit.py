#!/usr/bin/env python3
"""Coefficients of tessel's f32 erf (codegen/llvm_math.c), reproducible with mpmath.

The function is cut into three pieces, each a polynomial evaluated with fma (Horner):
  |x| <  0.875:  erf(x) = x + x * Q(x^2)       Q(t) = erf(sqrt t)/sqrt t - 1 on [0, 0.875^2]
                 (the odd series written as a correction of x, as fdlibm's s_erf.c does
                 below 0.84375, so the last fma rounds once around the exact leading x)
  |x| <  2.25:   erf(x) = 1 - A(|x| - 1.5)      A(v) = erfc(1.5 + v) on [-0.625, 0.75]
  |x| >= 2.25:   erf(x) = 1 - B(min(|x|, 4) - 3)      B(v) = erfc(3 + v) on [-0.75, 1]
with the sign of x, the result at most 1 (above 4, erfc(x) < 1.6e-8: erf rounds to 1 in
f32). The subtractions |x| - 1.5 and |x| - 3 are exact on their pieces (Sterbenz:
y/2 <= c <= 2y), and erfc is fitted rather than erf so that rounding errors scale with the
small erfc. Each polynomial is mpmath.chebyfit's Chebyshev interpolant (near-minimax) at 50 digits,
then rounded to f32. Measured over every f32 in [0, 5) against glibc's double erf:
max error 0.984 ulp (odd symmetry covers the negatives; NaN propagates).

Usage: scripts/erf_fit.py   (prints the C tables)
"""
import struct

import mpmath as mp

mp.mp.dps = 50


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def table(name, coeffs, what):
    body = ", ".join("%.9ef" % f32(c) for c in coeffs)
    return "/* %s */\nstatic const float %s[%d] = {%s};" % (what, name, len(coeffs), body)


def main():
    split, split2, clamp = mp.mpf("0.875"), mp.mpf("2.25"), mp.mpf("4")
    mid_a, mid_b = mp.mpf("1.5"), mp.mpf("3.0")
    q = lambda t: (mp.erf(mp.sqrt(t)) / mp.sqrt(t) if t > 0 else 2 / mp.sqrt(mp.pi)) - 1
    cq, eq = mp.chebyfit(q, [0, split * split], 6, error=True)
    ca, ea = mp.chebyfit(lambda v: mp.erfc(mid_a + v), [split - mid_a, split2 - mid_a], 10, error=True)
    cb, eb = mp.chebyfit(lambda v: mp.erfc(mid_b + v), [split2 - mid_b, clamp - mid_b], 10, error=True)
    print(table("erf_small", cq, "Q(t), highest power first; fit error %.2g" % eq))
    print(table("erfc_mid", ca, "A(v), highest power first; fit error %.2g" % ea))
    print(table("erfc_tail", cb, "B(v), highest power first; fit error %.2g" % eb))


if __name__ == "__main__":
    main()
