#!/usr/bin/env bash
# scripts/ci/regression.sh gates launches, not trials (issue 28 item 1), from a checkout whose path
# holds a space (it once exited 127: the default launcher was an unquoted string):
#  - bad NAME, LAUNCHES, BASELINE_LAUNCHES, ROLLING, --baseline-build, --trials N > 1 in the run
#    flags: exit 2 naming the variable or flag, before any launch (no OUT_DIR made);
#  - UPDATE_BASELINE=1 stores BASELINE_LAUNCHES separate launch files of one trial each (also when
#    the SWEEP config asks for trials: 3); a failed launch leaves the stored baseline as it was;
#  - a run makes LAUNCHES launch files, compares the folders, and exits with compare's code; after
#    a pass ROLLING keeps the newest N launch files, after a non-pass the store is untouched;
#  - a stored baseline file holding several trials of one launch is refused (exit 2, file named);
#  - --baseline-build alternates the two builds launch by launch (B C B C) and stores nothing.
# Tiny sweeps (8 B..1 KiB allreduce, 3 iterations): 11 launches, about 30 s on 2 busy cores.
# Usage: test_regression_sh.sh CCBENCH SCRIPTS_DIR
set -uo pipefail
ccbench=$(readlink -f "$1")
scripts=$(readlink -f "$2")
py=/usr/bin/python3
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found"; exit 77; }
T=$(mktemp -d /tmp/ccbench-ci-gate.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "regression-sh-test: FAILED: $*"; exit 1; }
checkout="$T/a checkout"
mkdir -p "$checkout/scripts/ci"
cp "$scripts/ci/regression.sh" "$checkout/scripts/ci/"
cp "$scripts/mpirun.sh" "$scripts/launches.sh" "$checkout/scripts/"
gate=$checkout/scripts/ci/regression.sh
# A sweep config asking for trials inside a launch: the gate's launches must still hold one each.
mkdir -p "$checkout/configs/sweeps"
echo "trials: 3" >"$checkout/configs/sweeps/three-trials.yaml"
store="$T/base lines"
out="$T/out dir"
export CCBENCH=$ccbench BASELINES_DIR=$store OUT_DIR=$out SWEEP="" NP=2
export OMPI_MCA_btl_vader_single_copy_mechanism=none
tiny=(--ops allreduce -b 8 -e 1K -n 3 -w 0 --in-place no)
# Every script call is bounded: a hang fails the test instead of stalling CI.
gate_run() { timeout -k 5 120 "$gate" "$@"; }
# A checksum of every file under a folder (names and contents).
tree_sum() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum; }
# The sorted list of launch files of a folder, one a line.
launches_in() { find "$1" -maxdepth 1 -name 'launch-*.json' -printf '%f\n' | sort; }

# 1. Usage errors: exit 2, one line naming what is wrong, and nothing launched.
usage_case() {
  local want=$1 msg
  shift
  msg=$(OUT_DIR="$T/usage out" timeout -k 5 20 "$@" 2>&1)
  local rc=$?
  [[ $rc == 2 ]] || fail "$* : exit $rc, want 2: $msg"
  [[ $(wc -l <<<"$msg") == 1 ]] || fail "$* : more than one line: $msg"
  [[ $msg == *"$want"* ]] || fail "$* : message does not name '$want': $msg"
  [[ ! -e "$T/usage out" ]] || fail "$* : ran something: $(ls "$T/usage out")"
}
usage_case "NAME must be a non-empty name" "$gate" "" -- "${tiny[@]}"
[[ $("$gate" "" 2>&1) == "regression.sh: NAME must be a non-empty name without '/' that does not start with '-', got ''" ]] ||
  fail "empty NAME message changed"
usage_case "LAUNCHES must be a whole number from 1 to 100" env LAUNCHES=0 "$gate" nightly
usage_case "BASELINE_LAUNCHES must be a whole number from 2 to 100" env BASELINE_LAUNCHES=1 "$gate" nightly
usage_case "LAUNCHES must be a whole number" env LAUNCHES="\$(touch $T/pwned)" "$gate" nightly
[[ ! -e $T/pwned ]] || fail "LAUNCHES ran a command substitution"
usage_case "ROLLING must be a whole number from 2 to 999" env ROLLING=1 "$gate" nightly
usage_case "--trials 5: trials inside one launch" "$gate" nightly -- "${tiny[@]}" --trials 5
usage_case "--trials 3: trials inside one launch" "$gate" nightly -- "${tiny[@]}" --trials=3
usage_case "--baseline-build $T/nothing: not an executable" "$gate" --baseline-build "$T/nothing" nightly
usage_case "no baseline 'nightly'" "$gate" nightly -- "${tiny[@]}"
usage_case "-J: the launches' files are the script's own" "$gate" nightly -- -J "$T/x.json"

