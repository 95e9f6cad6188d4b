#!/usr/bin/env python3
"""Derives the per-look levels of compare's sequential rule (src/compare/sequential.cpp, kLevels).

A team asks compare after n = n0, n0 + 1, ..., 20 launches a side. Each look's estimate is the mean of
n launches a side, so its standardised statistic is Z_n = S_n / sqrt(n) with S_n a sum of n
independent unit normal increments (information grows by one launch a side per look; S_n0 ~ N(0, n0)).
A Wang-Tsiatis boundary rejects at the first look with Z_n > C (n / n0)^(SHAPE - 1/2): SHAPE 1/2 is
Pocock's constant boundary, 0 O'Brien-Fleming's; SHAPE 3/4 rises as n^(1/4), which with the t
quantiles of few launches keeps the boundary in t units nearly flat from 5 to 10 launches, where
teams decide, and spends little late. The level at look n depends on n0, n and the tail alone, so no
state is kept between calls. For an overall one-sided tail a, C solves P(any look crosses) = a; the
table holds the first look's level 1 - Phi(C).

Method: the sub-density of S_n on the continuation region (S_n <= c sqrt(n)) is propagated look by
look on a grid (step 0.005, convolution with the N(0, 1) increment), the mass that crossed summed,
and c found by Brent's method. tests/unit/compare/test_sequential_scipy.py checks the table against
SciPy's multivariate normal CDF (Genz's method, correlation sqrt(n_i / n_j)), an independent method.

Run: /usr/bin/python3 benchmarks/calibration/sequential_levels.py   (about a minute)
"""
import numpy as np
from scipy.optimize import brentq
from scipy.signal import fftconvolve
from scipy.stats import norm

LAST_LOOK = 20
FIRST_LOOKS = (2, 3, 4, 5)
TAILS = (1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.025, 0.05, 0.1, 0.2)
STEP = 0.005
SHAPE = 0.75


def boundary(C, n0, n):
    return C * (n / n0) ** (SHAPE - 0.5)


def crossing(c, n0, last=LAST_LOOK, h=STEP):
    lo = -10.0 * np.sqrt(last)
    top = max(boundary(c, n0, n) * np.sqrt(n) for n in range(n0, last + 1))
    x = lo + h * np.arange(int((top + 10.0 - lo) / h) + 3)  # the first look's mass lies past every b
    f = norm.pdf(x, scale=np.sqrt(n0))
    kernel = norm.pdf(np.arange(-9.0, 9.0 + h / 2, h)) * h
    crossed = 0.0
    for n in range(n0, last + 1):
        if n > n0:
            f = fftconvolve(f, kernel, mode="same")
        b = boundary(c, n0, n) * np.sqrt(n)
        # Each grid point stands for the cell [x - h/2, x + h/2]; the cell that holds the boundary
        # crosses by the share of it above the boundary, so the boundary is not rounded to the grid.
        j = min(max(int(np.floor((b - x[0]) / h + 0.5)), 0), len(x) - 1)
        share_above = np.clip((x[j] + h / 2 - b) / h, 0.0, 1.0)
        crossed += h * (f[j + 1:].sum() + share_above * f[j])
        f[j + 1:] = 0.0
        f[j] *= 1.0 - share_above
    return crossed


def per_look_level(tail, n0):
    c = brentq(lambda c: crossing(c, n0) - tail, 0.0, 8.0, xtol=1e-9)
    return norm.sf(c)


if __name__ == "__main__":
    print("// overall one-sided tail, then the first look's level for first looks", FIRST_LOOKS, "(last", LAST_LOOK,
          ", shape", SHAPE, ")")
    for a in TAILS:
        levels = [per_look_level(a, n0) for n0 in FIRST_LOOKS]
        print("    {" + f"{a:.4g}, " + "{" + ", ".join(f"{v:.5g}" for v in levels) + "}},")
