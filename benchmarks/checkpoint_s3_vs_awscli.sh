#!/bin/bash
# The same bytes to the same S3 server: `aws s3 cp` (Debian's AWS CLI, the reference client) against
# `ccbench checkpoint --target s3://` with the CLI's own multipart settings (8 MiB parts, 10 in
# flight), one rank, interleaved (which goes first alternates), ROUNDS rounds; prints each round and
# the median ratio ccbench / aws of throughput. Two ccbench figures: its time to durable (first
# byte to the HeadObject-confirmed object plus the manifest) and its process's wall time, which
# like aws's includes start-up (Python's for aws; MPI's for ccbench).
#   eval "$(scripts/emulate/s3.sh up --bucket bench)"; benchmarks/checkpoint_s3_vs_awscli.sh [MIB] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CCBENCH=${CCBENCH:-$root/build/ccbench}
mib=${1:-256} rounds=${2:-5}
bucket=${CCB_S3_BUCKET:-ccbench}
: "${AWS_ENDPOINT_URL:?eval the export lines of scripts/emulate/s3.sh up first}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d /tmp/ccb-s3-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
head -c $((mib << 20)) /dev/urandom >"$work/data.bin"
now() { date +%s.%N; }
aws_cp() {
  local t0 t1
  t0=$(now)
  AWS_CONFIG_FILE=/dev/null /usr/bin/aws --endpoint-url "$AWS_ENDPOINT_URL" s3 cp --only-show-errors \
    "$work/data.bin" "s3://$bucket/bench/aws-$1.bin"
  t1=$(now)
  echo "$t0 $t1" | awk -v b=$((mib << 20)) '{printf "%.4f", b / ($2 - $1) / 1e9}'
}
ccb() {
  local t0 t1 durable
  t0=$(now)
  mpirun --allow-run-as-root -np 1 "$CCBENCH" checkpoint --target "s3://$bucket/bench/ccb-$1" --shard-bytes "${mib}M" \
    --phases write --part-size 8M --concurrency 10 --transfer-size 8M -J "$work/ccb-$1.json" >/dev/null
  t1=$(now)
  durable=$(/usr/bin/python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
print([r for r in d['results'] if r['op']=='checkpoint_write'][0]['checkpoint']['time_to_durable_s'])" "$work/ccb-$1.json")
  echo "$t0 $t1 $durable" | awk -v b=$((mib << 20)) '{printf "%.4f %.4f", b / $3 / 1e9, b / ($2 - $1) / 1e9}'
}
printf '# %d MiB, %d rounds, %s\n# round  aws_GBps  ccbench_durable_GBps  ccbench_wall_GBps  ratio_durable  ratio_wall\n' \
  "$mib" "$rounds" "$AWS_ENDPOINT_URL"
ratios=() walls=()
for r in $(seq "$rounds"); do
  if ((r % 2)); then a=$(aws_cp "$r"); c=$(ccb "$r"); else c=$(ccb "$r"); a=$(aws_cp "$r"); fi
  read -r cd cw <<<"$c"
  rd=$(awk -v x="$cd" -v y="$a" 'BEGIN{printf "%.3f", x / y}')
  rw=$(awk -v x="$cw" -v y="$a" 'BEGIN{printf "%.3f", x / y}')
  ratios+=("$rd") walls+=("$rw")
  printf '%7d  %8s  %20s  %17s  %13s  %10s\n' "$r" "$a" "$cd" "$cw" "$rd" "$rw"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
echo "# median ccbench/aws: $(median "${ratios[@]}") (time to durable), $(median "${walls[@]}") (wall, both with start-up)"