# 2. UPDATE_BASELINE=1: BASELINE_LAUNCHES separate launches, one trial each (whatever SWEEP says), in
# the store.
SWEEP=three-trials UPDATE_BASELINE=1 BASELINE_LAUNCHES=2 gate_run nightly -- "${tiny[@]}" >"$T/log" 2>&1
rc=$?
[[ $rc == 0 ]] || fail "UPDATE_BASELINE=1: exit $rc: $(tail -5 "$T/log")"
[[ $(launches_in "$store/nightly" | wc -l) == 2 ]] || fail "want 2 baseline launch files: $(ls "$store/nightly")"
[[ $(find "$store/nightly" -type f | wc -l) == 2 ]] || fail "the store holds more than the launches: $(ls "$store/nightly")"
$py - "$store/nightly"/launch-*.json <<'EOF' || fail "baseline launches are not separate one-trial launches"
import json, sys
files = [json.load(open(p)) for p in sys.argv[1:]]
assert all({r["trial"] for r in f["results"]} == {0} for f in files), "a file holds several trials"
assert len({f["run"]["started_at"] for f in files}) == len(files), "the files share a launch"
EOF
# A failed launch (a flag run refuses, exit 2) leaves the stored baseline as it was.
before=$(tree_sum "$store")
UPDATE_BASELINE=1 BASELINE_LAUNCHES=2 gate_run nightly -- "${tiny[@]}" --dtype nosuchtype >"$T/log" 2>&1
rc=$?
[[ $rc == 2 ]] || fail "a failed launch: exit $rc, want run's 2: $(tail -5 "$T/log")"
[[ $(tree_sum "$store") == "$before" ]] || fail "a failed UPDATE_BASELINE launch changed the store"

# 3. A run: LAUNCHES launch files, compare on the folders, compare's exit code; the pass adds them
# to the rolling baseline, which keeps the newest 3. The pass must not depend on the machine's load:
# at 500% a busy machine once made both candidate launches of a 3-sample size 6x slower, so the
# threshold is a million times (a 0.02 us allreduce taking 20 ms), which no load reaches.
old_launches=$(launches_in "$store/nightly")
cp -r "$store/nightly" "$T/store-before"
ROLLING=3 LAUNCHES=2 THRESHOLD=1000000x gate_run nightly -- "${tiny[@]}" >"$T/log" 2>&1
rc=$?
run_dir=$(find "$out" -mindepth 1 -maxdepth 1 -type d -name 'nightly-*' | sort | tail -n 1)
[[ -n $run_dir ]] || fail "no run folder in $out: $(tail -5 "$T/log")"
[[ $(launches_in "$run_dir/candidate" | wc -l) == 2 ]] || fail "want 2 candidate launch files: $(ls -R "$run_dir")"
verdict=$(find "$out" -maxdepth 1 -name "${run_dir##*/}-verdict.json")
[[ -n $verdict ]] || fail "no verdict file: $(ls "$out")"
$py - "$verdict" "$store/nightly" "$run_dir/candidate" <<'EOF' || fail "the verdict is not on the two folders"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["inputs"] == {"baseline": [sys.argv[2]], "candidate": [sys.argv[3]]}, v["inputs"]
assert v["summary"]["trials"] == {"baseline": 2, "candidate": 2}, v["summary"]["trials"]
EOF
# The script's code is compare's on the folders (asked again of the copy of the store as it was).
timeout 60 "$ccbench" compare "$T/store-before" "$run_dir/candidate" --gate regression --threshold 1000000x \
  >/dev/null 2>&1
