#!/usr/bin/python3
"""Writes the result files of README's `ccbench compare` session (known answers, deterministic).

  tests/unit/compare/readme_session.py DIR
    DIR/p5en/trial-N.json, DIR/p6-b200/trial-N.json   6 launches a side, one trial each; the
        candidate is 1.18x faster at 64 MiB and above (same link: 3200 Gbps on both)
    DIR/nightly-baseline/trial-N.json, DIR/nightly-today/trial-N.json   5 launches a side; alltoall
        10% slower at 256 MiB and above
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_results as g  # noqa: E402

MIB = 1 << 20


def side(out, name, launches, seed0, **kw):
    for t in range(launches):
        g.write(Path(out) / name / f"trial-{t + 1}.json", g.make_file(trials=1, seed=seed0 + t, **kw))


def main():
    out = sys.argv[1]
    claim = dict(label="p6-b200 EFAv4", instance_type="p6-b200.48xlarge", generation="v4")
    side(out, "p5en", 6, 100, label="p5en EFAv3")
    side(out, "p6-b200", 6, 200, ratio=lambda op, b: 1.18 if b >= 64 * MIB else 1.0, **claim)
    side(out, "nightly-baseline", 5, 300, label="nightly")
    side(out, "nightly-today", 5, 400, label="nightly",
         ratio=lambda op, b: 1 / 1.10 if op == "alltoall" and b >= 256 * MIB else 1.0)


if __name__ == "__main__":
    main()
