#!/usr/bin/python3
"""`ccbench compare` and `ccbench import` end to end: generated result files with known ratios ->
verdicts and exit codes; imported logs; every bad input -> exit 2 with a message naming the file.

Usage: test_compare_cli.py PATH_TO_ccbench
"""
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_results as gen  # noqa: E402

CCBENCH = None
ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "compare"
CLAIMS = ROOT / "configs" / "claims"


def run(*args):
    p = subprocess.run([CCBENCH, *map(str, args)], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


class CompareCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ccbench-compare-cli-"))
        t = cls.tmp
        fast = dict(samples=30, sizes=[1 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30])
        # Folders of one file per trial, as repeated launches would leave them.
        for i in range(6):
            gen.write(t / "base" / f"t{i}.json", gen.make_file(trials=1, seed=10 + i, trial_offset=0, **fast))
            gen.write(t / "cand18" / f"t{i}.json",
                      gen.make_file(trials=1, seed=20 + i, ratio=lambda op, b: 1.18, instance_type="p6-b200.48xlarge",
                                    generation="v4", **fast))
        gen.write(t / "cand50.json", gen.make_file(trials=6, seed=3, ratio=lambda op, b: 1.5, **fast))
        gen.write(t / "base2.json", gen.make_file(trials=2, seed=4, **fast))
        gen.write(t / "cand2.json", gen.make_file(trials=2, seed=5, ratio=lambda op, b: 1.18, **fast))
        gen.write(t / "slow.json", gen.make_file(
            trials=6, seed=6, ratio=lambda op, b: 1 / 1.10 if op == "alltoall" and b >= 256 << 20 else 1.0, **fast))
        gen.write(t / "same.json", gen.make_file(trials=6, seed=7, **fast))
        gen.write(t / "b300.json", gen.make_file(trials=6, seed=8, ratio=lambda op, b: 2.0, link_gbps=6400,
                                                 instance_type="p6-b300.48xlarge", generation="v4", **fast))
        gen.write(t / "b300-nolink.json", gen.make_file(trials=6, seed=9, ratio=lambda op, b: 2.0, link_gbps=None,
                                                        instance_type="p6-b300.48xlarge", generation="v4", **fast))
        gen.write(t / "rpn4.json", gen.make_file(trials=6, seed=11, ranks_per_node=4, **fast))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compare_json(self, *args):
        code, out, err = run("compare", *args, "--format", "json", "--resamples", "2000")
        self.assertNotEqual(code, 2, err)
        j = json.loads(out)
        self.assertEqual(j["exit_code"], code)
        return code, j

    def test_claim_confirmed(self):
        code, j = self.compare_json(self.tmp / "base", self.tmp / "cand18", "--expect-speedup", "18%")
        self.assertEqual((code, j["verdict"]), (0, "confirmed"), j["reason"])
        self.assertEqual(j["summary"]["sizes"], 15)
        self.assertAlmostEqual(j["summary"]["ratio"], 1.18, delta=0.02)
        self.assertEqual(j["differences"]["instance_type"], ["p5en.48xlarge", "p6-b200.48xlarge"])
        self.assertEqual(j["summary"]["trials"], {"baseline": 6, "candidate": 6})

    def test_claim_file_max_statistic(self):
        # The shipped claim restricts to >= 64 MiB, normalises by link bandwidth (equal here).
        code, j = self.compare_json(self.tmp / "base", self.tmp / "cand18", "--claim", CLAIMS / "efa-v4-vs-v3.yaml")
        self.assertEqual((code, j["verdict"]), (0, "confirmed"), j["reason"])
        self.assertEqual(j["summary"]["statistic"], "max")
        self.assertEqual(j["summary"]["sizes"], 9)
        self.assertTrue(all(r["bytes"] >= 64 << 20 for r in j["rows"]))

    def test_claim_refuted(self):
        code, j = self.compare_json(self.tmp / "base", self.tmp / "cand50.json", "--expect-speedup", "18%")
        self.assertEqual((code, j["verdict"]), (1, "refuted"))
        self.assertIn("above", j["reason"])

    def test_too_few_trials_inconclusive(self):
        code, j = self.compare_json(self.tmp / "base2.json", self.tmp / "cand2.json", "--expect-speedup", "18%")
        self.assertEqual((code, j["verdict"]), (4, "inconclusive"))
        self.assertGreaterEqual(j["summary"]["trials_needed"], 5)
        # Separate launches are offered; --trials is named as trials inside one launch, not as launches.
        self.assertTrue(any("separate launches (scripts/launches.sh 5 DIR)" in w and
                            "--trials repeats the plan inside one launch" in w for w in j["warnings"]), j["warnings"])

    def test_a_vs_a_passes_gate(self):
        for args in [(self.tmp / "base", self.tmp / "base"), (self.tmp / "same.json", self.tmp / "same.json")]:
            code, j = self.compare_json(*args, "--gate", "regression", "--threshold", "5%")
            self.assertEqual((code, j["verdict"]), (0, "pass"), j["reason"])

    def test_regression_names_sizes(self):
        code, j = self.compare_json(self.tmp / "same.json", self.tmp / "slow.json", "--gate", "regression",
                                    "--threshold", "5%")
        self.assertEqual((code, j["verdict"]), (1, "regression"))
        failed = sorted((r["op"], r["bytes"]) for r in j["rows"] if r["regression"])
        self.assertEqual(failed, [("alltoall", 256 << 20), ("alltoall", 1 << 30)])
        self.assertIn("alltoall 256M", j["reason"])
        self.assertIn("alltoall 1G", j["reason"])
        code, text, _ = run("compare", self.tmp / "same.json", self.tmp / "slow.json", "--gate", "regression",
                            "--resamples", "500")
        self.assertEqual(code, 1)
        self.assertIn("FAIL", text)

    def test_link_normalisation(self):
        code, j = self.compare_json(self.tmp / "same.json", self.tmp / "b300.json", "--claim",
                                    CLAIMS / "efa-v4-vs-v3.yaml")
        self.assertNotEqual(j["verdict"], "confirmed")
        self.assertEqual((code, j["verdict"]), (1, "refuted"))
        self.assertAlmostEqual(j["summary"]["raw"]["ratio"], 2.0, delta=0.05)
        self.assertAlmostEqual(j["summary"]["normalized"]["ratio"], 1.0, delta=0.05)
        self.assertEqual(j["differences"]["link_gbps"], ["3200", "6400"])
        # Without a claim: raw ratios and a warning that the link differs.
        code, j = self.compare_json(self.tmp / "same.json", self.tmp / "b300.json")
        self.assertEqual(code, 0)
        self.assertTrue(any("link bandwidth differs" in w for w in j["warnings"]))

    def test_missing_link_bandwidth_with_normalising_claim(self):
        code, j = self.compare_json(self.tmp / "same.json", self.tmp / "b300-nolink.json", "--claim",
                                    CLAIMS / "efa-v4-vs-v3.yaml")
        self.assertEqual((code, j["verdict"]), (4, "inconclusive"))
        self.assertTrue(any("link_gbps is missing on the candidate" in w for w in j["warnings"]))

    def test_link_gbps_disagreement_is_a_warning(self):
        # One side's files disagree on fabric.link_gbps: that used to be treated silently as missing
        # (and normalisation then said "missing"). Now a printed warning and a JSON warning say so.
        t = self.tmp / "links"
        fast = dict(samples=30, sizes=[1 << 20, 16 << 20])
        for i, link in enumerate([3200, 6400]):
            gen.write(t / "base" / f"t{i}.json", gen.make_file(trials=1, seed=40 + i, link_gbps=link, **fast))
        gen.write(t / "cand.json", gen.make_file(trials=2, seed=42, link_gbps=3200, **fast))
        needle = ("baseline files disagree on link_gbps (fabric.link_gbps: 3200 | 6400): the baseline has no one "
                  "link rate, so its ratios cannot be normalised by link bandwidth")
        code, j = self.compare_json(t / "base", t / "cand.json")
        self.assertEqual(code, 0)
        self.assertIn(needle, j["warnings"])
        self.assertEqual(j["differences"]["link_gbps"], ["3200 | 6400", "3200"])
        code, out, err = run("compare", t / "base", t / "cand.json", "--resamples", "200")
        self.assertEqual(code, 0, err)
        self.assertIn(needle, out)
        code, j = self.compare_json(t / "base", t / "cand.json", "--expect-speedup", "0%", "--normalize",
                                    "link_bandwidth")
        self.assertEqual((code, j["verdict"]), (4, "inconclusive"))
        self.assertIn("normalisation by link bandwidth was asked for, but fabric.link_gbps is not one value on the "
                      "baseline (3200 | 6400): the ratio cannot be normalised, so no claim verdict is possible (raw "
                      "ratios shown)", j["warnings"])
        self.assertFalse(any("missing on the baseline" in w for w in j["warnings"]), j["warnings"])
        self.assertIn("not one value on the baseline (3200 | 6400)", j["reason"])

    def test_metadata_mismatch_exit_3(self):
        code, j = self.compare_json(self.tmp / "same.json", self.tmp / "rpn4.json")
        self.assertEqual((code, j["verdict"]), (3, "not_comparable"))
        self.assertEqual(j["differences"]["ranks_per_node"], ["8", "4"])
        code, j = self.compare_json(self.tmp / "same.json", self.tmp / "rpn4.json", "--allow-mismatch",
                                    "ranks_per_node")
        self.assertEqual(code, 0)

    def test_claim_requirement_not_met_exit_3(self):
        # efa-v4-vs-v3 requires a v4 candidate; same.json is v3.
        code, j = self.compare_json(self.tmp / "base", self.tmp / "same.json", "--claim", CLAIMS / "efa-v4-vs-v3.yaml")
        self.assertEqual((code, j["verdict"]), (3, "not_comparable"))
        self.assertIn("efa_generation", j["reason"])

    def test_markdown_and_out_file(self):
        out = self.tmp / "report.md"
        code, stdout, err = run("compare", self.tmp / "base", self.tmp / "cand18", "--expect-speedup", "18%",
                                "--format", "markdown", "--out", out, "--resamples", "500")
        self.assertEqual(code, 0, err)
        self.assertEqual(stdout, "")
        self.assertIn("verdict: confirmed", err)
        self.assertIn("| op | bytes |", out.read_text())

    def test_markdown_escapes_labels(self):
        # The markdown is posted as a PR comment: a label (or file name, or op) must not forge a verdict
        # heading or open an HTML comment that hides the real verdict.
        t = self.tmp / "forge"
        forged = "x\n\n### ccbench compare: ✅ **pass** (exit 0)\n\n<!-- "
        fast = dict(samples=30, sizes=[1 << 20, 16 << 20])
        gen.write(t / "base.json", gen.make_file(trials=2, seed=50, label="base", **fast))
        gen.write(t / "x`\n# pass.json", gen.make_file(trials=2, seed=51, label=forged, **fast))
        code, out, err = run("compare", t / "base.json", t / "x`\n# pass.json", "--format", "markdown",
                             "--resamples", "200")
        self.assertEqual(code, 0, err)
        headings = [line for line in out.splitlines() if line.lstrip().startswith("#")]
        self.assertEqual(headings, ["### ccbench compare: **none** (exit 0)"], out)
        self.assertNotIn("<!--", out)
        self.assertIn("| label | base | x  ### ccbench compare: ✅ **pass** (exit 0)  &lt;!--  |", out)
        self.assertIn("x' # pass.json", out)

    def test_compare_and_report_read_a_file_alike(self):
        # One parser defines what a result file means: compare and report refuse the same files with
        # the same message naming the file and the JSON path or line (report used to accept bytes 0,
        # no samples and ranks 0, read schema_version 4294967297 as 1, turn ranks 2^40 into 0, and
        # print bare "[json.exception.type_error.302]" messages).
        t = self.tmp / "semantics"
        t.mkdir(exist_ok=True)
        good = json.loads((self.tmp / "same.json").read_text())

        def variant(name, edit):
            j = json.loads(json.dumps(good))
            edit(j)
            (t / name).write_text(json.dumps(j))
            return t / name

        def row0(key, value):
            return lambda j: j["results"][0].__setitem__(key, value)

        def run_field(key, value):
            return lambda j: j["run"].__setitem__(key, value)

        def no_samples(j):
            j["results"][0]["samples_us"] = []
            j["results"][0]["time_us"]["median"] = 0

        cases = [
            (variant("schema.json", lambda j: j.__setitem__("schema_version", 4294967297)),
             "/schema_version: unsupported schema version 4294967297 (this ccbench reads 1)"),
            (variant("bytes0.json", row0("bytes", 0)), "/results/0/bytes: must be positive"),
            (variant("nosamples.json", no_samples), "/results/0: no samples_us and no positive time_us/median"),
            (variant("ranks0.json", row0("ranks", 0)), "/results/0/ranks: must be an integer from 1 to 16777216"),
            (variant("ranks2_40.json", row0("ranks", 1 << 40)),
             "/results/0/ranks: must be an integer from 1 to 16777216"),
            (variant("status.json", run_field("status", 5)), "/run/status: must be a string"),
            (variant("label.json", run_field("label", 5)), "/run/label: must be a string"),
            (variant("exit.json", run_field("exit_code", "x")), "/run/exit_code: must be an integer from -1 to 255"),
            (variant("backend.json", row0("backend", 5)), "/results/0/backend: must be a string"),
            (variant("redop.json", row0("redop", 5)), "/results/0/redop: must be a string"),
            (variant("citarget.json", row0("ci_target_met", "yes")), "/results/0/ci_target_met: must be true or false"),
        ]
        text = json.dumps(good, indent=1)
        (t / "overflow.json").write_text(text.replace('"median": ', '"median": 1e999, "m": ', 1))
        line = text[:text.index('"median": ')].count("\n") + 1
        cases.append((t / "overflow.json", f"overflow.json:{line}: malformed JSON (number out of range: '1e999')"))
        for path, needle in cases:
            for cmd in (["compare", path, self.tmp / "same.json"], ["report", path, "--format", "csv"]):
                code, _, err = run(*cmd)
                self.assertEqual(code, 2, (cmd, err))
                self.assertIn(f"{path}" if "overflow" in needle else f"{path}: {needle}", err, cmd)
                self.assertIn(needle, err, cmd)
                self.assertNotIn("json.exception", err, cmd)

    def test_bad_inputs_exit_2(self):
        t = self.tmp / "bad"
        t.mkdir(exist_ok=True)
        good = json.loads((self.tmp / "same.json").read_text())
        cases = {}
        (t / "malformed.json").write_text('{"schema_version": 1,\n "results": [,]}')
        cases["malformed.json"] = "malformed.json:2"
        text = json.dumps(good)
        (t / "truncated.json").write_text(text[: len(text) // 3])
        cases["truncated.json"] = "truncated"
        v = dict(good, schema_version=2)
        (t / "schema.json").write_text(json.dumps(v))
        cases["schema.json"] = "/schema_version"
        m = json.loads(text)
        del m["results"][3]["bytes"]
        (t / "missing.json").write_text(json.dumps(m))
        cases["missing.json"] = "/results/3/bytes: missing field"
        n = json.loads(text)
        n["results"][0]["samples_us"][2] = -1.0
        (t / "negative.json").write_text(json.dumps(n))
        cases["negative.json"] = "/results/0/samples_us/2"
        (t / "nan.json").write_text(text.replace('"samples_us": [', '"samples_us": [NaN, ', 1))
        cases["nan.json"] = "nan.json:1"
        for name, needle in cases.items():
            code, _, err = run("compare", t / name, self.tmp / "same.json")
            self.assertEqual(code, 2, name)
            self.assertIn(name, err)
            self.assertIn(needle, err, name)
        (t / "empty").mkdir(exist_ok=True)
        code, _, err = run("compare", t / "empty", self.tmp / "same.json")
        self.assertEqual(code, 2)
        self.assertIn("holds no result files", err)
        code, _, err = run("compare", self.tmp / "same.json", self.tmp / "same.json", "--claim", t)
        self.assertEqual(code, 2)
        self.assertIn(f"{t}: is a folder, not a file", err)
        claim = t / "claim.yaml"
        claim.write_text("statement: x\nexpected_speedup: 18%\ncolour: blue\n")
        code, _, err = run("compare", self.tmp / "same.json", self.tmp / "same.json", "--claim", claim)
        self.assertEqual(code, 2)
        self.assertIn("claim.yaml:3", err)
        self.assertIn("unknown key 'colour'", err)
        for flags, needle in [(["--format", "xml"], "--format"), (["--threshold", "abc", "--gate", "regression"],
                                                                   "--threshold"),
                              (["--expect-speedup", "lots"], "--expect-speedup"), (["--bogus"], "--bogus"),
                              (["--statistic", "mean", "--expect-speedup", "5%"], "--statistic"),
                              (["--gate", "speed"], "--gate"), (["--ops", "allfoo"], "allfoo"),
                              (["--allow-mismatch", "colour"], "colour")]:
            code, _, err = run("compare", self.tmp / "same.json", self.tmp / "same.json", *flags)
            self.assertEqual(code, 2, flags)
            self.assertIn(needle, err, flags)

    def test_non_finite_numbers_exit_2(self):
        # A malformed number must never switch a check off: --alpha nan used to turn this failing gate
        # into a pass (CLI11's range check lets NaN through).
        code, _, err = run("compare", self.tmp / "same.json", self.tmp / "slow.json", "--gate", "regression",
                           "--resamples", "500")
        self.assertEqual(code, 1, err)
        for value in ["nan", "NaN", "inf", "-inf", "1e999", "0x1p-3"]:
            for flags, needle in [(["--gate", "regression", "--alpha", value], "--alpha"),
                                  (["--gate", "regression", "--threshold", value], "--threshold"),
                                  (["--expect-speedup", value], "--expect-speedup"),
                                  (["--expect-speedup", "5%", "--tolerance", value], "--tolerance")]:
                code, _, err = run("compare", self.tmp / "same.json", self.tmp / "slow.json", *flags)
                self.assertEqual(code, 2, (flags, err))
                self.assertIn(needle, err, flags)
                self.assertIn(f"'{value}' is not a", err, flags)


class ImportCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ccbench-import-cli-"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def import_file(self, fmt, src, *extra):
        out = self.tmp / (Path(src).stem + fmt + ".json")
        code, _, err = run("import", fmt, src, "--out", out, *extra)
        self.assertEqual(code, 0, err)
        return json.loads(out.read_text()), out

    def test_nccl_tests_text_reproduces_busbw(self):
        for name in ("nccl-tests-allreduce.txt", "nccl-tests-allreduce-mpirun.txt"):
            doc, _ = self.import_file("nccl-tests", DATA / name)
            table = [l.split("<stdout>:")[-1].split() for l in (DATA / name).read_text().splitlines()]
            table = [t for t in table if t and t[0].isdigit()]
            self.assertEqual(len(doc["results"]), 2 * len(table))
            for i, cols in enumerate(table):
                for half, (time_col, bus_col) in enumerate([(5, 7), (9, 11)]):
                    row = doc["results"][2 * i + half]
                    self.assertEqual(row["bytes"], int(cols[0]))
                    self.assertEqual(row["in_place"], half == 1)
                    self.assertEqual(row["samples_kind"], "summary")
                    self.assertIsNone(row["time_us"]["ci95"])
                    self.assertAlmostEqual(row["time_us"]["median"], float(cols[time_col]))
                    self.assertAlmostEqual(row["busbw_gbps"], float(cols[bus_col]), delta=0.006 + 1e-3 * row["busbw_gbps"])

    def test_nccl_tests_json_and_osu(self):
        doc, _ = self.import_file("nccl-tests", DATA / "nccl-tests-allreduce.json")
        src = json.loads((DATA / "nccl-tests-allreduce.json").read_text())
        for i, rec in enumerate(src["results"]):
            self.assertAlmostEqual(doc["results"][2 * i]["busbw_gbps"], rec["out_of_place"]["bus_bw"], delta=1e-4)
            self.assertAlmostEqual(doc["results"][2 * i + 1]["busbw_gbps"], rec["in_place"]["bus_bw"], delta=1e-4)
        doc, _ = self.import_file("osu", DATA / "osu-allreduce-full.txt", "--ranks", "2")
        rows = [l.split() for l in (DATA / "osu-allreduce-full.txt").read_text().splitlines() if l[:1].isdigit()]
        for row, cols in zip(doc["results"], rows):
            self.assertEqual(row["bytes"], int(cols[0]))
            self.assertAlmostEqual(row["time_us"]["median"], float(cols[1]))
            self.assertAlmostEqual(row["time_us"]["min"], float(cols[2]))
            self.assertAlmostEqual(row["time_us"]["max"], float(cols[3]))

    def test_imported_logs_compare_with_ci_warning(self):
        _, a = self.import_file("nccl-tests", DATA / "nccl-tests-allreduce.txt")
        code, out, err = run("compare", a, a, "--format", "json", "--resamples", "100")
        self.assertEqual(code, 0, err)
        j = json.loads(out)
        self.assertTrue(any("CIs of the median are unavailable" in w for w in j["warnings"]))
        self.assertIsNone(j["rows"][0]["baseline"]["ci95_us"])

    def test_import_bad_input_exit_2(self):
        bad = self.tmp / "bad.txt"
        bad.write_text("# Collective test starting: all_reduce_perf\n"
                       "#  Rank  0 Group  0 Pid   1 on h device  0 [0000:53:00] NVIDIA H200\n"
                       "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
                       "        1024           256     float     sum      -1     -nan    0.00    0.00      0\n")
        code, _, err = run("import", "nccl-tests", bad, "--out", self.tmp / "x.json")
        self.assertEqual(code, 2)
        self.assertIn("bad.txt:4", err)
        code, _, err = run("import", "osu", DATA / "osu-allreduce.txt", "--out", self.tmp / "y.json")
        self.assertEqual(code, 2)
        self.assertIn("--ranks", err)
        for value in ["nan", "inf", "-inf", "1e999"]:
            code, _, err = run("import", "nccl-tests", DATA / "nccl-tests-allreduce.txt", "--out", self.tmp / "w.json",
                               "--link-gbps", value)
            self.assertEqual(code, 2, err)
            self.assertIn("--link-gbps: '" + value + "' is not a finite number", err)
            self.assertFalse((self.tmp / "w.json").exists())
        huge = self.tmp / "huge.txt"
        huge.write_text("# nThread 99999999999 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 "
                        "agg iters: 1 validation: 1 graph: 0\n")
        code, _, err = run("import", "nccl-tests", huge, "--out", self.tmp / "h.json")
        self.assertEqual(code, 2, err)
        self.assertIn("huge.txt:1: nThread '99999999999' is not a whole number up to 10^9", err)
        code, _, err = run("import", "iperf", DATA / "osu-allreduce.txt", "--out", self.tmp / "z.json")
        self.assertEqual(code, 2)
        self.assertIn("FORMAT", err)


if __name__ == "__main__":
    CCBENCH = sys.argv.pop(1)
    unittest.main()
