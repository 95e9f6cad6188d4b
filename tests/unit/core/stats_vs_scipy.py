#!/usr/bin/python3
"""ccbench's median, quantiles and the median's order-statistic CI against NumPy/SciPy."""
import json
import subprocess
import sys

import numpy as np
from scipy import stats

probe = sys.argv[1]
rng = np.random.default_rng(20261130)
failures = 0


def reference_ci_indices(n, confidence=0.95):
    # [X(j), X(n-1-j)] zero-based covers the median with probability 1 - 2 P(B <= j), B ~ Binom(n, 1/2):
    # j is the largest with P(B <= j) <= alpha/2, found from SciPy's quantile function.
    alpha_half = (1 - confidence) / 2
    if stats.binom.cdf(0, n, 0.5) > alpha_half:
        return 0, n - 1
    q = int(stats.binom.ppf(alpha_half, n, 0.5))  # smallest q with cdf(q) >= alpha/2
    j = q if stats.binom.cdf(q, n, 0.5) <= alpha_half else q - 1
    return j, n - 1 - j


for n in [1, 2, 5, 6, 9, 10, 11, 20, 37, 100, 101, 1000, 4999, 100000]:
    for dist in ["lognormal", "uniform", "ties"]:
        if dist == "lognormal":
            x = rng.lognormal(mean=3.0, sigma=0.4, size=n)
        elif dist == "uniform":
            x = rng.uniform(1.0, 2.0, size=n)
        else:
            x = rng.integers(1, 6, size=n).astype(float)
        out = subprocess.run([probe], input=" ".join(repr(v) for v in x), capture_output=True, text=True, check=True)
        got = json.loads(out.stdout)
        s = np.sort(x)
        lo, hi = reference_ci_indices(n)
        # The coverage of the chosen interval, by SciPy, must reach 95% whenever any interval can.
        coverage = 1 - 2 * stats.binom.cdf(lo, n, 0.5) if n > 1 and stats.binom.cdf(0, n, 0.5) <= 0.025 else 1.0
        expect = {
            "median": np.median(x), "mean": np.mean(x), "min": s[0], "max": s[-1],
            "p99": np.quantile(x, 0.99), "ci_lo": s[lo], "ci_hi": s[hi],
        }
        for key, want in expect.items():
            if not np.isclose(got[key], want, rtol=1e-12, atol=1e-12):
                print(f"FAIL n={n} {dist} {key}: ccbench {got[key]!r} scipy/numpy {want!r}")
                failures += 1
        if (got["ci_lo_index"], got["ci_hi_index"]) != (lo, hi):
            print(f"FAIL n={n} {dist}: CI indices {got['ci_lo_index']},{got['ci_hi_index']} != {lo},{hi}")
            failures += 1
        if n >= 6 and coverage < 0.95:
            print(f"FAIL n={n}: coverage {coverage} < 0.95")
            failures += 1

print("stats_vs_scipy:", "OK" if failures == 0 else f"{failures} failures")
sys.exit(1 if failures else 0)
