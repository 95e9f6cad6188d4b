#!/usr/bin/env python3
"""Two checks of compare's sequential rule (docs/compare.md "Asking again") on a model with no
ccbench code in it: normal launch values, the table's per-look levels, SciPy's t quantiles.

1. t: the boundary is derived for a normal estimate with a known spread; compare turns each look's
   level into a t quantile with that look's degrees of freedom (the spread re-estimated every look).
   Simulates two sides of unit-normal launches, asks at 5, 6, ..., 20 launches a side with the pooled
   t (2n - 2 df) and with compare's rule (the larger of the Welch and pooled widths), and prints the
   probability that a null process ever crosses, against the design's overall tail.

2. max: the "up to" claim at a flat true 1.10 (30 sizes, half the launch effect common, the
   harness's 1.15% launch sd per size) is refuted when every size's 95% upper bound is below 1.13.
   Prints the median launches a side to that refutation, a team asking after every launch, with the
   spreads estimated as compare does (Welch), with the pooled t, and with the spreads known: what the
   estimation of each size's spread costs.

Run: /usr/bin/python3 benchmarks/calibration/sequential_checks.py   (about a minute)
"""
import numpy as np
from scipy import stats

FIRST, LAST, SHAPE = 5, 20, 0.75
# sequential.cpp's first-look levels for first look 5 (kLevels, last column).
TAILS = np.array([1e-06, 1e-05, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.025, 0.05, 0.1, 0.2])
FIRST_LEVELS = np.array([7.9711e-07, 7.5503e-06, 7.0471e-05, 0.00020323, 0.00064499, 0.0018398, 0.0057707,
                         0.013752, 0.026585, 0.051767, 0.10261])


def per_look(tail, n):
    first = np.exp(np.interp(np.log(tail), np.log(TAILS), np.log(FIRST_LEVELS)))
    z = stats.norm.isf(first) * (min(max(n, FIRST), LAST) / FIRST) ** (SHAPE - 0.5)
    return min(stats.norm.sf(z), tail)


def welch_df(vx, vy, n):
    a, b = vx / n, vy / n
    return (a + b) ** 2 / (a * a / (n - 1) + b * b / (n - 1))


def t_check(rng, paths=200_000):
    print("1. null crossing probability over looks 5..20 (paths %d)" % paths)
    for tail in (0.05, 0.025):
        x = rng.standard_normal((paths, LAST))
        y = rng.standard_normal((paths, LAST))
        crossed = {"pooled t": np.zeros(paths, bool), "compare (Welch and pooled)": np.zeros(paths, bool)}
        for n in range(FIRST, LAST + 1):
            a, b = x[:, :n], y[:, :n]
            d = a.mean(1) - b.mean(1)
            vx, vy = a.var(1, ddof=1), b.var(1, ddof=1)
            se = np.sqrt((vx + vy) / n)  # equal n: Welch's and the pooled standard error agree
            p = per_look(tail, n)
            pooled = d / se > stats.t.isf(p, 2 * n - 2)
            crossed["pooled t"] |= pooled
            crossed["compare (Welch and pooled)"] |= pooled & (d / se > stats.t.isf(p, welch_df(vx, vy, n)))
        for name, c in crossed.items():
            print("   tail %.3f  %-28s %.4f  (+- %.4f)" % (tail, name, c.mean(), np.sqrt(c.mean() * (1 - c.mean()) / paths)))


def max_check(rng, fleets=2000, sizes=30, common=0.5, sd=0.01146):
    print("2. max, flat true 1.10: median launches a side to 'refuted' (fleets %d)" % fleets)
    lower_edge = np.log(1.13)
    for name in ("Welch (compare)", "pooled t", "spreads known"):
        def side():
            u = rng.standard_normal((fleets, LAST, 1))
            v = rng.standard_normal((fleets, LAST, sizes))
            return sd * (np.sqrt(common) * u + np.sqrt(1 - common) * v)
        base, cand = side(), side() - np.log(1.10)
        when = np.full(fleets, LAST)
        open_ = np.ones(fleets, bool)
        for n in range(FIRST, LAST + 1):
            a, b = base[:, :n], cand[:, :n]
            d = a.mean(1) - b.mean(1)
            vx, vy = a.var(1, ddof=1), b.var(1, ddof=1)
            p = per_look(0.025, n)
            if name == "spreads known":
                upper = d + stats.norm.isf(p) * sd * np.sqrt(2 / n)
            else:
                df = 2 * n - 2 if name == "pooled t" else np.minimum(welch_df(vx, vy, n), 2 * n - 2)
                upper = d + stats.t.isf(p, df) * np.sqrt((vx + vy) / n)
            refuted = open_ & (upper.max(1) < lower_edge)
            when[refuted] = n
            open_ &= ~refuted
        print("   %-16s median %.1f, refuted by 7 launches in %.0f%%" % (name, np.median(when), 100 * np.mean(when <= 7)))


if __name__ == "__main__":
    rng = np.random.default_rng(20261202)
    t_check(rng)
    max_check(rng)
