#!/usr/bin/env bash
# The sanitizer job of CI: builds the analysis code, its unit tests, the loader tests and the fuzz
# driver with ASan + UBSan (float-cast-overflow included; every report fatal) and runs them, then a
# bounded fuzz run over every loader. Called by scripts/test.sh; runs alone too:
#   scripts/ci/sanitize.sh                 # build-asan/, 24000 fuzz executions
#   FUZZ_RUNS=200000 scripts/ci/sanitize.sh
# Exit: ctest's status (0 when everything passed); 3 when a selected test's program is not built.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-asan}
fuzz_runs=${FUZZ_RUNS:-24000}
[[ $fuzz_runs =~ ^[0-9]{1,9}$ ]] || { echo "sanitize.sh: FUZZ_RUNS must be a whole number, got '$fuzz_runs'" >&2; exit 2; }
jobs=${JOBS:-$(nproc)}
[[ $jobs =~ ^[0-9]{1,4}$ ]] || { echo "sanitize.sh: JOBS must be a whole number, got '$jobs'" >&2; exit 2; }
launcher=()
if command -v ccache >/dev/null; then
  # Relative paths and no working directory in the hash (this build has -g): another clone hits.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
start=$(date +%s)
cmake -S "$root" -B "$build" --preset sanitize -DCCBENCH_FUZZ_RUNS="$fuzz_runs" "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$jobs" --target ccbench_core_tests ccbench_compare_tests ccbench_import_tests \
  ccbench_report_tests ccbench_harden_tests ccbench_fuzz ccbench_stats_probe ccbench_core_stats_probe \
  ccbench_core_percentiles_probe ccbench_moderated_probe
built=$(date +%s)
# The tests that drive an executable (ccbench, mpirun, the level table's tool) run in the main job, not here.
exclude='^(compare\.(cli|sequential_vs_scipy|step_cli|percentile|percentile_commands)|harden\.(cli|run)|report\.(cli_errors|csv_roundtrip|promtool|html_chromium|gbench_format))$'
# A test whose program lies in this build but was not built above would fail as "no such file" at
# the end of a 40-minute CI run: name it now, with what to do (exit 3).
ctest --test-dir "$build" --show-only=json-v1 | /usr/bin/python3 "$root/scripts/ci/unbuilt_tests.py" "$build" "$exclude"
# Open MPI's own allocations are not ours to report; leaks in our code still are (LSan suppressions
# would hide them too broadly, so leak checking stays on and MPI is never initialised by these tests).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}
status=0
ctest --test-dir "$build" --output-on-failure --timeout 600 -E "$exclude" || status=$?
echo "sanitize.sh: build $((built - start)) s, tests $(($(date +%s) - built)) s, status $status"
exit "$status"
