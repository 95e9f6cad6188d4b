// Everything `ccbench run` was asked to do, after flags and --config are merged. Passed explicitly
// to the engine; the result file records it under "config".
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer_registration.hpp"
#include "core/groups.hpp"
#include "core/path_proof.hpp"
#include "core/sampling.hpp"
#include "core/sendrecv_pattern.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"

namespace ccbench {

enum class InPlaceMode { no, yes, both };

// How a sample is formed (docs/method.md).
enum class TimingMethod {
  ccbench,     // barrier, then k ops back to back; sample = batch time / k, max over ranks
  nccl_tests,  // k = iters ops back to back; sample = batch time / k, mean over ranks
};

struct RunConfig {
  std::string backend = "mpi";
  std::vector<Op> ops = {Op::allreduce, Op::allgather, Op::alltoall};
  SizeRange sizes;
  DType dtype = DType::float32;
  RedOp redop = RedOp::sum;
  int root = 0;
  int warmup = 5;
  std::optional<int> iters;  // nullopt: -n auto
  double target_ci = 0.01;
  double max_time_per_size_s = 1.0;
  int trials = 1;
  bool check = true;
  bool per_rank = false;  // --per-rank: each rank's median and last arrivals in every row
  // --groups SPEC: concurrent communicators running the same op (docs/method.md "Concurrent groups").
  groups::Spec groups;
  // The matrix ops' per-peer counts (docs/method.md, "alltoallv and MoE"): --matrix FILE.csv
  // (alltoallv) and --moe EXPERTS,TOP_K,TOKENS_PER_RANK,HIDDEN[,ROUTING] (moe_*, routed with `seed`).
  std::string matrix_path;
  std::string moe;
  // sendrecv's peers (docs/method.md, "sendrecv patterns"): --pattern, --peer-group (0: every rank
  // in one group, or none for ring) and --block-bytes (0: a message is one block).
  SendRecvPattern sendrecv_pattern = SendRecvPattern::ring;
  int peer_group = 0;
  std::uint64_t block_bytes = 0;
  InPlaceMode in_place = InPlaceMode::both;
  TimingMethod timing = TimingMethod::ccbench;
  int batch = 0;  // ops per sample; 0 = chosen from the warm-up time
  // --percentiles: levels in percent, ascending; each sample one op (batch 1) and -n auto takes at
  // least min_samples, enough for the widest level's interval (sweep/percentiles_flag).
  std::vector<double> percentiles;
  int min_samples = kMinSamplesPerSize;
  std::uint32_t seed = 1;
  double timeout_s = 300;
  std::string label;
  std::string instance_type;  // overrides the DMI product name
  std::string json_path;
  // Fabric metadata the user asserts (an emulated link, a known rate); discovered otherwise.
  std::string fabric_path;
  std::string fabric_generation;
  double link_gbps = 0;
  // --require-path / --require-rails (docs/path-proof.md): the path the bytes must be proven to take,
  // and the least EFA devices per node that must carry traffic (0 = no rule).
  std::optional<proof::RequiredPath> require_path;
  int require_rails = 0;
  // Backend options (NCCL).
  std::string nccl_path;
  int graph_launches = 0;
  BufferRegistration registration = BufferRegistration::none;  // -R
  std::string progress = "auto";                               // auto (when stderr is a terminal) | always | never
};

std::string_view name(InPlaceMode mode);
std::string_view name(TimingMethod method);
nlohmann::json to_json(const RunConfig& config);

// The sampling options `ccbench run` and `ccbench fabric` share, from their flag text: -n (a count
// or "auto"), --target-ci (0.01 or 1%), -c (0|1), and range checks of warm-up, trials, batch,
// timeout and --max-time-per-size already parsed into `config`. Throws UsageError naming the flag.
void apply_sampling_options(RunConfig& config, const std::string& iters, const std::string& target_ci,
                            const std::string& check);

}  // namespace ccbench
