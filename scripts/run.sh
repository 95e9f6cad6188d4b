#!/usr/bin/env bash
# The main job: installs what is missing, builds, runs the default quick local sweep on 2 ranks and
# prints the table and where the result file went.
#   scripts/run.sh                      # configs/sweeps/quick.yaml
#   SWEEP=full scripts/run.sh           # configs/sweeps/full.yaml
#   NP=4 scripts/run.sh -- --trials 3   # extra arguments after -- go to `ccbench run`
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"

[[ "${1:-}" == "--" ]] && shift
sweep=${SWEEP:-quick}
np=${NP:-2}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out_dir="$root/results/local"
mkdir -p "$out_dir"
json="$out_dir/$stamp.json"
# Named from the working folder when it is inside it (results/local/<stamp>.json from the checkout),
# so the lines below, the result file's command and the report's header carry no machine's path.
case "$json" in "$PWD"/*) json=${json#"$PWD"/} ;; esac
config="$root/configs/sweeps/$sweep.yaml"
case "$config" in "$PWD"/*) config=${config#"$PWD"/} ;; esac

# The progress lines (one per size, on the ranks' stderr) only on a terminal, and there as one line
# kept below the table, rewritten in place: a log or a pipe gets the table alone.
one_progress_line() {
  local line shown="" cols
  cols=$(tput cols 2>/dev/null) || cols=80
  ((cols >= 20)) || cols=80
  while IFS= read -r line; do
    if [[ $line =~ ^\[\ *[0-9]+/[0-9]+\]\  ]]; then
      shown=${line:0:cols-1}
      printf '\r\033[K%s' "$shown"
    else
      [[ -n $shown ]] && printf '\r\033[K'
      printf '%s\n' "$line"
      [[ -n $shown ]] && printf '%s' "$shown"
    fi
  done
  [[ -z $shown ]] || printf '\r\033[K'
}

mpi_root=()
[[ $(id -u) -eq 0 ]] && mpi_root=(--allow-run-as-root)
echo "run: mpirun -np $np ccbench run --config $config -J $json $*"
launch=("$root/scripts/mpirun.sh" -np "$np" --oversubscribe "${mpi_root[@]}" "$build_dir/ccbench" run
  --config "$config" --label "local-$sweep" -J "$json")
set +e
if [[ -t 1 && -t 2 ]]; then
  "${launch[@]}" --progress always "$@" 2>&1 | one_progress_line
  rc=${PIPESTATUS[0]}
else
  "${launch[@]}" --progress never "$@"
  rc=$?
fi
set -e
if [[ -f "$json" ]] && "$build_dir/ccbench" report --help >/dev/null 2>&1; then
  "$build_dir/ccbench" report "$json" --format html --out "${json%.json}.html" >/dev/null &&
    echo "run: report  ${json%.json}.html"
fi
echo "run: result file $json (exit $rc)"
exit $rc
