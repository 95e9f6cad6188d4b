#!/usr/bin/env bash
# The long fuzz run (CI runs a bounded one: ctest -R fuzz.loaders). Uses the sanitizer build when
# there is one (scripts/ci/sanitize.sh makes build-asan/), else the release build, and prints
# executions per loader, executions per second and the findings (inputs saved under OUT).
#   benchmarks/fuzz/run_fuzz.sh [SECONDS] [OUT]      (default 600 s, fuzz-findings/)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seconds=${1:-600}
out=${2:-$root/fuzz-findings}
[[ $seconds =~ ^[0-9]{1,6}$ ]] || { echo "run_fuzz.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }
seed=${SEED:-$RANDOM}
[[ $seed =~ ^[0-9]{1,9}$ ]] || { echo "run_fuzz.sh: SEED must be a whole number, got '$seed'" >&2; exit 2; }
fuzz=$root/build-asan/ccbench_fuzz
[[ -x $fuzz ]] || fuzz=$root/build/ccbench_fuzz
[[ -x $fuzz ]] || { echo "run_fuzz.sh: no ccbench_fuzz (build the ccbench_fuzz target)" >&2; exit 2; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}
echo "run_fuzz.sh: $fuzz for $seconds s, seed $seed"
start=$(date +%s.%N)
status=0
"$fuzz" --seconds "$seconds" --seed "$seed" --findings "$out" || status=$?
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "wall %.1f s\n", b - a }'
exit "$status"
