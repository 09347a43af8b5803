#!/usr/bin/env python3
"""Coefficients of the soft cap's small-argument tanh (lib/src/kernel/simd.h,
SmallTanh): tanh(u) = u·(1 + z·P(z)), z = u², for |u| < 0.625, P fitted to
(tanh(u) - u) / u³ by a Chebyshev fit in 40-digit arithmetic (mpmath:
Debian's python3-mpmath). Prints P from its highest coefficient
down, the order simd.h's Horner loop takes them, with the fit's error.

    /usr/bin/python3 scripts/fit_small_tanh.py
"""
import mpmath as mp

mp.mp.dps = 40
LIMIT = mp.mpf("0.625")


def p_of(z):
    if z == 0:
        return mp.mpf(-1) / 3
    u = mp.sqrt(z)
    return (mp.tanh(u) - u) / (u * z)


for name, degree in (("float", 4), ("double", 10)):
    poly, err = mp.chebyfit(p_of, [0, LIMIT**2], degree + 1, error=True)
    print(f"{name}: degree {degree}, fit error {float(err):.3g}")
    print("  " + ", ".join(repr(float(c)) for c in poly))
