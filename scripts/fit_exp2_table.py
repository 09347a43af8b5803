#!/usr/bin/env python3
"""Tables and coefficients of the AVX-512 kernels' softmax exponential
(lib/src/kernel/simd.h, Exp2Table): 2^y = 2^n·T_j·2^r with T_j = 2^(j/2^b)
(b = 4 for float, 3 for double), |r| <= 2^-(b+1), and 2^r = 1 + r·q(r).

q is fitted to (2^r - 1)/r for the least largest relative error of
1 + r·q(r) against 2^r over the range, by reweighted least squares on
Chebyshev nodes in 50-digit arithmetic (mpmath: Debian's python3-mpmath),
and each number rounded once to float or double. Prints the largest
relative error of the fit, T, and q from its highest coefficient down,
the order simd.h's Horner loop takes them.

    /usr/bin/python3 scripts/fit_exp2_table.py
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 50
LN2 = mp.log(2)


def two_to(r):
    return mp.power(2, r)


def quotient(r):
    return (two_to(r) - 1) / r if r != 0 else LN2


def horner(c, r):
    q = c[-1]
    for k in range(len(c) - 2, -1, -1):
        q = c[k] + r * q
    return q


def fit(half_width, degree, nodes=300, rounds=40):
    """q of `degree` (lowest coefficient first) and its largest relative error."""
    xs = [half_width * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / nodes) for k in range(nodes)]
    weights = [mp.mpf(1)] * nodes
    for _ in range(rounds):
        a = mp.matrix(nodes, degree + 1)
        b = mp.matrix(nodes, 1)
        for i, r in enumerate(xs):
            # Row i weighs the error of 1 + r·q(r) relative to 2^r.
            s = r / two_to(r) * weights[i]
            for k in range(degree + 1):
                a[i, k] = s * r**k
            b[i] = s * quotient(r)
        c = mp.lu_solve(a.T * a, a.T * b)
        c = [c[k] for k in range(degree + 1)]
        errors = [abs((1 + r * horner(c, r)) / two_to(r) - 1) for r in xs]
        worst = max(errors)
        weights = [w * (1 + e / worst) for w, e in zip(weights, errors)]
    return c, worst


for name, bits, degree, cast in (("float", 4, 2, np.float32), ("double", 3, 6, np.float64)):
    size = 2**bits
    c, worst = fit(mp.mpf(1) / (2 * size), degree)
    print(f"{name}: {size} entries, |r| <= 1/{2 * size}, q of degree {degree}, "
          f"largest relative error {mp.nstr(worst, 3)}")
    print("  T: " + ", ".join(repr(float(cast(float(two_to(mp.mpf(j) / size))))) for j in range(size)))
    print("  q: " + ", ".join(repr(float(cast(float(x)))) for x in reversed(c)))
