#!/usr/bin/python3
"""The S3 engine behind a shaped link, as a measurement: the CI test e2e.storage.s3_link
(tests/e2e/storage/s3_link.py, docs/checkpoint.md "Behind a shaped link") run with --report, at a
fixed number of launch pairs and without its assertions: every trial's throughput as a fraction of
its link rate, and `ccbench compare`'s verdicts on configs/claims/emulated-s3-link-2x.yaml and the
same claim at 1.5x and 2.6x.

usage: benchmarks/checkpoint_s3_link.py [PAIRS [SHARD [LOW_MBIT]]]   (as root; defaults 5 16M 16)
Exit: compare's exit code on the 2x claim (0 confirmed, 1 refuted, 4 inconclusive); 1 when a step
fails; 77 without root, tc, ip netns or Swift.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pairs = sys.argv[1] if len(sys.argv) > 1 else "5"
shard = sys.argv[2] if len(sys.argv) > 2 else "16M"
low_mbit = sys.argv[3] if len(sys.argv) > 3 else "16"
test = os.path.join(ROOT, "tests", "e2e", "storage", "s3_link.py")
os.execv("/usr/bin/python3", ["/usr/bin/python3", test, "--report", "--pairs", pairs, "--max-pairs", pairs, "--shard",
                              shard, "--low-mbit", low_mbit])
