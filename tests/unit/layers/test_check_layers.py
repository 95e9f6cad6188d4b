#!/usr/bin/python3
"""The layer checker itself: it must flag an include that climbs a layer, a folder missing from its
table and an MPI call outside the channel, and pass a clean tree."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import check_layers  # noqa: E402


def tree(files):
    d = tempfile.mkdtemp()
    for rel, text in files.items():
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return d


class Layers(unittest.TestCase):
    def test_clean_tree_passes(self):
        d = tree({"core/a.hpp": "#pragma once\n", "compare/b.cpp": '#include "core/a.hpp"\n',
                  "cli/c.cpp": '#include "compare/b.hpp"\n#include "sweep/session.hpp"\n'})
        self.assertEqual(check_layers.check(d)[0], [])

    def test_upward_include_fails_with_file_and_line(self):
        d = tree({"core/a.cpp": '// x\n#include "sweep/engine.hpp"\n'})
        problems = check_layers.check(d)[0]
        self.assertEqual(problems, ["src/core/a.cpp:2: core includes sweep/engine.hpp (sweep): not an arrow of the layer diagram"])

    def test_backends_see_only_the_channel_of_sweep(self):
        d = tree({"backends/nccl/n.cpp": '#include "sweep/channel.hpp"\n#include "sweep/engine.hpp"\n'})
        problems = check_layers.check(d)[0]
        self.assertEqual(len(problems), 1)
        self.assertIn("backends/nccl includes sweep/engine.hpp", problems[0])

    def test_launch_sits_below_screen(self):
        d = tree({"screen/s.cpp": '#include "launch/process.hpp"\n#include "core/a.hpp"\n',
                  "launch/l.cpp": '#include "screen/search.hpp"\n',
                  "launch/m.cpp": '#include "sweep/engine.hpp"\n'})
        problems = sorted(check_layers.check(d)[0])
        self.assertEqual(problems, [
            "src/launch/l.cpp:1: launch includes screen/search.hpp (screen): not an arrow of the layer diagram",
            "src/launch/m.cpp:1: launch includes sweep/engine.hpp (sweep): not an arrow of the layer diagram"])

    def test_unknown_folder_fails(self):
        d = tree({"newthing/x.cpp": "\n"})
        self.assertIn("folder not in the layer table", check_layers.check(d)[0][0])

    def test_mpi_outside_the_channel_fails(self):
        d = tree({"backends/nccl/n.cpp": "#include <mpi.h>\nvoid f() { MPI_Barrier(c); }  // MPI_Init( in a comment\n",
                  "sweep/mpi_channel.cpp": "#include <mpi.h>\nvoid g() { MPI_Barrier(c); }\n"})
        problems = check_layers.check(d)[0]
        self.assertEqual(len(problems), 2, problems)
        self.assertTrue(all("backends/nccl/n.cpp" in p for p in problems))

    def test_table_has_no_cycle(self):
        self.assertIsNone(check_layers.find_cycle())


if __name__ == "__main__":
    unittest.main()