want=$?
[[ $rc == "$want" ]] || fail "exit $rc, compare on the folders says $want: $(tail -5 "$T/log")"
[[ $rc == 0 ]] || fail "an A/A run under a 1000000x threshold: exit $rc, want 0 (pass): $(tail -8 "$T/log")"
mapfile -t rolled < <(launches_in "$store/nightly")
[[ ${#rolled[@]} == 3 ]] || fail "ROLLING=3 kept ${#rolled[@]} launch files: ${rolled[*]}"
[[ ${rolled[0]} == "$(tail -n 1 <<<"$old_launches")" ]] || fail "ROLLING did not keep the newest old launch: ${rolled[*]}"
for f in $(launches_in "$run_dir/candidate"); do
  cmp -s "$run_dir/candidate/$f" "$store/nightly/${rolled[1]}" || cmp -s "$run_dir/candidate/$f" "$store/nightly/${rolled[2]}" ||
    fail "candidate $f is not in the rolling baseline"
done
grep -q "dropped the 1 oldest (keeps 3)" "$T/log" || fail "no rolling line: $(tail -3 "$T/log")"

# 4. A non-pass (the candidate measured another op: not comparable, compare's 3) is passed through
# and leaves the rolling baseline untouched.
before=$(tree_sum "$store")
ROLLING=3 LAUNCHES=1 gate_run nightly -- --ops allgather -b 8 -e 1K -n 3 -w 0 --in-place no >"$T/log" 2>&1
rc=$?
[[ $rc == 3 ]] || fail "another op: exit $rc, want compare's 3: $(tail -5 "$T/log")"
[[ $(tree_sum "$store") == "$before" ]] || fail "a run that did not pass changed the rolling baseline"
grep -q "exit 3 is not a pass; the rolling baseline .* is unchanged" "$T/log" || fail "no unchanged line"

# 5. A stored baseline of one launch with several trials would pass for that many launches: refused.
mkdir -p "$T/legacy"
timeout -k 5 60 mpirun -np 2 --allow-run-as-root --oversubscribe "$ccbench" run "${tiny[@]}" --trials 2 \
  --progress never -J "$T/legacy/multi.json" >"$T/log" 2>&1 || fail "legacy run: $(tail -3 "$T/log")"
BASELINES_DIR=$T/legacy usage_case "baseline $T/legacy/multi.json holds several trials of one launch" \
  "$gate" multi -- "${tiny[@]}"

# 6. --baseline-build: both builds now, alternating B C B C, compare on the two folders, no store.
# The last good build: the same binary behind a wrapper that notes each of its starts (one per rank).
good="$T/good build"
mkdir -p "$good"
printf '#!/bin/sh\necho "$*" >>"%s/good-starts"\nexec "%s" "$@"\n' "$T" "$ccbench" >"$good/ccbench"
chmod +x "$good/ccbench"
before=$(tree_sum "$store")
rm -rf "$out"
BASELINE_LAUNCHES=2 LAUNCHES=2 gate_run --baseline-build "$good/ccbench" pr -- "${tiny[@]}" >"$T/log" 2>&1
rc=$?
order=$(grep -oE '^regression.sh: (baseline build|candidate), launch' "$T/log" | sed 's/^regression.sh: //; s/, launch//' | paste -sd,)
[[ $order == "baseline build,candidate,baseline build,candidate" ]] || fail "launch order: '$order'"
run_dir=$(find "$out" -mindepth 1 -maxdepth 1 -type d -name 'pr-*')
[[ $(grep -c '^run ' "$T/good-starts") == 4 ]] || fail "the baseline build ran $(wc -l <"$T/good-starts") times, want 2 launches x 2 ranks"
$py - "$run_dir" <<'EOF' || fail "the alternated launches are not what was asked"
import glob, json, sys
run_dir = sys.argv[1]
launches = []
for side, label in (("baseline", "ci-pr baseline-build"), ("candidate", "ci-pr")):
    files = sorted(glob.glob(f"{run_dir}/{side}/launch-*.json"))
    assert len(files) == 2, (side, files)
    for p in files:
        f = json.load(open(p))
        assert f["run"]["label"] == label, (p, f["run"]["label"], label)
        assert {r["trial"] for r in f["results"]} == {0}, p
        launches.append((f["run"]["started_at"], side))
assert [s for _, s in sorted(launches)] == ["baseline", "candidate"] * 2, sorted(launches)
EOF
timeout 60 "$ccbench" compare "$run_dir/baseline" "$run_dir/candidate" --gate regression --threshold 5% >/dev/null 2>&1
want=$?
[[ $rc == "$want" ]] || fail "--baseline-build: exit $rc, compare on the folders says $want: $(tail -5 "$T/log")"
[[ $(tree_sum "$store") == "$before" ]] || fail "--baseline-build touched the store"
echo "regression-sh-test: PASS"
