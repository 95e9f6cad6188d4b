#!/usr/bin/python3
"""`ccbench run --groups SPEC` under a real mpirun: concurrent communicators. Every op and dtype is
correct in every group (the data check runs per communicator), mod and div give the groups the
arithmetic says (recorded in config.groups), each row carries the per-group and aggregate
bandwidths the method defines (docs/method.md "Concurrent groups"), a corrupted rank fails only its
group's check (exit 1), and a bad SPEC is exit 2 with one line naming --groups."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../run"))
import ccbench_mpi as m  # noqa: E402

DTYPES = ["int8", "uint8", "int32", "int64", "float", "double"]
ALL_OPS = "allreduce,allgather,alltoall,reduce_scatter,broadcast"
FAST = ["-b", "1", "-e", "40000", "-f", "7", "-n", "3", "-w", "1", "--in-place", "both", "-c", "1"]
FACTOR = {"allreduce": lambda n: 2 * (n - 1) / n, "allgather": lambda n: (n - 1) / n,
          "alltoall": lambda n: (n - 1) / n, "reduce_scatter": lambda n: (n - 1) / n, "broadcast": lambda n: 1.0}


def ccbench_lines(stderr):
    """ccbench's own lines of stderr (mpirun adds its block about a non-zero exit)."""
    return [line for line in stderr.splitlines() if line.startswith("ccbench")]


def busbw(op, n, nbytes, us):
    return nbytes / (us * 1e-6) / 1e9 * FACTOR[op](n)


