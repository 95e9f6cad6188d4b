#!/usr/bin/env bash
# Launch-to-launch spread: what narrows it, and how ccbench compares with OSU and IMB at equal wall
# time (issue 14 item 4). Each setting runs K separate launches (mpirun -np 2) of allreduce float at
# 16 B, 64 KiB, 1 MiB and 16 MiB and reports, per size, the coefficient of variation of the launch
# medians (sd / mean over launches) and the mean wall time of a launch. A launch's own CI (ccbench's
# ±%) is printed beside it: the gap between the two is what one launch cannot see.
#
#   benchmarks/launch_spread/launch_spread.sh [build-dir]
#
# Settings (ccbench): unpinned (--bind-to none), pinned (--bind-to core), pinned + long warm-up
# (-w 200), pinned + transparent huge pages for the buffers (GLIBC_TUNABLES=glibc.malloc.hugetlb=1:
# malloc madvises THP). Buffer placement across NUMA nodes (first touch, numactl --localalloc vs
# --interleave) is measured only where there are two NUMA nodes and numactl.
# OSU (osu_allreduce) and IMB (IMB-MPI1 Allreduce) run unpinned and pinned with their iteration
# counts scaled so that a launch takes about as long as ccbench's; they are not vendored: build
# them beside the repository and point OSU_ALLREDUCE / IMB_MPI1 at the binaries (a setting is
# skipped with a note when its binary is missing). How they were built for docs/method.md:
#   OSU 5.3 (github.com/forresti/osu-micro-benchmarks, a mirror of the OSU tarball):
#     ./configure CC=mpicc CXX=mpicxx && make -C mpi/collective osu_allreduce
#   IMB (github.com/intel/mpi-benchmarks; its Makefile builds with -O0, as shipped):
#     make CC=mpicc CXX=mpicxx CPPFLAGS=-DOMPI_SKIP_MPICXX=1 IMB-MPI1
#
# Environment: K launches per setting (default 5); OSU_ALLREDUCE, IMB_MPI1 (binaries);
# MAX_TIME_PER_SIZE for ccbench (default 0.5 s). Hold /tmp/ccbench-heavy.lock around it on a shared
# machine, and read the result knowing that other work on the host widens every spread.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
K=${K:-5}
digits='^[0-9]+$'
[[ $K =~ $digits ]] && ((10#$K >= 2)) || {
  echo "launch_spread.sh: K must be a whole number >= 2 (got '$K')" >&2
  exit 2
}
MAX_TIME_PER_SIZE=${MAX_TIME_PER_SIZE:-0.5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sizes="16 65536 1048576 16777216"

now() { date +%s.%N; }

# One launch of a tool -> "size median ci_pct" lines in the last argument.
ccbench_launch() {
  local bind=$1 warm=$2 envs=$3 out=$4
  # shellcheck disable=SC2086  # envs is a list of NAME=VALUE words
  env $envs mpirun -np 2 --oversubscribe --bind-to "$bind" "$build/ccbench" run --ops allreduce -b 16 -e 16M -f 16 \
    -w "$warm" --in-place no -c 0 --max-time-per-size "$MAX_TIME_PER_SIZE" --progress never -J "$tmp/r.json" \
    >/dev/null
  /usr/bin/python3 - "$tmp/r.json" >"$out" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    med = r["time_us"]["median"]; lo, hi = r["time_us"]["ci95"] or (med, med)
    print(r["bytes"], med, 100 * max(med - lo, hi - med) / med)
PY
}

osu_launch() {
  local bind=$1 iters=$2 out=$3
  mpirun -np 2 --oversubscribe --bind-to "$bind" "$OSU_ALLREDUCE" -m 16:16777216 -i "$iters" -x "$((iters / 10 + 1))" \
    >"$tmp/osu.txt"
  awk -v want="$sizes" 'BEGIN{n=split(want,w," "); for(i=1;i<=n;i++) keep[w[i]]=1}
    $1 ~ /^[0-9]+$/ && ($1 in keep) {print $1, $2, "nan"}' "$tmp/osu.txt" >"$out"
}

imb_launch() {
  local bind=$1 iters=$2 out=$3
  mpirun -np 2 --oversubscribe --bind-to "$bind" "$IMB_MPI1" Allreduce -npmin 2 -msglog 4:24 -iter "$iters" \
    -iter_policy off -time 1000 >"$tmp/imb.txt"
  # Columns: #bytes #repetitions t_min t_max t_avg: use t_avg, IMB's headline.
  awk -v want="$sizes" 'BEGIN{n=split(want,w," "); for(i=1;i<=n;i++) keep[w[i]]=1}
    $1 ~ /^[0-9]+$/ && NF >= 5 && ($1 in keep) {print $1, $5, "nan"}' "$tmp/imb.txt" >"$out"
}

# K launches of a setting; prints one table row per size.
run_setting() {
  local name=$1 fn=$2
  shift 2
  local files=() t0 t1 wall
  t0=$(now)
  local failed=0
  for ((i = 0; i < K; i++)); do
    if ! "$fn" "$@" "$tmp/$name.$i" 2>>"$tmp/errors.log"; then
      failed=$((failed + 1))
    fi
    files+=("$tmp/$name.$i")
  done
  ((failed > 0)) && name+=" ($failed of $K launches failed: $(tail -1 "$tmp/errors.log"))"
  t1=$(now)
  wall=$(/usr/bin/python3 -c "print(f'{($t1 - $t0) / $K:.1f}')")
  /usr/bin/python3 - "$name" "$wall" "${files[@]}" <<'PY'
import statistics, sys
name, wall, files = sys.argv[1], sys.argv[2], sys.argv[3:]
by_size = {}
for f in files:
    try:
        for line in open(f):
            b, med, ci = line.split()
            by_size.setdefault(int(b), []).append((float(med), float(ci)))
    except FileNotFoundError:
        pass
cells = []
for b in (16, 65536, 1048576, 16777216):
    v = by_size.get(b, [])
    if len(v) < 2:
        cells.append("n/a")
        continue
    meds = [m for m, _ in v]
    cv = 100 * statistics.stdev(meds) / statistics.mean(meds)
    ci = statistics.mean(c for _, c in v)
    cells.append(f"{cv:.1f}%" + ("" if ci != ci else f" (±{ci:.1f}%)"))
print(f"| {name} | {wall} | " + " | ".join(cells) + " |")
PY
}

# Wall seconds of one launch of a command (for scaling OSU/IMB to ccbench's time).
wall_of() {
  local t0 t1
  t0=$(now)
  "$@" "$tmp/probe" 2>/dev/null || true
  t1=$(now)
  /usr/bin/python3 -c "print($t1 - $t0)"
}

echo "launch_spread: K=$K launches per setting, 2 ranks, allreduce float; CV of launch medians (mean own ±CI)"
echo "host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
echo
echo "| setting | s/launch | 16 B | 64 KiB | 1 MiB | 16 MiB |"
echo "|---|---|---|---|---|---|"
run_setting "ccbench unpinned" ccbench_launch none 5 ""
run_setting "ccbench pinned" ccbench_launch core 5 ""
run_setting "ccbench pinned, warm-up 200" ccbench_launch core 200 ""
run_setting "ccbench pinned, THP buffers" ccbench_launch core 5 "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"
if command -v numactl >/dev/null && [[ $(ls -d /sys/devices/system/node/node[0-9]* | wc -l) -ge 2 ]]; then
  run_setting "ccbench pinned, numactl --localalloc" ccbench_launch core 5 ""
else
  echo "| buffer placement (first touch / NUMA) | - | not measured: $(ls -d /sys/devices/system/node/node[0-9]* | wc -l) NUMA node(s)$(command -v numactl >/dev/null || echo ', no numactl') | | | |"
fi
cc_wall=$(wall_of ccbench_launch core 5 "")
for tool in osu imb; do
  bin_var=$([[ $tool == osu ]] && echo OSU_ALLREDUCE || echo IMB_MPI1)
  bin=${!bin_var:-}
  if [[ -z $bin || ! -x $bin ]]; then
    echo "| $tool | - | not run: set $bin_var to its binary | | | |"
    continue
  fi
  probe_wall=$(wall_of "${tool}_launch" core 100)
  iters=$(/usr/bin/python3 -c "print(max(10, min(100000, int(100 * $cc_wall / max($probe_wall, 0.01)))))")
  run_setting "$tool unpinned (-i $iters)" "${tool}_launch" none "$iters"
  run_setting "$tool pinned (-i $iters)" "${tool}_launch" core "$iters"
done
