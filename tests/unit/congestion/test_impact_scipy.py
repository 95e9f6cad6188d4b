#!/usr/bin/python3
"""The congestion impact factor's interval and the gate's p-values against scipy, on hand-chosen
per-trial (isolated, congested) values.

Usage: test_impact_scipy.py PATH_TO_ccbench_congestion_probe
"""
import json
import math
import subprocess
import sys
import unittest

import numpy as np
from scipy import stats

PROBE = None

# Per-trial (isolated, congested) statistics, chosen by hand: a clear slowdown, no effect, a noisy
# one, a speed-up, two trials (1 df), ten trials.
CASES = [
    [[100, 180], [102, 190], [98, 175], [101, 185]],
    [[50, 50.5], [51, 50.2], [49.5, 49.9]],
    [[10, 12], [11, 19], [9, 10], [10.5, 16], [10, 11]],
    [[200, 150], [210, 160], [190, 155]],
    [[1, 2], [1, 8]],
    [[5 + 0.1 * i, 7 + 0.3 * ((i * 7) % 5)] for i in range(10)],
]
BOUND = 1.5


def probe(confidence):
    payload = {"cases": [{"pairs": c, "confidence": confidence} for c in CASES], "bound": BOUND}
    out = subprocess.run([PROBE], input=json.dumps(payload), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["results"]


def holm(p):
    order = sorted(range(len(p)), key=lambda i: p[i])
    adj, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adj[i] = running
    return adj


class ImpactAgainstScipy(unittest.TestCase):
    def test_interval_and_gate(self):
        for confidence in (0.95, 0.90):
            got = probe(confidence)
            p_ref = []
            for case, g in zip(CASES, got):
                d = np.log([c / i for i, c in case])
                est = math.exp(d.mean())
                lo, hi = stats.t.interval(confidence, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
                self.assertAlmostEqual(g["estimate"], est, places=10)
                self.assertAlmostEqual(g["ci"][0] / math.exp(lo), 1.0, places=9, msg=case)
                self.assertAlmostEqual(g["ci"][1] / math.exp(hi), 1.0, places=9, msg=case)
                # The gate: H0 "factor <= BOUND", one-sided t on the log ratios.
                p = stats.ttest_1samp(d, math.log(BOUND), alternative="greater").pvalue
                self.assertAlmostEqual(g["p_gate"], p, places=9, msg=case)
                # The paired t is scipy's ttest_rel on the logs.
                rel = stats.ttest_rel(np.log([c for _, c in case]), np.log([i for i, _ in case]))
                t_ours = (d.mean()) / stats.sem(d)
                self.assertAlmostEqual(rel.statistic, t_ours, places=9)
                p_ref.append(p)
            # Holm over the family (every case counted twice: median and p99 of one row).
            adj = holm(p_ref + p_ref)
            for i, g in enumerate(got):
                self.assertAlmostEqual(g["p_holm"], adj[i], places=9)


if __name__ == "__main__":
    PROBE = sys.argv.pop(1)
    unittest.main()