class Groups(unittest.TestCase):
    def grouped_run(self, np, spec, args, extra_env=None, code=0):
        d = m.tmpdir()
        out = os.path.join(d, "r.json")
        p = m.run(np, args + ["--groups", spec, "-J", out], extra_env=extra_env)
        self.assertEqual(p.returncode, code, f"{spec} np={np} {args}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
        return m.load(out), p

    def check_layout(self, doc, spec, world_ranks):
        g = doc["config"]["groups"]
        self.assertEqual(g["spec"], spec)
        self.assertEqual(g["world_ranks"], world_ranks)
        self.assertEqual(g["count"], len(world_ranks))
        self.assertEqual(g["ranks_per_group"], len(world_ranks[0]))
        self.assertEqual(g["nodes_per_group"], 1)  # one machine
        self.assertEqual(len(g["hosts"]), len(world_ranks))
        for row in doc["results"]:
            self.assertEqual(row["ranks"], len(world_ranks[0]), "a row's ranks are its group's")
            rg = row["groups"]
            self.assertEqual((rg["spec"], rg["count"], rg["ranks_per_group"]),
                             (spec, len(world_ranks), len(world_ranks[0])))

    def test_every_op_and_dtype_correct_in_every_group(self):
        # 4 ranks, mod:2: groups {0,2} and {1,3}, all five ops, in and out of place, each dtype.
        for dtype, redop in zip(DTYPES, ["sum", "prod", "min", "max", "sum", "prod"]):
            with self.subTest(dtype=dtype, redop=redop):
                doc, _ = self.grouped_run(4, "mod:2", FAST + ["--ops", ALL_OPS, "-d", dtype, "-o", redop])
                self.check_layout(doc, "mod:2", [[0, 2], [1, 3]])
                rows = doc["results"]
                self.assertEqual({(r["op"], r["in_place"]) for r in rows},
                                 {(op, ip) for op in ALL_OPS.split(",") for ip in (False, True)})
                for r in rows:
                    self.assertEqual(r["wrong"], 0)
                    self.assertEqual(r["groups"]["wrong_per_group"], [0, 0])
                    self.assertEqual(r["dtype"], dtype)

    def test_div_and_mod_on_eight_ranks(self):
        cases = {"mod:2": [[0, 2, 4, 6], [1, 3, 5, 7]], "div:2": [[0, 1], [2, 3], [4, 5], [6, 7]],
                 "mod:4": [[0, 4], [1, 5], [2, 6], [3, 7]], "div:4": [[0, 1, 2, 3], [4, 5, 6, 7]]}
        for spec, world_ranks in cases.items():
            with self.subTest(spec=spec):
                doc, p = self.grouped_run(8, spec, ["-b", "64", "-e", "4K", "-f", "8", "-n", "3", "-w", "1",
                                                    "--ops", "allreduce,alltoall,broadcast", "-d", "int32"])
                self.check_layout(doc, spec, world_ranks)
                for r in doc["results"]:
                    self.assertEqual(r["groups"]["wrong_per_group"], [0] * len(world_ranks))
                # The console says the layout once, before the tables.
                members = "; ".join("[" + ",".join(map(str, g)) + "]" for g in world_ranks)
                self.assertEqual(p.stdout.count("# groups " + spec + ":"), 1, p.stdout[:2000])
                self.assertIn(members.split("; ")[0], p.stdout)

    def test_broadcast_root_is_a_rank_of_each_group(self):
        # --root 1 is each group's rank 1 (world ranks 2 and 3 under mod:2 of 4); a root outside the
        # group's ranks is exit 2 naming it.
        doc, _ = self.grouped_run(4, "mod:2", ["-b", "8", "-e", "4K", "-f", "8", "-n", "3", "--ops", "broadcast",
                                               "--root", "1"])
        self.assertTrue(all(r["root"] == 1 and r["wrong"] == 0 for r in doc["results"]))
        p = m.run(4, ["-b", "8", "-e", "8", "--ops", "broadcast", "--root", "2", "--groups", "mod:2"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(ccbench_lines(p.stderr), ["ccbench run: --root 2 is not a rank (0..1)"])

    def test_bandwidths_per_group_and_aggregate(self):
        doc, _ = self.grouped_run(4, "div:2", ["-b", "1K", "-e", "256K", "-f", "16", "-n", "10",
                                               "--ops", "allreduce,allgather,alltoall,reduce_scatter,broadcast"])
        self.check_layout(doc, "div:2", [[0, 1], [2, 3]])
        for r in doc["results"]:
            g = r["groups"]
            n = g["ranks_per_group"]
            t = r["time_us"]["median"]
            # The row: the common time (slowest rank of all groups), the bus factor of the group's size.
            self.assertAlmostEqual(r["busbw_gbps"], busbw(r["op"], n, r["bytes"], t), delta=1e-9 * r["busbw_gbps"])
            self.assertAlmostEqual(g["busbw_gbps_aggregate"], 2 * r["busbw_gbps"], delta=1e-9 * r["busbw_gbps"])
            self.assertAlmostEqual(g["algbw_gbps_aggregate"], 2 * r["algbw_gbps"], delta=1e-9 * r["algbw_gbps"])
            for tg, bg in zip(g["time_us_per_group"], g["busbw_gbps_per_group"]):
                # Each sample's common time is the max over the groups' times, so no group's median
                # exceeds the common median.
                self.assertLessEqual(tg, t * (1 + 1e-12))
                self.assertAlmostEqual(bg, busbw(r["op"], n, r["bytes"], tg), delta=1e-9 * bg)

    def test_corrupted_rank_fails_its_group_only(self):
        # World rank 3 is in group 1 under mod:2 (and in group 1 under div:2).
        for spec in ["mod:2", "div:2"]:
            with self.subTest(spec=spec):
                doc, p = self.grouped_run(4, spec, ["-b", "1K", "-e", "4K", "-n", "3", "--ops", "allreduce"],
                                          extra_env={"CCBENCH_TEST_CORRUPT_RANK": "3"}, code=1)
                self.assertIn("data check failed", p.stderr)
                self.assertEqual(doc["run"]["exit_code"], 1)
                for r in doc["results"]:
                    self.assertEqual(r["wrong"], 1)
                    self.assertEqual(r["groups"]["wrong_per_group"], [0, 1])

    def test_bad_specs_exit_2_with_one_line(self):
        d = m.tmpdir()
        out = os.path.join(d, "r.json")
        with open(out, "w") as f:
            f.write("keep me")
        cases = [
            (4, "mod:3", "ccbench run: --groups mod:3: 3 does not divide the 4 ranks"),
            (4, "div:3", "ccbench run: --groups div:3: 3 does not divide the 4 ranks"),
            (4, "mod:4", "ccbench run: --groups mod:4: 4 groups of one rank each out of 4 ranks (a group needs at "
                         "least 2)"),
            (4, "div:1", "ccbench run: --groups div:1: 4 groups of one rank each out of 4 ranks (a group needs at "
                         "least 2)"),
            (2, "xor:2", "ccbench run: --groups: unknown SPEC 'xor:2' (expected mod:N, div:N or none)"),
            (2, "mod:0", "ccbench run: --groups mod:0: N must be a positive integer (got '0')"),
            (2, "div:two", "ccbench run: --groups div:two: N must be a positive integer (got 'two')"),
        ]
        for np, spec, message in cases:
            with self.subTest(spec=spec, np=np):
                p = m.run(np, ["-b", "8", "-e", "8", "--groups", spec, "-J", out])
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(ccbench_lines(p.stderr), [message])
                with open(out) as f:
                    self.assertEqual(f.read(), "keep me")

    def test_yaml_config_takes_groups(self):
        d = m.tmpdir()
        cfg = os.path.join(d, "sweep.yaml")
        with open(cfg, "w") as f:
            f.write("ops: [allreduce]\nmin_bytes: 1K\nmax_bytes: 1K\niters: 3\ngroups: div:2\n")
        out = os.path.join(d, "r.json")
        p = m.run(4, ["--config", cfg, "-J", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_layout(m.load(out), "div:2", [[0, 1], [2, 3]])
        with open(cfg, "w") as f:
            f.write("ops: [allreduce]\ngroups: mod:3\n")
        p = m.run(4, ["--config", cfg, "-J", out])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(ccbench_lines(p.stderr), ["ccbench run: --groups mod:3: 3 does not divide the 4 ranks"])

    def test_readers_accept_and_compare_refuses_to_mix(self):
        d = m.tmpdir()
        grouped, alone = os.path.join(d, "grouped.json"), os.path.join(d, "alone.json")
        args = ["-b", "1K", "-e", "4K", "-f", "4", "-n", "5", "--ops", "allreduce"]
        self.assertEqual(m.run(4, args + ["--groups", "mod:2", "-J", grouped]).returncode, 0)
        self.assertEqual(m.run(2, args + ["-J", alone]).returncode, 0)
        # Both rows have ranks 2 (ranks_per_node differs too: 2 vs 4, allowed here); the groups key keeps
        # them apart: not comparable (exit 3).
        compare = [m.CCBENCH, "compare", alone, grouped, "--allow-mismatch", "ranks_per_node"]
        p = subprocess.run(compare, capture_output=True, text=True)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("verdict: not_comparable (exit 3): groups differs (none vs mod:2", p.stdout)
        # ... unless asked: "how much does a concurrent neighbour cost my group?"
        p = subprocess.run(compare + ["--allow-mismatch", "groups"], capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("groups differs (none vs mod:2); allowed by --allow-mismatch", p.stdout)
        # A grouped file against itself compares.
        p = subprocess.run([m.CCBENCH, "compare", grouped, grouped], capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 3, p.stdout + p.stderr)
        # report's table shows the layout and the aggregate columns.
        p = subprocess.run([m.CCBENCH, "report", grouped, "--format", "table"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("# groups mod:2 | 2 concurrent groups of 2 ranks | up to 1 node(s) per group", p.stdout)
        self.assertIn("aggbw", p.stdout)
        # The schema knows the fields.
        import jsonschema
        with open(os.path.join(m.SOURCE, "configs/schema/result.schema.json")) as f:
            schema = json.load(f)
        jsonschema.validate(m.load(grouped), schema)
        for fmt in ["csv", "markdown", "html", "prometheus", "gbench"]:
            p = subprocess.run([m.CCBENCH, "report", grouped, "--format", fmt], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, f"{fmt}: {p.stderr}")


if __name__ == "__main__":
    unittest.main()
