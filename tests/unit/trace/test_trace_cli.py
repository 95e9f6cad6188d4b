#!/usr/bin/python3
"""`ccbench trace import` and `ccbench trace show` on the fixtures of tests/data/trace: exit codes,
one-line errors naming file, line or record and field, --out untouched on an error, the trace
valid against configs/schema/trace.schema.json, and show's summary against hand-computed values."""
import json
import os
import subprocess
import tempfile
import unittest

import jsonschema

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
DATA = os.path.join(SOURCE, "tests/data/trace")


def ccbench(*args):
    return subprocess.run([CCBENCH, *args], capture_output=True, text=True, timeout=60)


class TraceCli(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ccbench-trace-cli-")
        with open(os.path.join(SOURCE, "configs/schema/trace.schema.json")) as f:
            self.schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(self.schema)

    def nccl_files(self):
        return [os.path.join(DATA, f"nccl_rank{r}.log") for r in range(3)]

    def test_imported_traces_validate_against_the_schema(self):
        cases = {"nccl-log": self.nccl_files(),
                 "nccl-inspector": [os.path.join(DATA, f"inspector_rank{r}.jsonl") for r in range(2)],
                 "pytorch-profiler": [os.path.join(DATA, f"kineto_{n}.json") for n in "ab"],
                 "pytorch-et (2.x)": [os.path.join(DATA, f"et2_rank{r}.json") for r in range(2)],
                 "pytorch-et": [os.path.join(DATA, f"{k}_rank{r}.json") for k in ("eg", "prof") for r in range(2)]}
        for fmt, files in cases.items():
            with self.subTest(fmt=fmt):
                out = os.path.join(self.dir, f"{fmt}.json")
                p = ccbench("trace", "import", fmt.split()[0], *files, "--out", out)
                self.assertEqual(p.returncode, 0, p.stderr)
                with open(out) as f:
                    doc = json.load(f)
                jsonschema.validate(doc, self.schema)
                self.assertEqual(doc["provenance"]["format"], fmt.split()[0])
                self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.startswith(".")), [])

    def test_show_prints_the_step_summary(self):
        out = os.path.join(self.dir, "n.json")
        self.assertEqual(ccbench("trace", "import", "nccl-log", *self.nccl_files(), "--out", out).returncode, 0)
        p = ccbench("trace", "show", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {tuple(line.split()[:2]): line.split()[2:] for line in p.stdout.splitlines() if line.startswith("  ")}
        # Hand-computed from the three logs: count x element size x ranks.
        self.assertEqual(rows[("allreduce", "0x1111aaaa")], ["3", "3M"])        # 262144 x 4 x 3
        self.assertEqual(rows[("reduce_scatter", "0x1111aaaa")], ["3", "18000"])  # 3 x 1000 x 2 x 3
        self.assertEqual(rows[("broadcast", "0x1111aaaa")], ["3", "2400"])      # 100 x 8 x 3
        self.assertEqual(rows[("allgather", "0x1111aaaa")], ["3", "198"])       # 33 x 2 x 3
        self.assertEqual(rows[("send", "0x2222bbbb")], ["1", "4K"])
        self.assertEqual(rows[("recv", "0x2222bbbb")], ["1", "4K"])
        self.assertIn("calls without a step marker: 4-5 calls per rank, 3174518 sent in all", p.stdout)
        self.assertIn("    [4K, 8K)                            5\n", p.stdout)
        self.assertIn("  rank 0: 4 calls\n  rank 1: 5 calls\n  rank 2: 5 calls\n", p.stdout)
        self.assertIn("group 0x2222bbbb: ranks 1,2\n", p.stdout)

    def test_bad_input_is_exit_2_naming_file_line_and_field_and_out_untouched(self):
        out = os.path.join(self.dir, "keep.json")
        with open(out, "w") as f:
            f.write("old")
        bad = os.path.join(self.dir, "nccl_rank0.log")
        with open(bad, "w") as f:
            f.write("h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 commId 0xab - Init COMPLETE\n"
                    "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 9 "
                    "root 0 comm 0x1 [nranks=1] stream 0x2\n")
        p = ccbench("trace", "import", "nccl-log", bad, "--out", out)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, f"ccbench trace: {bad}:2: field 'op': not a reduction ccbench has (ncclRedOp_t 0-4)\n")
        with open(out) as f:
            self.assertEqual(f.read(), "old")
        self.assertEqual(sorted(os.listdir(self.dir)), ["keep.json", "nccl_rank0.log"])

    def test_a_symlink_at_out_is_kept_and_its_target_replaced(self):
        target = os.path.join(self.dir, "real.json")
        with open(target, "w") as f:
            f.write("old")
        link = os.path.join(self.dir, "link.json")
        os.symlink(target, link)
        p = ccbench("trace", "import", "nccl-log", *self.nccl_files(), "--out", link)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.islink(link))
        with open(target) as f:
            self.assertEqual(json.load(f)["world_size"], 3)

    def test_show_refuses_a_bad_trace_naming_record_and_field(self):
        path = os.path.join(self.dir, "t.json")
        with open(path, "w") as f:
            json.dump({"trace_version": 1, "world_size": 1, "groups": [{"id": "w", "ranks": [0], "members_from_source": True}],
                       "provenance": {"format": "nccl-log", "source": "", "source_version": "", "tool_version": "",
                                      "not_in_source": []},
                       "ranks": [{"rank": 0, "file": "x", "calls": [
                           {"op": "broadcast", "dtype": "float", "count": 1, "group": "w", "origin": "nccl_log"}]}]}, f)
        p = ccbench("trace", "show", path)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, f"ccbench trace: {path}: ranks[0].calls[0]: field 'root' is missing (broadcast)\n")

    def test_missing_file_and_unknown_format(self):
        p = ccbench("trace", "import", "nccl-log", os.path.join(self.dir, "nope.log"), "--out",
                    os.path.join(self.dir, "o.json"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("nope.log", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "o.json")))
        p = ccbench("trace", "import", "chakra", "x", "--out", os.path.join(self.dir, "o.json"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("FORMAT", p.stderr)


if __name__ == "__main__":
    unittest.main()
