#!/usr/bin/env bash
# ccbench fabric's pingpong against Debian's fi_pingpong (libfabric-bin), same provider, sizes and
# iterations, run interleaved (REPEATS rounds) so machine noise hits both alike. Prints latency
# ratios (target: ccbench within 1.10 of fi_pingpong at every size) and bandwidth ratios against
# fi_pingpong's MB/sec, the bandwidth reference the provider ships here (Debian packages no
# fabtests). ccbench's streaming fabric_bw is printed beside it for information.
#
#   benchmarks/fabric_vs_fi_pingpong.sh [build/ccbench]     (PROVIDERS="shm tcp" REPEATS=3 SIZES=...)
set -euo pipefail

CCBENCH=${1:-build/ccbench}
PROVIDERS=${PROVIDERS:-"shm tcp"}
SIZES=${SIZES:-"8 4096 65536 1048576"}
REPEATS=${REPEATS:-3}
PY=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Ranks pinned to cores, as latency benchmarks are run: unpinned busy-polling ranks on 2 cores
# sometimes share one and double the 8 B latency.
MPIRUN=(mpirun --oversubscribe --allow-run-as-root --bind-to core -np 2)
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (apt-get install libfabric-bin)" >&2; exit 2; }
[[ -x $CCBENCH ]] || { echo "$CCBENCH: not built" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
port=47600

iters_for() {  # round trips per measurement, the same for both tools
  if (($1 <= 4096)); then echo 20000; elif (($1 <= 65536)); then echo 4000; else echo 400; fi
}

# fi_pingpong: server and client on this host; prints "usec_per_xfer MB_per_sec" of the client.
fi_pp() {
  local prov=$1 size=$2 iters=$3
  port=$((port + 2))
  fi_pingpong -p "$prov" -e rdm -m tagged -I "$iters" -S "$size" -B "$port" >"$WORK/srv" 2>&1 &
  local srv=$!
  sleep 0.3
  fi_pingpong -p "$prov" -e rdm -m tagged -I "$iters" -S "$size" -P "$port" 127.0.0.1 >"$WORK/cli" 2>&1 || true
  wait "$srv" || true
  # bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
  awk '$1 != "bytes" && NF == 8 { print $7, $6 }' "$WORK/cli" | tail -1
}

# ccbench fabric pingpong: batch x samples = the same round trips; prints "mean_us median_us MB_per_sec".
cc_pp() {
  local prov=$1 size=$2 iters=$3
  local batch=$((iters / 20))
  "${MPIRUN[@]}" "$CCBENCH" fabric -p "$prov" --ops pingpong -b "$size" -e "$size" -n 20 --batch "$batch" -w 1 \
    -c 1 -J "$WORK/pp.json" --progress never >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; return 1; }
  $PY -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; t=r["time_us"]
print(t["mean"], t["median"], r["algbw_gbps"]*1000)' "$WORK/pp.json"
}

cc_bw() {  # streaming bandwidth (window 64), MB/s
  local prov=$1 size=$2
  "${MPIRUN[@]}" "$CCBENCH" fabric -p "$prov" --ops bw -b "$size" -e "$size" --max-time-per-size 0.5 -w 2 \
    -J "$WORK/bw.json" --progress never >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; return 1; }
  $PY -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["algbw_gbps"]*1000)' "$WORK/bw.json"
}

med() { $PY -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

printf "# fi_pingpong -e rdm -m tagged vs ccbench fabric --ops pingpong (median of %d interleaved rounds)\n" "$REPEATS"
printf "# %-5s %8s %6s | %10s %10s %10s | %8s %8s | %10s %10s %7s | %10s\n" provider bytes iters fi_us cc_mean_us \
  cc_med_us ratio_mn ratio_md fi_MB/s cc_MB/s bw_rat cc_bw_MB/s
worst=0
for prov in $PROVIDERS; do
  for size in $SIZES; do
    iters=$(iters_for "$size")
    fi_us=() fi_mb=() cc_mean=() cc_med=() cc_mb=()
    for ((r = 0; r < REPEATS; r++)); do
      read -r a b < <(fi_pp "$prov" "$size" "$iters")
      fi_us+=("$a") fi_mb+=("$b")
      read -r a b c < <(cc_pp "$prov" "$size" "$iters")
      cc_mean+=("$a") cc_med+=("$b") cc_mb+=("$c")
    done
    bw=$(cc_bw "$prov" "$size")
    F=$(med "${fi_us[@]}") FM=$(med "${fi_mb[@]}") CM=$(med "${cc_mean[@]}") CD=$(med "${cc_med[@]}")
    CB=$(med "${cc_mb[@]}")
    read -r rmean rmed rbw < <($PY -c "import sys; f,cm,cd,fm,cb=map(float,sys.argv[1:]); print(f'{cm/f:.3f} {cd/f:.3f} {cb/fm:.3f}')" \
      "$F" "$CM" "$CD" "$FM" "$CB")
    printf "  %-5s %8s %6s | %10.3f %10.3f %10.3f | %8s %8s | %10.1f %10.1f %7s | %10.1f\n" "$prov" "$size" "$iters" \
      "$F" "$CM" "$CD" "$rmean" "$rmed" "$FM" "$CB" "$rbw" "$bw"
    worst=$($PY -c "print(max($worst, $rmed))")
  done
done
echo "# ratio_mn/ratio_md: ccbench mean/median half round trip over fi_pingpong's usec/xfer (lower is better;"
echo "#   target <= 1.10). bw_rat: ccbench pingpong MB/s over fi_pingpong MB/sec (target >= 0.91)."
echo "# cc_bw_MB/s: ccbench fabric_bw (window 64, streaming) for reference; fi_pingpong has no streaming test."
echo "# worst median latency ratio: $worst"
