#!/usr/bin/python3
"""compare's moderated spread for the max (src/compare/moderated_spread.*) against independent
references: SciPy's polygamma for digamma, trigamma and tetragamma; the inverse trigamma by Brent's
root finding on SciPy's trigamma (compare uses Newton's method); the prior's d0 and s0^2 by the
method of moments written here from its definition (Smyth 2004); the moderated t quantiles against
scipy.stats.t; and every size's moderated Welch and pooled shifts recomputed here from the launches.

Usage: test_moderated_scipy.py PATH_TO_moderated_probe
"""
import json
import math
import subprocess
import sys
import unittest

import numpy as np
from scipy.optimize import brentq
from scipy.special import polygamma
from scipy.stats import t as student_t

PROBE = None
# compare's stand-in df for an infinite prior df (the spread then known).
KNOWN_SPREAD_DF = 1000.0


def probe(request):
    out = subprocess.run([PROBE], input=json.dumps(request), capture_output=True, text=True, timeout=30,
                         check=True)
    return json.loads(out.stdout)


def prior(variances, dfs):
    """The method of moments on log s^2, from its definition: E[e] = log s0^2 + psi(d0/2) - log(d0/2)
    and Var[e] = psi'(d0/2) where e = log s^2 - psi(d/2) + log(d/2)."""
    v, d = np.asarray(variances, float), np.asarray(dfs, float)
    e = np.log(v) - polygamma(0, d / 2) + np.log(d / 2)
    excess = np.var(e, ddof=1) - np.mean(polygamma(1, d / 2))
    if excess <= 0:
        return math.inf, math.exp(np.mean(e))
    half = brentq(lambda y: polygamma(1, y) - excess, 1e-8, 1e8, xtol=1e-14, rtol=1e-14)
    d0 = 2 * half
    return d0, math.exp(np.mean(e) + polygamma(0, d0 / 2) - math.log(d0 / 2))


def moderate(p, s2, d):
    d0, s02 = p
    if math.isinf(d0):
        return s02, math.inf
    return (d0 * s02 + d * s2) / (d0 + d), d0 + d


def shifts(baseline, candidate):
    """Every size's moderated shift: each side's variance and the pooled variance moderated by their
    own priors over the sizes, Welch-Satterthwaite on the sides' moderated variances and df."""
    rows = []
    for b, c in zip(baseline, candidate):
        b = np.array([x for x in b if x is not None]); c = np.array([x for x in c if x is not None])
        rows.append((b, c))
    vb = [(np.var(b, ddof=1), len(b) - 1) for b, _ in rows]
    vc = [(np.var(c, ddof=1), len(c) - 1) for _, c in rows]
    vp = [((np.sum((b - b.mean()) ** 2) + np.sum((c - c.mean()) ** 2)) / (len(b) + len(c) - 2), len(b) + len(c) - 2)
          for b, c in rows]
    pb, pc, pp = (prior([v for v, _ in x], [d for _, d in x]) for x in (vb, vc, vp))
    out = []
    for (b, c), (sb, db), (sc, dc), (sp, dp) in zip(rows, vb, vc, vp):
        mb, mc, mp = moderate(pb, sb, db), moderate(pc, sc, dc), moderate(pp, sp, dp)
        ub, uc = mb[0] / len(b), mc[0] / len(c)
        denominator = (0 if math.isinf(mb[1]) else ub ** 2 / mb[1]) + (0 if math.isinf(mc[1]) else uc ** 2 / mc[1])
        df = (ub + uc) ** 2 / denominator if denominator > 0 else math.inf
        out.append({"estimate": b.mean() - c.mean(), "se": math.sqrt(ub + uc), "df": min(df, KNOWN_SPREAD_DF),
                    "se_alt": math.sqrt(mp[0] * (1 / len(b) + 1 / len(c))), "df_alt": min(mp[1], KNOWN_SPREAD_DF)})
    return out, (pb, pc, pp)


def launches(rng, sizes, n, sds):
    return [[float(x) for x in rng.normal(0.0, sd, n)] for sd in sds[:sizes]]


