#!/usr/bin/python3
"""`ccbench run --percentiles` under a real mpirun (2 ranks): one op a sample, the row's
percentiles equal NumPy's on its own recorded samples, their intervals SciPy's binomial order
statistics, the CI absent with its reason when there are too few samples, the table's columns, the
schema; bad levels and conflicting flags exit 2 with one line naming the flag."""
import csv
import io
import json
import os
import shutil
import subprocess
import unittest

import jsonschema
import numpy as np

import ccbench_mpi as m
from percentile_rows import reference_ci, time_text


class Percentiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(m.SOURCE, "configs/schema/result.schema.json")) as f:
            cls.schema = json.load(f)
        cls.dir = m.tmpdir()
        cls.out = os.path.join(cls.dir, "p.json")
        cls.proc = m.run(2, ["--ops", "allreduce", "-b", "8", "-e", "1K", "-f", "128", "-n", "1200",
                            "--percentiles", "99.9,50,99", "-J", cls.out], timeout=120)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_rows_hold_numpy_percentiles_and_binomial_intervals(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        doc = m.load(self.out)
        jsonschema.validate(doc, self.schema)
        self.assertEqual(doc["config"]["percentiles"], [50, 99, 99.9])
        self.assertEqual(len(doc["results"]), 4)  # 8 B and 1 KiB, out-of-place and in-place
        for row in doc["results"]:
            self.assertEqual(row["batch"], 1)
            self.assertEqual(len(row["samples_us"]), 1200)
            s = np.sort(row["samples_us"])
            self.assertEqual(sorted(row["percentiles_us"]), ["p50", "p99", "p99.9"])
            for key, p in [("p50", 50), ("p99", 99), ("p99.9", 99.9)]:
                level = row["percentiles_us"][key]
                self.assertAlmostEqual(level["value"], np.percentile(row["samples_us"], p), delta=1e-12 * s[-1])
                self.assertEqual(level["ci95"], reference_ci(s, p))
            # The median's own interval is the p50 one.
            self.assertEqual(row["percentiles_us"]["p50"]["ci95"], row["time_us"]["ci95"])
            # 1200 samples: p99.9 has an estimate but no 95% interval (it needs 3688).
            self.assertIsNone(row["percentiles_us"]["p99.9"]["ci95"])
            self.assertIn("3688", row["percentiles_us"]["p99.9"]["ci_absent"])

    def test_table_has_a_column_per_level(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        header = [line for line in self.proc.stdout.splitlines() if line.startswith("#") and "p99.9" in line]
        self.assertEqual(len(header), 1, self.proc.stdout)
        self.assertEqual(header[0].split()[-6:], ["p50", "ci", "p99", "ci", "p99.9", "ci"])
        doc = m.load(self.out)
        row = doc["results"][0]
        line = [l for l in self.proc.stdout.splitlines() if l.split()[:1] == ["8"]][0].split()
        # size count type redop root, two halves of five, then p50 ci p99 ci p99.9 ci of each half.
        self.assertEqual(len(line), 5 + 10 + 12)
        # Out-of-place: p50 and its CI at 15-16, p99 17-18, p99.9 19-20 (its CI absent).
        self.assertEqual(line[20], "-")
        self.assertEqual(line[19], time_text(row["percentiles_us"]["p99.9"]["value"]))
        self.assertEqual(line[15], time_text(row["percentiles_us"]["p50"]["value"]))
        report = subprocess.run([m.CCBENCH, "report", self.out, "--format", "table"], capture_output=True,
                                text=True, timeout=60)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("p99.9", report.stdout)

    def report(self, fmt):
        p = subprocess.run([m.CCBENCH, "report", self.out, "--format", fmt], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_csv_prometheus_and_gbench_carry_every_level(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        rows = m.load(self.out)["results"]
        table = list(csv.DictReader(io.StringIO(self.report("csv"))))
        self.assertEqual(len(table), len(rows))
        for line, row in zip(table, rows):
            for key in ["p50", "p99", "p99.9"]:
                level = row["percentiles_us"][key]
                self.assertEqual(float(line[f"{key}_us"]), level["value"])
                if level["ci95"] is None:
                    self.assertEqual((line[f"{key}_ci95_lo_us"], line[f"{key}_ci95_hi_us"]), ("", ""))
                else:
                    self.assertEqual([float(line[f"{key}_ci95_lo_us"]), float(line[f"{key}_ci95_hi_us"])],
                                     level["ci95"])
        prom = self.report("prometheus")
        check = subprocess.run(["promtool", "check", "metrics"], input=prom, capture_output=True, text=True,
                               timeout=60)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        first = rows[0]
        line = [l for l in prom.splitlines() if l.startswith("ccbench_time_percentile_seconds{")
                and 'bytes="8"' in l and 'in_place="false"' in l and 'percentile="99.9"' in l]
        self.assertEqual(len(line), 1, prom)
        self.assertEqual(float(line[0].split()[-1]), first["percentiles_us"]["p99.9"]["value"] / 1e6)
        # No interval for p99.9 (too few samples): no bound samples for it.
        self.assertFalse([l for l in prom.splitlines()
                          if l.startswith("ccbench_time_percentile_ci95_seconds{") and 'percentile="99.9"' in l])
        bench = json.loads(self.report("gbench"))["benchmarks"]
        self.assertEqual(bench[0]["p99_us"], first["percentiles_us"]["p99"]["value"])
        self.assertEqual(bench[0]["p99_ci95_us"], first["percentiles_us"]["p99"]["ci95"])
        self.assertIsNone(bench[0]["p99.9_ci95_us"])

    def test_markdown_and_html_have_a_percentile_table(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        rows = m.load(self.out)["results"]
        md = self.report("markdown").splitlines()
        start = md.index("### Percentiles of per-iteration times (run --percentiles)")
        header = [c.strip() for c in md[start + 2].strip("|").split("|")]
        self.assertEqual(header, ["run", "op", "size", "place", "trial", "p50 µs [95% CI]", "p99 µs [95% CI]",
                                  "p99.9 µs [95% CI]"])
        lines = md[start + 4:start + 4 + len(rows)]
        self.assertEqual(len(lines), len(rows))
        for line in lines:
            cells = [c.strip() for c in line.strip("|").split("|")]
            self.assertRegex(cells[5], r"^[0-9.]+ \[[0-9.]+, [0-9.]+\]$")
            self.assertRegex(cells[7], r"^[0-9.]+ \(no CI\)$")  # 1200 samples: none for p99.9
        html = self.report("html")
        section = html[html.index('<section id="percentiles">'):]
        section = section[:section.index("</section>")]
        self.assertEqual(section.count("<tr>"), 1 + len(rows))
        self.assertEqual(section.count("(no CI)"), len(rows))

    def test_auto_takes_enough_samples_for_the_widest_interval(self):
        out = os.path.join(self.dir, "auto.json")
        p = m.run(2, ["--ops", "allreduce", "-b", "8", "-e", "8", "--in-place", "no", "--percentiles", "99",
                      "--max-time-per-size", "0.001", "-J", out], timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = m.load(out)
        self.assertEqual(doc["config"]["min_samples"], 368)
        row = doc["results"][0]
        self.assertGreaterEqual(len(row["samples_us"]), 368)
        self.assertIsNotNone(row["percentiles_us"]["p99"]["ci95"])

    def test_bad_levels_and_conflicts_exit_2_naming_the_flag(self):
        cases = [
            (["--percentiles", "0"], "--percentiles"),
            (["--percentiles", "100"], "--percentiles"),
            (["--percentiles", "101"], "--percentiles"),
            (["--percentiles", "abc"], "--percentiles"),
            (["--percentiles", "50,"], "--percentiles"),
            (["--percentiles", "99.99", "-n", "500"], "-n/--iters 500"),
            (["--percentiles", "99", "--batch", "4"], "--batch 4"),
            (["--percentiles", "99", "--timing", "nccl-tests"], "--timing"),
            (["--percentiles", "99.9999"], "-n auto"),
        ]
        for args, names in cases:
            with self.subTest(args=args):
                out = os.path.join(self.dir, "refused.json")
                p = m.run(2, ["--ops", "allreduce", "-b", "8", "-e", "8", "-J", out] + args, timeout=60)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = [l for l in p.stderr.splitlines() if "--percentiles" in l]
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(names, lines[0])
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
