#!/usr/bin/python3
"""Issue 23's hostile inputs that need no MPI: each is exit 2 with one exact line naming the file,
flag or field, and within a few seconds.

- JSON nested 10^6 deep (10^5 was fine) crashed compare and report: a depth limit of 512 levels;
- a FIFO given to `report --plan` blocked forever; a string where a plan holds a number printed
  nlohmann's type_error.302 naming neither file nor field;
- a 389-byte YAML alias bomb made `compare --claim` spin past 25 s;
- an imported row (ci95 null) printed a perfect 0.0 in report's ci column (now "-", an empty CSV
  cell, null in gbench);
- migrate.sh --hosts with no value said "$2: unbound variable".

Usage: test_hostile_cli.py PATH_TO_ccbench
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

CCBENCH = None
ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"


def run(*args, timeout=60):
    start = time.monotonic()
    p = subprocess.run([CCBENCH, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def nested(depth):
    return "[" * depth + "]" * depth


def alias_bomb(levels):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


class Hostile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ccbench-hostile-cli-"))
        cls.good = DATA / "report" / "local-mpi.json"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_json_nested_a_million_deep(self):
        # A deep value inside a file that is otherwise valid (a bare deep array is refused before
        # anything copies it): this one segfaulted compare and report.
        deep = self.tmp / "deep.json"
        text = self.good.read_text()
        deep.write_text(text.replace('"label": ', '"extra": ' + nested(10**6) + ', "label": ', 1))
        objects = self.tmp / "deep-objects.json"
        objects.write_text('{"a":' * 10**6 + "1" + "}" * 10**6)
        line = self.tmp / "deep.jsonl"
        row = json.loads(self.good.read_text())["results"][0]
        line.write_text(json.dumps(row) + "\n" + nested(10**6) + "\n")
        deep_line = text[:text.index('"label": ')].count("\n") + 1
        for f, where in ((deep, f"{deep}:{deep_line}"), (objects, f"{objects}:1"), (line, f"{line}:2")):
            want = f"{where}: JSON nested deeper than 512 levels"
            with self.subTest(f=f.name, command="compare"):
                code, _, err, _ = run("compare", f, self.good)
                self.assertEqual(code, 2, err)
                self.assertEqual(err, f"ccbench compare: {want}\n")
            with self.subTest(f=f.name, command="report"):
                code, _, err, _ = run("report", f)
                self.assertEqual(code, 2, err)
                self.assertIn(want, err)
        # 512 levels is the limit itself; one more is refused.
        for depth, ok in ((512, True), (513, False)):
            f = self.tmp / f"d{depth}.json"
            f.write_text(nested(depth))
            code, _, err, _ = run("report", f)
            self.assertEqual(code, 2, err)
            self.assertEqual("JSON nested deeper" in err, not ok, err)

    def test_report_plan_fifo_does_not_block(self):
        fifo = self.tmp / "plan.fifo"
        os.mkfifo(fifo)
        code, _, err, took = run("report", "--plan", fifo, timeout=20)
        self.assertEqual(code, 2, err)
        self.assertEqual(err, f"ccbench report: --plan {fifo}: is a FIFO (named pipe), not a regular file\n")
        self.assertLess(took, 10)

    def test_report_model_through_the_model_loader(self):
        # `report --model` loads as `model predict` does: a FIFO is refused at once, and a value
        # nested 10^6 deep (it overflowed the stack: a segfault) is exit 2 naming the file.
        fifo = self.tmp / "model.fifo"
        os.mkfifo(fifo)
        code, _, err, took = run("report", self.good, "--model", fifo, timeout=20)
        self.assertEqual(code, 2, err)
        self.assertEqual(err, f"ccbench report: {fifo}: is a FIFO (named pipe), not a regular file\n")
        self.assertLess(took, 10)
        model = self.tmp / "fitted.json"
        published = ROOT / "results" / "published"
        code, _, err, _ = run("model", "fit", *[published / f"p5-hyperpod-{n}n-allreduce.json" for n in (2, 4, 8)],
                              "-o", model, "--refits", "0", "--no-cross-validation")
        self.assertEqual(code, 0, err)
        deep = self.tmp / "deep-model.json"
        deep.write_text(model.read_text().replace('"model_version": 2', '"model_version": ' + nested(10**6), 1))
        for args in (["report", self.good, "--model", deep],
                     ["model", "predict", deep, "--op", "allreduce", "--bytes", "1M", "--nodes", "2"]):
            with self.subTest(command=args[0]):
                code, _, err, _ = run(*args)
                self.assertEqual(code, 2, err)
                self.assertEqual(err, f"ccbench {' '.join(map(str, args[:1 if args[0] == 'report' else 2]))}: "
                                      f"{deep}:{self.line_of(deep, 'model_version')}: JSON nested deeper than 512 levels\n")
        # The undamaged model still draws over the runs it has a curve for.
        code, _, err, _ = run("report", published / "p5-hyperpod-4n-allreduce.json", "--model", model)
        self.assertEqual(code, 0, err)

    @staticmethod
    def line_of(path, needle):
        text = Path(path).read_text()
        return text[:text.index(needle)].count("\n") + 1

    def test_report_plan_field_of_the_wrong_type(self):
        plan = {"plan_version": 1, "workload": {"name": "w", "bucket_bytes": 1}, "collectives": [
            {"op": "allreduce", "bytes": 1073741824, "group": 8, "nodes": 1, "count": 1, "overlaps": False}],
            "profiles": [{"profile": "p", "rows": [{"priced": True, "step_us": {"value": 1, "lo": 1, "hi": 1}}]}]}
        cases = [(("collectives", 0, "bytes"), "1G", 'collectives[0].bytes: expected a whole number of 0 or more, got "1G"'),
                 (("collectives", 0, "overlaps"), "yes", 'collectives[0].overlaps: expected true or false, got "yes"'),
                 (("profiles", 0, "rows", 0, "priced"), 1, "profiles[0].rows[0].priced: expected true or false, got 1"),
                 (("profiles", 0, "total_us"), [1], "profiles[0].total_us: expected an object {value, lo, hi}, got [1]"),
                 (("workload", "bucket_bytes"), -5, "workload.bucket_bytes: expected a whole number of 0 or more, got -5"),
                 (("profiles", 0, "unpriced"), "2", 'profiles[0].unpriced: expected a whole number, got "2"')]
        for i, (path, value, needle) in enumerate(cases):
            doc = json.loads(json.dumps(plan))
            target = doc
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = value
            f = self.tmp / f"plan{i}.json"
            f.write_text(json.dumps(doc))
            with self.subTest(needle=needle):
                code, _, err, _ = run("report", "--plan", f)
                self.assertEqual(code, 2, err)
                self.assertEqual(err, f"ccbench report: {f}: {needle}\n")
        # The unchanged document renders, and a migration without its intervals prints dashes.
        doc = json.loads(json.dumps(plan))
        doc["migration"] = {"from": "p", "to": "p", "rows_compared": 1}
        f = self.tmp / "plan-ok.json"
        f.write_text(json.dumps(doc))
        code, out, err, _ = run("report", "--plan", f)
        self.assertEqual(code, 0, err)
        self.assertIn("all collectives", out)

    def test_yaml_alias_bomb_in_a_claim(self):
        claim = self.tmp / "bomb.yaml"
        claim.write_text("statement: x\n" + alias_bomb(9))
        code, _, err, took = run("compare", self.good, self.good, "--claim", claim, timeout=60)
        self.assertEqual(code, 2, err)
        self.assertEqual(err, f"ccbench compare: {claim}: more than 100000 YAML nodes once aliases (*name) are "
                              "expanded; a claim or config has far fewer\n")
        self.assertLess(took, 5)

    def test_imported_rows_print_no_ci(self):
        out = self.tmp / "imported.json"
        code, _, err, _ = run("import", "nccl-tests", DATA / "compare" / "nccl-tests-allreduce.txt", "--out", out)
        self.assertEqual(code, 0, err)
        self.assertIsNone(json.loads(out.read_text())["results"][0]["time_us"]["ci95"])
        code, table, err, _ = run("report", out)
        self.assertEqual(code, 0, err)
        rows = [line.split() for line in table.splitlines() if line and not line.startswith("#")]
        self.assertTrue(rows)
        for cells in rows:
            # size count type redop root | time algbw busbw #wrong ci | time algbw busbw #wrong ci
            self.assertEqual((cells[9], cells[14]), ("-", "-"), cells)
        code, csv, err, _ = run("report", out, "--format", "csv")
        self.assertEqual(code, 0, err)
        header, first = csv.splitlines()[0].split(","), csv.splitlines()[1].split(",")
        self.assertEqual(first[header.index("time_us_ci95_lo")], "")
        self.assertEqual(first[header.index("time_us_ci95_hi")], "")
        code, gb, err, _ = run("report", out, "--format", "gbench")
        self.assertEqual(code, 0, err)
        self.assertIsNone(json.loads(gb)["benchmarks"][0]["time_ci95_lo_us"])
        # A run's own rows keep their CI.
        code, table, err, _ = run("report", self.good)
        self.assertEqual(code, 0, err)
        row = next(line.split() for line in table.splitlines() if line and not line.startswith("#"))
        self.assertRegex(row[9], r"^\d+\.\d$")

    def test_flag_typos_name_the_flag_meant(self):
        code, _, err, _ = run("compare", self.good, self.good, "--max-byte", "4M")
        self.assertEqual(code, 2, err)
        self.assertEqual(err, "ccbench compare: The following arguments were not expected: 4M --max-byte "
                              "(--max-byte: did you mean --max-bytes?)\n")
        code, _, err, _ = run("report", self.good, "--formt", "csv")
        self.assertEqual(code, 2, err)
        self.assertEqual(err, "ccbench report: The following argument was not expected: --formt "
                              "(--formt: did you mean --format?)\n")
        # Nothing close: no guess.
        code, _, err, _ = run("report", self.good, "--zzzzzzzz")
        self.assertEqual(err, "ccbench report: The following argument was not expected: --zzzzzzzz\n")
        # The other commands, through the same helper (fabric and checkpoint start MPI as a singleton).
        model = self.tmp / "typo-model.json"
        cases = [(["fabric", "--max-byte", "4M"],
                  "ccbench fabric: The following arguments were not expected: 4M --max-byte "
                  "(--max-byte: did you mean --max-bytes?)"),
                 (["screen", "--hosts", "a,b", "--out", self.tmp / "s.json", "--tolerence", "0.1"],
                  "ccbench screen: The following argument was not expected: --tolerence "
                  "(--tolerence: did you mean --tolerance?)"),
                 (["model", "fit", self.good, "-o", model, "--refit", "3"],
                  "ccbench model fit: The following argument was not expected: --refit "
                  "(--refit: did you mean --refits?)"),
                 (["model", "predict", model, "--op", "allreduce", "--bytes", "1M", "--nodes", "2", "--profle", "p"],
                  "ccbench model predict: The following arguments were not expected: p --profle "
                  "(--profle: did you mean --profile?)"),
                 (["model", "plan", model, "--workload", "w.yaml", "--formt", "json"],
                  "ccbench model plan: The following argument was not expected: --formt "
                  "(--formt: did you mean --format?)"),
                 (["checkpoint", "--target", self.tmp, "--trails", "3"],
                  "ccbench checkpoint: The following arguments were not expected: 3 --trails "
                  "(--trails: did you mean --trials?)")]
        for args, want in cases:
            with self.subTest(command=" ".join(map(str, args[:2]))):
                code, _, err, _ = run(*args)
                self.assertEqual(code, 2, err)
                self.assertEqual(err, want + "\n")
        self.assertFalse(model.exists())

    def test_html_header_and_markdown_libraries(self):
        page = self.tmp / "h.html"
        code, _, err, _ = run("report", self.good, "--format", "html", "--out", page)
        self.assertEqual(code, 0, err)
        text = page.read_text()
        self.assertIn("<b>laptop &quot;shm&quot; run</b> — Standard PC (i440FX + PIIX, 1996), 1 node, 2 ranks, mpi "
                      "backend, fabric shm, status complete", text)
        doc = json.loads(self.good.read_text())
        doc["system"]["instance_type"] = ""
        bare = self.tmp / "bare.json"
        bare.write_text(json.dumps(doc))
        code, _, err, _ = run("report", bare, "--format", "html", "--out", page)
        self.assertEqual(code, 0, err)
        self.assertIn("<b>laptop &quot;shm&quot; run</b> — 1 node, 2 ranks, mpi backend", page.read_text())
        self.assertNotIn("— ,", page.read_text())
        self.assertIn("1 entry<", page.read_text())
        code, md, err, _ = run("report", self.good, DATA / "report" / "p5en-nccl.json", "--format", "markdown")
        self.assertEqual(code, 0, err)
        self.assertIn("| run | instance | nodes × ranks | backend | fabric | libraries | also found | status |", md)
        self.assertIn("| mpi | shm  | MPI Open MPI 4.1.4 | libfabric 1.17.0 | complete |", md)
        self.assertIn("| nccl | mixed v3 | NCCL 2.26.2, CUDA 12.8 | MPI Open MPI 4.1.7 (/opt/amazon/openmpi), "
                      "libfabric 2.1.0amzn3.0 | complete |", md)

    def test_import_infers_op_and_ranks(self):
        log = ROOT / "results" / "published" / "sources" / "p5-awsome-2n" / "all_reduce_perf_2x_p5.48xlarge.txt"
        out = self.tmp / "aw.json"
        code, _, err, _ = run("import", "nccl-tests", log, "--out", out)
        self.assertEqual(code, 0, err)
        self.assertIn(f"ccbench import: warning: {log}: no '#  Rank' lines: 16 ranks, from busbw/algbw at the largest "
                      "size (pass --ranks to set it)\n", err)
        d = json.loads(out.read_text())
        self.assertEqual((d["system"]["ranks"], d["results"][0]["op"]), (16, "allreduce"))

    def test_migrate_option_without_value(self):
        for flag in ("--hosts", "--out", "--claim"):
            p = subprocess.run([ROOT / "scripts/emulate/migrate.sh", flag], capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr, f"migrate.sh: {flag} needs a value (see --help)\n")


if __name__ == "__main__":
    CCBENCH = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
