#!/usr/bin/python3
"""The replay against the priced sum, as a known answer (docs/replay.md, "Replay against the priced
sum"): the PyTorch 1.13 job's 2-rank trace replayed (`--gaps none -c 0`) and priced from a `ccbench
run` sweep's fit on this machine, 5 alternating pairs of short launches
(benchmarks/replay/priced_band.py, one run): the replayed step / the priced step must lie inside
the script's band, and the pricing must cover the trace whole (every site priced, the same traced
steps as the replay)."""
import os
import shutil
import sys
import tempfile
import unittest

SOURCE = os.environ.get("CCBENCH_SOURCE", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "benchmarks", "replay"))
import priced_band  # noqa: E402

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")


class ReplayPricedBand(unittest.TestCase):
    def test_replayed_step_agrees_with_the_priced_sum(self):
        work = tempfile.mkdtemp(prefix="ccbench-replay-band-")
        try:
            trace = priced_band.make_trace(CCBENCH, work)
            lines = []
            ratio, replay_us, priced_us = priced_band.one_ratio(CCBENCH, trace, work, 5, lines.append)
            low, high = priced_band.BAND
            self.assertTrue(low <= ratio <= high,
                            f"replayed step {replay_us:.1f} us / priced {priced_us:.1f} us = {ratio:.3f}, outside "
                            f"[{low}, {high}]; launches: {'; '.join(lines)}")
        finally:
            shutil.rmtree(work)


if __name__ == "__main__":
    unittest.main()
