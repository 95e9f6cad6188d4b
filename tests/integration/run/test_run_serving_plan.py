#!/usr/bin/python3
"""A serving plan end to end (docs/model.md "Planning a serving step"): a real 2-rank run with
--percentiles 99, a median model and a p99 model fitted from it, and `model plan` of a serving
workload pricing its prefill and KV transfer with the median curve and its decode step with the p99
curve: each priced row equals `model predict` of that model at the row's bytes, the request's total
is prefill + KV + generated_tokens x the decode step, and without a p99 model the decode rows are
listed as not priced with what to fit. Bad --percentile values exit 2 naming the flag."""
import json
import os
import shutil
import subprocess
import unittest

import ccbench_mpi as m

WORKLOAD = """name: serve-local
model: {parameters: 1B, layers: 4, hidden: 4096}
dtype: bf16
parallel: {ranks: 2, ranks_per_node: 2, tp: 2, dp: 1}
serving:
  batch: 16
  prompt_tokens: 64
  generated_tokens: 32
  kv_bytes_per_token: 16384
  percentile: %s
  disaggregated: true
"""


def ccbench(*args):
    return subprocess.run([m.CCBENCH, *args], capture_output=True, text=True, timeout=120)


class ServingPlan(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = m.tmpdir()
        cls.result = os.path.join(cls.dir, "r.json")
        # 400 iterations a size: enough samples for a p99 interval (368).
        cls.run_proc = m.run(2, ["--ops", "allreduce,sendrecv", "-b", "64K", "-e", "2M", "-f", "2", "-n", "400",
                                 "--percentiles", "99", "-J", cls.result], timeout=300)
        cls.median = os.path.join(cls.dir, "median.json")
        cls.p99 = os.path.join(cls.dir, "p99.json")
        cls.fits = [ccbench("model", "fit", cls.result, "-o", cls.median, "--refits", "20"),
                    ccbench("model", "fit", cls.result, "--percentile", "99", "-o", cls.p99, "--refits", "20")]
        cls.workload = {}
        for level in ("99", "median"):
            path = os.path.join(cls.dir, f"serve-{level}.yaml")
            with open(path, "w") as f:
                f.write(WORKLOAD % level)
            cls.workload[level] = path

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.run_proc.returncode, 0, self.run_proc.stderr)
        for fit in self.fits:
            self.assertEqual(fit.returncode, 0, fit.stderr)

    def plan(self, level, *models):
        proc = ccbench("model", "plan", *models, "--workload", self.workload[level], "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)

    def predict(self, model, op, nbytes, nodes):
        proc = ccbench("model", "predict", model, "--op", op, "--bytes", str(nbytes), "--nodes", str(nodes),
                       "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)

    def test_each_phase_is_priced_by_the_model_of_its_statistic(self):
        with open(self.p99) as f:
            self.assertEqual(json.load(f)["percentile"], 99)
        plan = self.plan("99", self.median, self.p99)
        rows = plan["collectives"]
        self.assertEqual([(c["phase"], c["op"]) for c in rows],
                         [("prefill", "allreduce"), ("kv_transfer", "sendrecv"), ("decode", "allreduce")])
        # Bytes by hand: prefill 64 x 4096 x 2; KV 64 x 16384 / tp 2; decode 16 x 4096 x 2.
        self.assertEqual([c["bytes"] for c in rows], [524288, 524288, 131072])
        profile = plan["profiles"][0]
        priced = profile["rows"]
        for i, model in ((0, self.median), (2, self.p99)):
            c = rows[i]
            self.assertTrue(priced[i]["priced"], priced[i]["note"])
            want = self.predict(model, c["op"], c["bytes"], c["nodes"])
            self.assertEqual(want["statistic"], "p99" if model == self.p99 else "median")
            self.assertAlmostEqual(priced[i]["time_us"]["value"], want["time_us"], delta=1e-9 * want["time_us"])
            self.assertAlmostEqual(priced[i]["step_us"]["value"], c["count"] * want["time_us"],
                                   delta=1e-9 * c["count"] * want["time_us"])
        # The request: each priced phase once, the decode step generated_tokens (32) times.
        phases = {p["phase"]: p for p in profile["phases"]}
        want_total = sum(r["step_us"]["value"] * c["per_request"] for c, r in zip(rows, priced) if r["priced"])
        self.assertAlmostEqual(profile["total_us"]["value"], want_total, delta=1e-9 * want_total)
        self.assertAlmostEqual(phases["decode"]["total_us"]["value"] * 32,
                               sum(r["step_us"]["value"] * 32 for c, r in zip(rows, priced)
                                   if c["phase"] == "decode"), delta=1e-6)

    def test_without_a_p99_model_the_decode_step_says_what_to_fit(self):
        plan = self.plan("99", self.median)
        decode = plan["profiles"][0]["rows"][2]
        self.assertFalse(decode["priced"])
        self.assertIn("fit one with `ccbench model fit --percentile 99` on runs with --percentiles 99", decode["note"])
        self.assertTrue(plan["profiles"][0]["rows"][0]["priced"])
        text = ccbench("model", "plan", self.median, "--workload", self.workload["99"])
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("decode step (p99)", text.stdout)
        # percentile: median prices the decode step with the median curve.
        plan = self.plan("median", self.median)
        self.assertTrue(plan["profiles"][0]["rows"][2]["priced"])

    def test_bad_percentile_flags_exit_2_naming_the_flag(self):
        out = os.path.join(self.dir, "never.json")
        for args, want in ((["--percentile", "99.9"], "no collective row of the inputs holds percentiles_us p99.9"),
                           (["--percentile", "50,99"], "--percentile 50,99: one level"),
                           (["--percentile", "100"], "--percentile")):
            proc = ccbench("model", "fit", self.result, *args, "-o", out)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(want, proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