class ModeratedSpreadAgainstScipy(unittest.TestCase):
    def test_polygamma(self):
        xs = [0.05, 0.3, 1.0, 2.5, 4.0, 7.0, 9.99, 15.0, 60.0, 1e4]
        got = probe({"gamma": xs})["gamma"]
        for x, g in zip(xs, got):
            for k, key in enumerate(["digamma", "trigamma", "tetragamma"]):
                self.assertAlmostEqual(g[key] / polygamma(k, x), 1.0, delta=1e-11, msg=f"{key}({x})")

    def test_inverse_trigamma(self):
        ys = [1e-7, 1e-3, 0.05, 0.3, 1.0, 1.6449, 5.0, 100.0, 1e5, 1e8]
        got = probe({"inverse_trigamma": ys})["inverse_trigamma"]
        for y, x in zip(ys, got):
            want = brentq(lambda v: polygamma(1, v) - y, 1e-12, 1e12, xtol=1e-15, rtol=1e-14)
            # limma's end approximations (1/y, 1/sqrt(y)) hold to 1e-6 relative past 1e-6 and 1e7.
            self.assertAlmostEqual(x / want, 1.0, delta=1e-6 if y < 1e-6 or y > 1e7 else 1e-7, msg=f"y={y}")

    def test_prior(self):
        rng = np.random.default_rng(28)
        cases = []
        # Spread variances (a finite d0), equal ones (d0 infinite), unequal df, and two sizes.
        for d in ([4] * 30, [9] * 12, [4, 9, 19, 4, 7, 12, 5, 5]):
            d = np.array(d, float)
            true = 0.01 ** 2 * np.exp(rng.normal(0, 0.8, len(d)))
            cases.append({"variances": list(true * rng.chisquare(d) / d), "dfs": list(d)})
        cases.append({"variances": [1e-4] * 5, "dfs": [4] * 5})
        cases.append({"variances": [2e-4, 1e-4], "dfs": [9, 9]})
        got = probe({"priors": cases})["priors"]
        finite = 0
        for case, g in zip(cases, got):
            d0, s02 = prior(case["variances"], case["dfs"])
            if math.isinf(d0):
                self.assertEqual(g["df"], "inf", msg=str(case))
            else:
                finite += 1
                self.assertAlmostEqual(g["df"] / d0, 1.0, delta=1e-7, msg=str(case))
            self.assertAlmostEqual(g["variance"] / s02, 1.0, delta=1e-7, msg=str(case))
        self.assertGreaterEqual(finite, 2)  # the cases exercise both branches
        # Fewer than 2 sizes or a zero variance: no prior (the per-size t).
        none = probe({"priors": [{"variances": [1e-4], "dfs": [4]}, {"variances": [1e-4, 0.0], "dfs": [4, 4]}]})
        self.assertEqual([p["df"] for p in none["priors"]], [0, 0])

    def test_t_quantiles_at_moderated_df(self):
        qs = [{"p": p, "df": df} for p in (0.975, 0.999, 0.99996) for df in (8.0, 23.7, 61.2, 1000.0)]
        got = probe({"quantiles": qs})["quantiles"]
        for q, g in zip(qs, got):
            self.assertAlmostEqual(g / student_t.ppf(q["p"], q["df"]), 1.0, delta=1e-8, msg=str(q))

    def test_moderated_shifts(self):
        rng = np.random.default_rng(2004)
        sds = list(0.01 * np.exp(rng.normal(0, 0.7, 12)))
        tables = []
        for n_b, n_c in ((5, 5), (7, 12)):
            tables.append({"baseline": launches(rng, 12, n_b, sds), "candidate": launches(rng, 12, n_c, sds)})
        # A launch without the second size on the baseline side.
        tables[1]["baseline"][1][3] = None
        got = probe({"tables": tables})["tables"]
        for table, g in zip(tables, got):
            want, _ = shifts(table["baseline"], table["candidate"])
            for w, s in zip(want, g["sizes"]):
                for key in ("estimate", "se", "df", "se_alt", "df_alt"):
                    self.assertAlmostEqual(s[key] / w[key], 1.0, delta=1e-7, msg=key)
                # The upper bound's half-width at 0.1%: the wider of the two moderated t's.
                width = max(student_t.ppf(0.999, w["df"]) * w["se"], student_t.ppf(0.999, w["df_alt"]) * w["se_alt"])
                self.assertAlmostEqual(s["upper_width_0.001"] / width, 1.0, delta=1e-8)


if __name__ == "__main__":
    PROBE = sys.argv.pop(1)
    unittest.main()
