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
   spreads estimated per size (Welch, compare's --spread per-size), with the pooled t, with the
   moderated spread (compare's default, --spread moderated) and with the spreads known: what the
   estimation of each size's spread costs.

3. moderated: the error of the moderated spread at the band's lower edge, a flat true 1.13 asked at
   every look: how often a team ever sees "refuted" (every size's 95% upper bound below 1.13) and
   "confirmed" (the max's 90% interval inside [1.13, 1.23], its lower bound at Bonferroni's level).
   The prior is written here from Smyth (2004) with SciPy's polygamma and root finding.

Run: /usr/bin/python3 benchmarks/calibration/sequential_checks.py   (a few minutes)
"""
import numpy as np
from scipy import optimize, special, stats

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


def inverse_trigamma(x):
    return np.array([optimize.brentq(lambda y: special.polygamma(1, y) - v, 1e-10, 1e10) for v in np.ravel(x)])


def moderated(v, d):
    """Each fleet's sizes' sample variances v [fleet, size] (d df) moderated by the method of moments
    on log v: the moderated variances and df (inf where d0 is)."""
    e = np.log(v) - special.digamma(d / 2) + np.log(d / 2)
    excess = e.var(1, ddof=1) - special.polygamma(1, d / 2)
    d0 = np.full(len(v), np.inf)
    finite = excess > 0
    d0[finite] = 2 * inverse_trigamma(excess[finite])
    s0 = np.exp(e.mean(1))
    s0[finite] *= np.exp(special.digamma(d0[finite] / 2) - np.log(d0[finite] / 2))
    d0c, s0c = d0[:, None], s0[:, None]
    with np.errstate(invalid="ignore"):
        mv = np.where(np.isinf(d0c), s0c, (d0c * s0c + d * v) / (d0c + d))
    return mv, np.broadcast_to(d0c + d, v.shape)


def moderated_t(a, b, n):
    """compare's moderated widths' ingredients: the Welch se and df on the sides' moderated variances,
    and the pooled variance's; the width is the larger of the two, df held at 1000 as compare does."""
    ma, da = moderated(a.var(1, ddof=1), n - 1)
    mb, db = moderated(b.var(1, ddof=1), n - 1)
    pooled = (a.var(1, ddof=1) + b.var(1, ddof=1)) / 2
    mp, dp = moderated(pooled, 2 * n - 2)
    ua, ub = ma / n, mb / n
    den = np.where(np.isinf(da), 0, ua * ua / np.where(np.isinf(da), 1, da)) + \
        np.where(np.isinf(db), 0, ub * ub / np.where(np.isinf(db), 1, db))
    with np.errstate(divide="ignore"):
        df = np.where(den > 0, (ua + ub) ** 2 / np.where(den > 0, den, 1), np.inf)
    return np.sqrt(ua + ub), np.minimum(df, 1000), np.sqrt(mp * 2 / n), np.minimum(dp, 1000)


def moderated_width(a, b, n, p):
    se, df, se_p, df_p = moderated_t(a, b, n)
    return np.maximum(stats.t.isf(p, df) * se, stats.t.isf(p, df_p) * se_p)


def launches(rng, fleets, sizes, common, sd):
    u = rng.standard_normal((fleets, LAST, 1))
    v = rng.standard_normal((fleets, LAST, sizes))
    return sd * (np.sqrt(common) * u + np.sqrt(1 - common) * v)


def edge_check(rng, fleets=2000, sizes=30, common=0.5, sd=0.01146):
    print("3. moderated spread, flat true 1.13: ever refuted / ever confirmed over looks 5..20 (fleets %d)" % fleets)
    lo, hi = np.log(1.13), np.log(1.23)
    base, cand = launches(rng, fleets, sizes, common, sd), launches(rng, fleets, sizes, common, sd) - lo
    refuted, confirmed = np.zeros(fleets, bool), np.zeros(fleets, bool)
    for n in range(FIRST, LAST + 1):
        a, b = base[:, :n], cand[:, :n]
        d = a.mean(1) - b.mean(1)
        upper95 = (d + moderated_width(a, b, n, per_look(0.025, n))).max(1)
        upper90 = (d + moderated_width(a, b, n, per_look(0.05, n))).max(1)
        lower90 = (d - moderated_width(a, b, n, per_look(0.05 / sizes, n))).max(1)
        decided = refuted | confirmed
        refuted |= ~decided & (upper95 < lo)
        confirmed |= ~decided & (lower90 >= lo) & (upper90 <= hi)
    for name, c in (("refuted", refuted), ("confirmed", confirmed)):
        print("   %-10s %.2f%%  (+- %.2f%%)" % (name, 100 * c.mean(), 100 * np.sqrt(c.mean() * (1 - c.mean()) / fleets)))


def max_check(rng, fleets=2000, sizes=30, common=0.5, sd=0.01146):
    print("2. max, flat true 1.10: median launches a side to 'refuted' (fleets %d)" % fleets)
    lower_edge = np.log(1.13)
    for name in ("Welch (per-size)", "pooled t", "moderated", "spreads known"):
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
            if name == "moderated":
                upper = d + moderated_width(a, b, n, p)
            elif name == "spreads known":
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
    edge_check(rng)
