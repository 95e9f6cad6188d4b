#!/usr/bin/python3
"""--require-path on `ccbench fabric`: the provider the endpoint opened proves the path or ends the
run with exit 6, the rows measured kept and marked (docs/path-proof.md)."""
import os
import unittest

import fabric_mpi as m

ARGS = ["--ops", "pingpong", "-b", "8", "-e", "64"] + m.QUICK


class PathProof(unittest.TestCase):
    def test_the_provider_opened_proves_its_path(self):
        d = m.tmpdir()
        out = os.path.join(d, "f.json")
        r = m.run(["-p", "shm", "--require-path", "shm", "-J", out] + ARGS)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = m.load(out)
        m.validate(doc)
        proof = doc["fabric"]["proof"]
        self.assertEqual(proof["required"], "shm")
        self.assertEqual(proof["verdict"], "proven")
        self.assertEqual(proof["run"]["source"], "libfabric provider")
        self.assertEqual(proof["run"]["carried_by"], "shm")
        self.assertEqual(proof["run"]["message"], "shm proven: the endpoint opened provider shm")
        self.assertIn("# path: shm proven: the endpoint opened provider shm", r.stdout)

    def test_another_provider_ends_with_exit_6_keeping_the_rows(self):
        d = m.tmpdir()
        out = os.path.join(d, "f.json")
        r = m.run(["-p", "tcp", "--require-path", "shm", "-J", out] + ARGS)
        self.assertEqual(r.returncode, 6, r.stderr)
        line = "ccbench fabric: --require-path shm: the endpoint opened provider tcp;ofi_rxm (core tcp)"
        self.assertIn(line, r.stderr)
        doc = m.load(out)
        m.validate(doc)
        self.assertEqual(doc["run"]["status"], "failed")
        self.assertEqual(doc["run"]["exit_code"], 6)
        self.assertEqual(doc["run"]["error"], line[len("ccbench fabric: "):])
        self.assertEqual(doc["fabric"]["proof"]["verdict"], "failed")
        # Stopped after the first size: its one row kept and marked.
        self.assertEqual(len(doc["results"]), 1)
        self.assertEqual(doc["results"][0]["path_proof"], "failed")

    def test_what_the_provider_cannot_say_is_refused_before_measuring(self):
        r = m.run(["-p", "tcp", "--require-path", "nvlink"] + ARGS)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("ccbench fabric: --require-path nvlink: the libfabric backend can prove efa, tcp, shm, net",
                      r.stderr)
        r = m.run(["-p", "tcp", "--require-path", "efa", "--require-rails", "4"] + ARGS)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn('ccbench fabric: --require-rails 4: the libfabric backend does not count EFA rails '
                      '(docs/path-proof.md, "Not yet")', r.stderr)
        r = m.run(["-p", "tcp", "--require-rails", "4"] + ARGS)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("ccbench fabric: --require-rails: needs --require-path efa (rails are EFA devices)", r.stderr)


if __name__ == "__main__":
    unittest.main()
