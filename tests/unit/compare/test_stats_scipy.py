#!/usr/bin/python3
"""The comparator's statistics against an independent reference (scipy), on generated samples.

Usage: test_stats_scipy.py PATH_TO_stats_probe
"""
import json
import math
import random
import subprocess
import sys
import unittest

import numpy as np
from scipy import stats
from scipy.stats import _mannwhitneyu as mwu_impl  # the exact null distribution scipy itself uses

PROBE = None


def probe(cases):
    out = subprocess.run([PROBE], input=json.dumps({"cases": cases}), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["results"]


def gen_cases(seed):
    rng = random.Random(seed)
    cases = []
    for _ in range(60):  # small, continuous: exact path
        n, m = rng.randint(2, 14), rng.randint(2, 14)
        shift = rng.choice([0.0, 0.1, 0.3])
        x = [math.exp(rng.gauss(shift, 0.2)) for _ in range(n)]
        y = [math.exp(rng.gauss(0, 0.2)) for _ in range(m)]
        cases.append({"x": x, "y": y, "confidence": rng.choice([0.90, 0.95])})
    for _ in range(20):  # ties: asymptotic with tie correction
        n, m = rng.randint(5, 40), rng.randint(5, 40)
        x = [round(rng.gauss(10.2, 1), 0) for _ in range(n)]
        y = [round(rng.gauss(10, 1), 0) for _ in range(m)]
        cases.append({"x": x, "y": y, "confidence": 0.95})
    for _ in range(10):  # large: normal approximation of the interval
        n, m = rng.randint(60, 400), rng.randint(60, 400)
        x = [math.exp(rng.gauss(0.02, 0.05)) for _ in range(n)]
        y = [math.exp(rng.gauss(0, 0.05)) for _ in range(m)]
        cases.append({"x": x, "y": y, "confidence": 0.95})
    return cases


class StatsAgainstScipy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cases = gen_cases(7)
        cls.results = probe(cls.cases)

    def test_u_and_p_values(self):
        for c, r in zip(self.cases, self.results):
            x, y = c["x"], c["y"]
            asym = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")
            self.assertAlmostEqual(r["u"], asym.statistic, places=9)
            self.assertAlmostEqual(r["p_asymptotic"], asym.pvalue, delta=1e-12 + 1e-9 * asym.pvalue)
            ties = len(set(x + y)) < len(x) + len(y)
            if "p_exact" in r and not ties:
                exact = stats.mannwhitneyu(x, y, alternative="two-sided", method="exact")
                self.assertAlmostEqual(r["p_exact"], exact.pvalue, delta=1e-12 + 1e-9 * exact.pvalue)
                self.assertTrue(r["exact"])
                self.assertAlmostEqual(r["p_auto"], exact.pvalue, delta=1e-12 + 1e-9 * exact.pvalue)
            if ties:
                self.assertFalse(r["exact"])

    def test_welch_t(self):
        for c, r in zip(self.cases, self.results):
            x, y = c["x"], c["y"]
            if len(x) < 2 or len(y) < 2 or (np.var(x) == 0 and np.var(y) == 0):
                continue
            ref = stats.ttest_ind(x, y, equal_var=False)
            self.assertAlmostEqual(r["welch_t"], ref.statistic, delta=1e-9 * max(1, abs(ref.statistic)))
            self.assertAlmostEqual(r["welch_p"], ref.pvalue, delta=1e-12 + 1e-8 * ref.pvalue)

    def test_trial_level_t(self):
        # compare's trial-level inference (src/compare/trial_stats.cpp) against scipy: Welch's t with
        # >= 2 values a side, the pooled-variance t when one side has a single value.
        cases = [c for c in self.cases[:60]] + [
            {"x": [1.02], "y": [1.0, 1.01, 0.99, 1.03], "confidence": 0.95, "bound": -0.01},
            {"x": [0.97, 1.0, 0.99], "y": [1.01], "confidence": 0.90, "bound": 0.02}]
        rng = random.Random(3)
        for c in cases[:60]:
            c["bound"] = rng.choice([0.0, -0.05, 0.05])
        results = probe(cases)
        for c, r in zip(cases, results):
            x, y, b, conf = np.array(c["x"]), np.array(c["y"]), c["bound"], c["confidence"]
            t = r["t_shift"]
            welch = len(x) >= 2 and len(y) >= 2
            d = x.mean() - y.mean()
            self.assertAlmostEqual(t["estimate"], d, delta=1e-12)
            # Welch's t (when both sides have 2 values) and the pooled-variance t: scipy's own tests where
            # it has them; p-values are the larger of the two, intervals the wider.
            n, m = len(x), len(y)
            pooled = (((x - x.mean()) ** 2).sum() + ((y - y.mean()) ** 2).sum()) / (n + m - 2)
            tests = [(math.sqrt(pooled * (1 / n + 1 / m)), n + m - 2)]
            if welch:
                vx, vy = x.var(ddof=1) / n, y.var(ddof=1) / m
                tests.insert(0, (math.sqrt(vx + vy), (vx + vy) ** 2 / (vx ** 2 / (n - 1) + vy ** 2 / (m - 1))))
                for eq in (False, True):
                    ref = stats.ttest_ind(x, y, equal_var=eq)
                    se_, df_ = tests[1] if eq else tests[0]
                    self.assertAlmostEqual(2 * stats.t.sf(abs(d) / se_, df_), ref.pvalue,
                                           delta=1e-10 + 1e-8 * ref.pvalue)
                self.assertAlmostEqual(t["se_alt"], tests[1][0], delta=1e-12)
                self.assertAlmostEqual(t["df_alt"], tests[1][1], delta=1e-12)
            se, df = tests[0]
            self.assertAlmostEqual(t["se"], se, delta=1e-12)
            self.assertAlmostEqual(t["df"], df, delta=1e-9 * df)
            for key, ref_p in [("p_two_sided", max(2 * stats.t.sf(abs(d) / s_, f_) for s_, f_ in tests)),
                               ("p_below", max(stats.t.cdf((d - b) / s_, f_) for s_, f_ in tests)),
                               ("p_above", max(stats.t.sf((d - b) / s_, f_) for s_, f_ in tests))]:
                self.assertAlmostEqual(t[key], ref_p, delta=1e-10 + 1e-8 * ref_p, msg=key)
            width = lambda p: max(stats.t.ppf(p, f_) * s_ for s_, f_ in tests)  # noqa: E731
            half = width(0.5 + conf / 2)
            # Quantiles agree to ~1e-9 relative (the incomplete beta's precision, amplified by 1/density).
            tol = 1e-8 * (1 + half)
            self.assertAlmostEqual(t["ci"][0], d - half, delta=tol)
            self.assertAlmostEqual(t["ci"][1], d + half, delta=tol)
            # max of (d, -d): lower = |d| - width at 1 - a/4 (two sizes), upper = |d| + width at 1 - a/2.
            a = 1 - conf
            w_lo, w_up = width(1 - a / 4), width(1 - a / 2)
            self.assertAlmostEqual(t["max_ci"][0], abs(d) - w_lo, delta=1e-8 * (1 + w_lo))
            self.assertAlmostEqual(t["max_ci"][1], abs(d) + w_up, delta=1e-8 * (1 + w_up))
            self.assertAlmostEqual(r["t_quantile"], stats.t.ppf(conf, len(x)), delta=1e-7)
            if len(x) >= 4:
                lr = stats.linregress(np.arange(len(x)), x)
                self.assertAlmostEqual(r["trend"]["slope"], lr.slope, delta=1e-12)
                self.assertAlmostEqual(r["trend"]["p"], lr.pvalue, delta=1e-10 + 1e-8 * lr.pvalue)
            else:
                self.assertNotIn("trend", r)
            # One slope, an intercept per series (series of >= 3 values count): least squares by numpy,
            # the p-value from scipy's t with n - groups - 1 df.
            series = [v for v in (x, y) if len(v) >= 3]
            n_all = sum(len(v) for v in series)
            if n_all >= 5:
                rows, target = [], []
                for g, v in enumerate(series):
                    for i, e in enumerate(v):
                        rows.append([1.0 if g == k else 0.0 for k in range(len(series))] + [float(i)])
                        target.append(e)
                design, target = np.array(rows), np.array(target)
                coef, *_ = np.linalg.lstsq(design, target, rcond=None)
                resid = target - design @ coef
                df = n_all - len(series) - 1
                cov = (resid @ resid / df) * np.linalg.inv(design.T @ design)
                p = 2 * stats.t.sf(abs(coef[-1]) / math.sqrt(cov[-1, -1]), df)
                self.assertAlmostEqual(r["common_trend"]["slope"], coef[-1], delta=1e-10)
                self.assertAlmostEqual(r["common_trend"]["p"], p, delta=1e-8 + 1e-6 * p)
            else:
                self.assertNotIn("common_trend", r)

    def test_hodges_lehmann_and_interval(self):
        for c, r in zip(self.cases, self.results):
            x, y = np.array(c["x"]), np.array(c["y"])
            n, m = len(x), len(y)
            diffs = np.sort(np.subtract.outer(x, y).ravel())
            self.assertAlmostEqual(r["hl"], float(np.median(diffs)), places=12)
            alpha_half = (1 - c["confidence"]) / 2
            if n * m <= 2500:
                # Largest k with P(U <= k-1) <= alpha/2 under scipy's exact null distribution.
                k = 0
                while k + 1 <= n * m and mwu_impl._mwu_state.cdf(k, n, m) <= alpha_half * (1 + 1e-12):
                    k += 1
            else:
                z = stats.norm.ppf(1 - alpha_half)
                k = int(math.floor(n * m / 2 - z * math.sqrt(n * m * (n + m + 1) / 12)))
            if k < 1:
                self.assertIsNone(r["ci"])
                continue
            self.assertEqual(r["k"], k)
            self.assertAlmostEqual(r["ci"][0], diffs[k - 1], places=12)
            self.assertAlmostEqual(r["ci"][1], diffs[n * m - k], places=12)

    def test_order_statistic_median_ci(self):
        # B ~ Binomial(n, 1/2) samples fall below the median; the zero-based order statistics
        # [X(j), X(n-1-j)] cover it with probability 1 - 2 P(B <= j): the narrowest pair keeping
        # that >= the confidence, or the whole range when none does.
        for c, r in zip(self.cases, self.results):
            n = len(c["x"])
            alpha_half = (1 - c["confidence"]) / 2
            if stats.binom.cdf(0, n, 0.5) > alpha_half:
                expect = [0, n - 1]
            else:
                j = 0
                while j + 1 <= (n - 1) // 2 and stats.binom.cdf(j + 1, n, 0.5) <= alpha_half:
                    j += 1
                expect = [j, n - 1 - j]
            self.assertEqual(r["median_ci_indices"], expect, f"n={n}")
            lo, hi = r["median_ci_indices"]
            if lo > 0:
                self.assertGreaterEqual(1 - 2 * stats.binom.cdf(lo, n, 0.5), c["confidence"] - 1e-12)

    def test_max_simultaneous_level(self):
        # The max's lower bounds (src/compare/max_critical.cpp): Gaussian weights on whole launches give
        # standardised per-size estimates that are exactly multivariate normal with the launches'
        # empirical correlation; the level p must make P(max_s Z_s <= z_{1-p}) = 1 - tail, which scipy's
        # multivariate normal CDF computes independently of the resampling.
        rng = np.random.default_rng(5)
        cases, covs = [], []
        for common in (0.0, 0.5, 0.9):
            for k in (2, 3):
                u_b, u_c = rng.normal(size=(5, 1)), rng.normal(size=(5, 1))
                b = math.sqrt(common) * u_b + math.sqrt(1 - common) * rng.normal(size=(5, k))
                c = math.sqrt(common) * u_c + math.sqrt(1 - common) * rng.normal(size=(5, k))
                b, c = 0.01 * b, 0.01 * c
                cases.append({"x": [1.0, 2.0], "y": [1.0, 2.5], "logs_base": b.T.tolist(), "logs_cand": c.T.tolist(),
                              "tail": 0.025})
                wb = (b - b.mean(0)) / 5
                wc = (c - c.mean(0)) / 5
                sd = np.sqrt((wb ** 2).sum(0) + (wc ** 2).sum(0))
                wb, wc = wb / sd, wc / sd
                covs.append(wb.T @ wb + wc.T @ wc)
        for case, cov, r in zip(cases, covs, probe(cases)):
            k = cov.shape[0]
            self.assertEqual(r["max_sizes"], k)
            z = stats.norm.isf(r["max_level"])
            joint = stats.multivariate_normal(mean=np.zeros(k), cov=cov, allow_singular=True).cdf(np.full(k, z))
            # 20000 resamples: the level's own Monte Carlo error is ~0.0011 in the joint probability.
            self.assertAlmostEqual(joint, 0.975, delta=0.005, msg=f"cov {cov.tolist()}")
            self.assertGreaterEqual(r["max_level"], 0.025 / k - 1e-15)
            self.assertLessEqual(r["max_level"], 0.025 + 1e-15)
        # Sizes that move exactly together (one launch effect, no own noise): one size's level.
        b = [[0.01 * i for i in (1, -2, 0, 3, -1)], [0.02 * i for i in (1, -2, 0, 3, -1)]]
        c = [[0.01 * i for i in (2, 0, -1, -1, 0)], [0.02 * i for i in (2, 0, -1, -1, 0)]]
        r = probe([{"x": [1.0, 2.0], "y": [1.0, 2.5], "logs_base": b, "logs_cand": c, "tail": 0.025}])[0]
        self.assertAlmostEqual(r["max_level"], 0.025, delta=0.0015)

    def test_interval_coverage(self):
        # 95% intervals for a known log-ratio shift must cover it about 95% of the time.
        rng = random.Random(11)
        true_shift = math.log(1.2)
        cases = []
        for _ in range(400):
            x = [rng.gauss(true_shift, 0.1) for _ in range(15)]
            y = [rng.gauss(0.0, 0.1) for _ in range(15)]
            cases.append({"x": x, "y": y, "confidence": 0.95})
        res = probe(cases)
        covered = sum(1 for r in res if r["ci"][0] <= true_shift <= r["ci"][1])
        rate = covered / len(res)
        # Binomial(400, 0.95): sd 1.1%; the exact interval is conservative (coverage >= 95%).
        self.assertGreater(rate, 0.92)
        self.assertLess(rate, 0.995)


if __name__ == "__main__":
    PROBE = sys.argv.pop(1)
    unittest.main()
