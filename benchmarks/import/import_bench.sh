#!/usr/bin/env bash
# Importing a large nccl-tests log (issue 15 item 13): time and peak memory of `ccbench import`
# against a plain read of the same file in the same run (`wc -l`, and `cat > /dev/null`), printed as
# ratios. Target: import time grows linearly with the log (the 10 MB and 100 MB ratios agree) and
# peak memory stays a small multiple of the output file.
#   benchmarks/import/import_bench.sh [SIZE_MB...]     (default: 10 100)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ccbench=${CCBENCH:-$root/build/ccbench}
[[ -x $ccbench ]] || { echo "import_bench.sh: no ccbench at $ccbench (build it, or set CCBENCH)" >&2; exit 2; }
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(10 100)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'; }
# import_s is wall time; import_cpu_s is user + system CPU (what a shared CI machine cannot inflate).
printf '%8s %8s %8s %9s %12s %10s %10s %10s %9s\n' size_mb wc_l_s cat_s import_s import_cpu_s cpu/wc_l rss_mib rss/input out_mib
for mb in "${sizes[@]}"; do
  [[ $mb =~ ^[0-9]{1,4}$ ]] || { echo "import_bench.sh: SIZE_MB must be a whole number, got '$mb'" >&2; exit 2; }
  log=$work/log-$mb.txt
  /usr/bin/python3 "$root/benchmarks/import/make_nccl_log.py" "$log" "$mb"
  cat "$log" >/dev/null  # page cache warm for every contender
  wc_s=$(seconds wc -l "$log")
  cat_s=$(seconds cat "$log")
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$ccbench" import nccl-tests "$log" --out "$work/out.json" 2>/dev/null
  read -r imp_s imp_u imp_sys rss_kb <"$work/time"
  in_b=$(stat -c %s "$log")
  out_b=$(stat -c %s "$work/out.json")
  awk -v mb="$mb" -v w="$wc_s" -v c="$cat_s" -v i="$imp_s" -v u="$imp_u" -v sy="$imp_sys" -v r="$rss_kb" \
    -v ib="$in_b" -v ob="$out_b" 'BEGIN {
    printf "%8d %8.3f %8.3f %9.2f %12.2f %10.1f %10.1f %10.2f %9.1f\n", mb, w, c, i, u + sy,
      (u + sy) / (w > 0.001 ? w : 0.001), r / 1024, r * 1024 / ib, ob / 1048576 }'
done
