#!/usr/bin/python3
"""ccbench's percentiles (run --percentiles) against NumPy's default quantile, and their
order-statistic intervals against SciPy's Binomial distribution."""
import json
import math
import subprocess
import sys

import numpy as np
from scipy import stats

probe = sys.argv[1]
rng = np.random.default_rng(20261202)
failures = 0
LEVELS = [0.1, 1, 25, 50, 90, 99, 99.9]


def fail(text):
    global failures
    print("FAIL", text)
    failures += 1


def reference_indices(n, p):
    """Zero-based (lo, hi): lo the largest k with P(B <= k) <= 2.5%, hi the smallest k with
    P(B > k) <= 2.5%, B ~ Binomial(n, p); None when either does not exist within 0..n-1."""
    q = p / 100
    ks = np.arange(n)
    cdf = stats.binom.cdf(ks, n, q)
    sf = stats.binom.sf(ks, n, q)
    below = ks[cdf <= 0.025]
    above = ks[sf <= 0.025]
    if below.size == 0 or above.size == 0:
        return None
    return int(below.max()), int(above.min())


def reference_min_for_ci(p):
    wider = max(p, 100 - p) / 100
    n = 1
    while wider ** n > 0.025:
        n += 1
    return n


def name(p):
    return "p" + (str(int(p)) if float(p).is_integer() else repr(p))


for n in [1, 2, 5, 6, 7, 20, 100, 367, 368, 369, 1000, 3687, 3688, 5000]:
    for dist in ["lognormal", "ties"]:
        x = rng.lognormal(3.0, 0.4, size=n) if dist == "lognormal" else rng.integers(1, 6, size=n).astype(float)
        out = subprocess.run([probe, *[repr(p) for p in LEVELS]], input=" ".join(repr(v) for v in x),
                             capture_output=True, text=True, check=True, timeout=60)
        got = json.loads(out.stdout)
        s = np.sort(x)
        for p in LEVELS:
            key = name(p)
            row = got["row"][key]
            want = np.percentile(x, p)  # numpy's default: linear interpolation (type 7)
            if not math.isclose(row["value"], want, rel_tol=1e-12, abs_tol=1e-12):
                fail(f"n={n} {dist} {key}: value {row['value']!r} != numpy {want!r}")
            ref = reference_indices(n, p)
            idx = got["levels"][key]["ci_indices"]
            if (None if idx is None else tuple(idx)) != ref:
                fail(f"n={n} {dist} {key}: CI indices {idx} != SciPy's {ref}")
            if ref is None:
                if row["ci95"] is not None or "ci_absent" not in row:
                    fail(f"n={n} {dist} {key}: CI should be absent with a reason: {row}")
            else:
                lo, hi = ref
                if row["ci95"] != [s[lo], s[hi]]:
                    fail(f"n={n} {dist} {key}: ci95 {row['ci95']} != [{s[lo]}, {s[hi]}]")
                coverage = stats.binom.cdf(hi, n, p / 100) - stats.binom.cdf(lo, n, p / 100)
                if coverage < 0.95:
                    fail(f"n={n} {key}: coverage {coverage} < 0.95")
            need = got["levels"][key]["min_samples_for_ci"]
            if need != reference_min_for_ci(p):
                fail(f"{key}: min_samples_for_ci {need} != {reference_min_for_ci(p)}")
            if (ref is not None) != (n >= need):
                fail(f"n={n} {key}: CI present {ref is not None} but min_samples_for_ci is {need}")
            est = got["levels"][key]["min_samples_for_estimate"]
            if est != round(100 / min(p, 100 - p)):
                fail(f"{key}: min_samples_for_estimate {est}")

# The median's interval is the p50 one (core/stats median_ci_indices), and the documented counts.
out = subprocess.run([probe, "50", "99", "99.9", "99.99"], input="1 2 3", capture_output=True, text=True,
                     check=True, timeout=60)
got = json.loads(out.stdout)["levels"]
for key, want in {"p50": 6, "p99": 368, "p99.9": 3688, "p99.99": 36887}.items():
    if got[key]["min_samples_for_ci"] != want:
        fail(f"{key}: min_samples_for_ci {got[key]['min_samples_for_ci']} != {want}")
for key, want in {"p50": 2, "p99": 100, "p99.9": 1000, "p99.99": 10000}.items():
    if got[key]["min_samples_for_estimate"] != want:
        fail(f"{key}: min_samples_for_estimate {got[key]['min_samples_for_estimate']} != {want}")

print("percentiles_vs_scipy:", "OK" if failures == 0 else f"{failures} failures")
sys.exit(1 if failures else 0)
