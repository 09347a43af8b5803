#!/usr/bin/env python3
"""Coefficients of the softmax's base-2 exponential (lib/src/kernel/simd.h,
Exp2Poly): 2^r = 1 + r·(ln2 + r·Q(r)) on |r| <= 1/2, with Q(r) =
ln2²·q(r·ln2) and q the polynomial of vexp's exp(u) = 1 + u·(1 + u·q(u))
on |u| <= 0.35 (exp_parts in simd.h): the same fit, scaled, so the error
is the same. The scaling is done in 40-digit arithmetic (mpmath: Debian's
python3-mpmath) and each coefficient rounded once to float or double.
Prints Q from its highest coefficient down, the order simd.h's Horner loop
takes them.

    /usr/bin/python3 scripts/fit_exp2.py
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
LN2 = mp.log(2)

# exp_parts' q, highest coefficient first, as written there.
Q_FLOAT = ["0.0013926926767453551", "0.008363774046301842", "0.04166654869914055",
           "0.16666573286056519", "0.5"]
Q_DOUBLE = ["2.510134692835034e-08", "2.7621338669142925e-07", "2.75572664186123e-06",
            "2.4801518641395993e-05", "0.00019841269864380513", "0.0013888888918939168",
            "0.008333333333329793", "0.04166666666662064", "0.16666666666666669",
            "0.5000000000000001"]

for name, q, cast in (("float", Q_FLOAT, np.float32), ("double", Q_DOUBLE, np.float64)):
    degree = len(q) - 1
    scaled = [mp.mpf(c) * LN2 ** (degree - i + 2) for i, c in enumerate(q)]
    print(f"{name}: Q of degree {degree}; ln2 = {float(cast(float(LN2)))!r}")
    print("  " + ", ".join(repr(float(cast(float(c)))) for c in scaled))
