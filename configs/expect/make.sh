#!/usr/bin/env bash
# Rebuilds the shipped expectations (docs/model.md, "Shipped expectations"): model files that
# `ccbench model check` and `ccbench run --expect` judge rows against, one per instance profile.
#
#   configs/expect/make.sh [OUT_DIR]        # default: configs/expect (the files committed here)
#
# p5.48xlarge.json is `ccbench model fit results/published` (the published nccl-tests rows of
# p5.48xlarge, every node count; fit's default seed, so the same build writes the same file) with an
# "expectation" object naming the one profile it judges (a p5en run checked against it is refused
# as not covered, not judged by p5's numbers). p5en.48xlarge.json, p6-b200.48xlarge.json and
# p6-b300.48xlarge.json hold the same fitted curves and name their own profile: no run of theirs is
# in the published data, so every row is judged from the profile's spec (configs/instances/aws.yaml:
# its EFA bandwidth times the efficiency learned on p5, Model::predict's spec prior) and labelled
# "from spec, not validated". Replace one with a fit of your own runs (docs/model.md, "Your own
# expectation") as soon as you have them.
# Environment: CCBENCH (default build/ccbench). Exit: fit's code, 0 when all four are written.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ccbench=${CCBENCH:-$root/build/ccbench}
out=${1:-$root/configs/expect}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# From the checkout, so the model's "inputs" reads results/published whoever runs it.
cd "$root"
fitted=$(mktemp "${TMPDIR:-/tmp}/ccbench-expect.XXXXXX")
trap 'rm -f "$fitted"' EXIT
"$ccbench" model fit results/published -o "$fitted" >/dev/null
/usr/bin/python3 - "$fitted" "$out" <<'PY'
import json, sys
fitted, out = sys.argv[1], sys.argv[2]
model = json.load(open(fitted))
how = "configs/expect/make.sh: ccbench model fit results/published (the published p5.48xlarge nccl-tests rows)"
for profile, basis in (("p5.48xlarge", "measured"), ("p5en.48xlarge", "from spec, not validated"),
                       ("p6-b200.48xlarge", "from spec, not validated"),
                       ("p6-b300.48xlarge", "from spec, not validated")):
    m = dict(model)
    m["expectation"] = {
        "profile": profile,
        "basis": basis,
        "made_by": how,
        "note": ("the curves of the rows of this profile" if basis == "measured" else
                 "no measurement of this profile: p5.48xlarge's curves scaled by the EFA bandwidth of "
                 "configs/instances/aws.yaml (spec prior); replace with a fit of your own runs"),
    }
    with open(f"{out}/{profile}.json", "w") as f:
        json.dump(m, f, indent=1)
        f.write("\n")
PY
echo "configs/expect/make.sh: wrote $out/{p5,p5en,p6-b200,p6-b300}.48xlarge.json"
