#include "cli/flag_sets/run.hpp"

#include "core/sendrecv_pattern.hpp"
#include "core/types.hpp"
#include "sweep/percentiles_flag.hpp"
#include "sweep/run_flags.hpp"

namespace ccbench::cli {

RunFlags::RunFlags() : FlagSet("ccbench run: collective sweep (launch with mpirun or srun)", "ccbench run") {
  add_backend_flag(*this, config.backend, "mpi | nccl")->default_val(config.backend);
  add_option("--ops", ops, "comma list: " + op_names(all_collective_ops(), ","))
      ->default_str("allreduce,allgather,alltoall");
  add_shared_flags(*this, config, shared, "collective");
  add_option("-d,--dtype", dtype, dtype_names(" "))->default_str("float");
  add_option("-o,--redop", redop, redop_names(" "))->default_str("sum");
  add_option("-r,--root", config.root, "root rank of broadcast, gather, scatter and reduce")->default_val(0);
  add_option("--in-place", in_place, "yes | no | both")->default_str("both");
  add_option("--timing", timing, "ccbench | nccl-tests (back-to-back, mean over ranks)")->default_str("ccbench");
  add_nccl_path_flag(*this, config.nccl_path, "nccl: nvlink | efa | all");
  add_option("--groups", groups_spec,
             "concurrent communicators: mod:N (same rank mod N together), div:N (blocks of N), none")
      ->default_str("none");
  add_percentiles_flag(*this, percentiles);
  add_flag("--per-rank", config.per_rank, "each rank's median op time and last arrivals in every row");
  add_option("-G,--cudagraph", config.graph_launches, "nccl: ops captured per CUDA graph launch")->default_val(0);
  add_option("-R,--register", registration, "nccl: 0 none, 1 ncclCommRegister, 2 symmetric windows (NCCL 2.27+)")
      ->default_str("0");
  add_option("--fabric-path", config.fabric_path, "record the fabric path (shm, tcp, efa, ...)");
  add_option("--fabric-generation", config.fabric_generation, "record the fabric generation (v3, v4, ...)");
  add_option("--link-gbps", link_gbps, "record the per-node link rate in Gbit/s");
  add_option("--config", config_path, "YAML file with the same keys (flags win)");
  add_option("--matrix", config.matrix_path, "alltoallv's N x N CSV of bytes, row = sender (sizes then unused)");
  add_option("--moe", config.moe,
             "moe_dispatch, moe_combine, moe_pair from a seeded router: "
             "EXPERTS,TOP_K,TOKENS_PER_RANK,HIDDEN[,uniform|zipf:S|hot:E:FRACTION]");
  add_option("--pattern", sendrecv_pattern, "sendrecv's peers: " + sendrecv_pattern_names(" | "))->default_str("ring");
  add_option("--peer-group", config.peer_group, "sendrecv --pattern's group of consecutive ranks (default: all)");
  add_option("--block-bytes", block_bytes, "sendrecv: each message posted as blocks of this size");
  add_option("--expect", expect_model,
             "judge every row against this model's band as it is measured (configs/expect/PROFILE.json)");
  add_option("--expect-band", expect_band, "--expect's band: 99 (default) or 90 (percent)");
  add_option("--stop-below", stop_below, "with --expect: stop after this many rows below the band (exit 7)")
      ->check(CLI::Range(0, 1000000));
}

std::unique_ptr<CLI::App> run_flags() { return std::make_unique<RunFlags>(); }

}  // namespace ccbench::cli
