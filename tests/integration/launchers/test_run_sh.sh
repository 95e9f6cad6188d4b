#!/usr/bin/env bash
# scripts/run.sh, the README's first command: run from the checkout, it names its result file as
# results/local/<UTC stamp>.json relative to the working folder (no machine's path in the lines it
# prints, the file's command or the report), and the file and report are where it says.
# A small sweep (flags after -- go to ccbench run). Usage: test_run_sh.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
cd "$src"
out=$(CCBENCH_SKIP_APT=1 BUILD_DIR="$build" scripts/run.sh -- --ops allreduce -e 1K --in-place no 2>&1)
rc=$?
fail() { echo "FAIL: $*"; echo "$out" | tail -15; exit 1; }
[[ $rc == 0 ]] || fail "scripts/run.sh exit $rc"
line=$(grep '^run: result file ' <<<"$out")
[[ $line =~ ^run:\ result\ file\ (results/local/[0-9]{8}T[0-9]{6}Z\.json)\ \(exit\ 0\)$ ]] ||
  fail "result line '$line' is not 'run: result file results/local/<stamp>.json (exit 0)'"
json=${BASH_REMATCH[1]}
trap 'rm -f "$src/$json" "$src/${json%.json}.jsonl" "$src/${json%.json}.html"' EXIT
[[ -f $src/$json ]] || fail "no file at $json"
grep -q "^run: report  ${json%.json}.html$" <<<"$out" || fail "no report line for ${json%.json}.html"
[[ -s $src/${json%.json}.html ]] || fail "no report at ${json%.json}.html"
/usr/bin/python3 - "$src/$json" "$src" <<'PY' || fail "result file"
import json, sys
d = json.load(open(sys.argv[1]))
cmd = " ".join(d["run"]["command"])
assert sys.argv[2] not in cmd.split(" -J ")[1], f"the command's -J names the machine's path: {cmd}"
assert d["run"]["status"] == "complete" and d["results"], d["run"]["status"]
print("ok:", cmd.split(" -J ")[1].split()[0], len(d["results"]), "rows")
PY
echo "PASS: $line"
