#!/usr/bin/env bash
# Rebuild results/published/*.json from the published tables under sources/ (README.md names each
# source). Usage: results/published/import.sh [path/to/ccbench]   (default: build/ccbench)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ccbench="$(realpath "${1:-$here/../../build/ccbench}")"
cd "$here"  # relative paths: the result files record the command line
p5=(--instance-type p5.48xlarge --efa-generation v2 --link-gbps 3200)

# 1. aws-samples/awsome-distributed-training: 2 x p5.48xlarge, all_reduce_perf 8 B - 16 GiB.
"$ccbench" import nccl-tests "sources/p5-awsome-2n/all_reduce_perf_2x_p5.48xlarge.txt" \
  --op allreduce --ranks 16 --nodes 2 "${p5[@]}" --label "published: awsome-distributed-training README, 2 x p5" \
  --out "p5-awsome-2n-allreduce.json"

# 2. crazyguitar/aws-gpu-communication-benchmark: p5.48xlarge on HyperPod, 2-32 nodes.
python3 "tools/csv_to_nccl_tests.py" "sources/p5-hyperpod-crazyguitar/nccl_all_reduce.csv" all_reduce \
  "sources/p5-hyperpod-crazyguitar/tables" >/dev/null
python3 "tools/csv_to_nccl_tests.py" "sources/p5-hyperpod-crazyguitar/nccl_alltoall.csv" alltoall \
  "sources/p5-hyperpod-crazyguitar/tables" >/dev/null
for n in 2 4 8 16 32; do
  r=$((n * 8))
  for op in all_reduce alltoall; do
    short="${op/_/}"
    "$ccbench" import nccl-tests "sources/p5-hyperpod-crazyguitar/tables/${op}_perf_${n}x_p5.48xlarge_${r}ranks.txt" \
      --op "$short" --ranks "$r" --nodes "$n" "${p5[@]}" \
      --label "published: aws-gpu-communication-benchmark, ${n} x p5" \
      --out "p5-hyperpod-${n}n-${short}.json"
  done
done

# 3. perplexityai/pplx-garden README: MoE decode dispatch/combine, pplx kernels on EFA and ConnectX-7.
python3 "tools/moe_table_to_results.py" pplx-garden "sources/pplx-garden/decode_dispatch_combine.csv" moe >/dev/null
# 4. deepseek-ai/DeepEP README: low-latency kernels on H800 with ConnectX-7 InfiniBand.
python3 "tools/moe_table_to_results.py" deepep "sources/deepep/low_latency_h800_cx7.csv" moe >/dev/null
# 5. uccl-project/uccl ep/README.md: UCCL-EP low-latency kernels on p5en (EFA).
python3 "tools/moe_table_to_results.py" uccl-ep "sources/uccl-ep/low_latency_p5en.csv" moe >/dev/null
