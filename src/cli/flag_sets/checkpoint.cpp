#include "cli/flag_sets/checkpoint.hpp"

#include "cli/parse_flags.hpp"

namespace ccbench::cli {

CheckpointFlags::CheckpointFlags()
    : FlagSet(
          "ccbench checkpoint: time to a durable checkpoint on a POSIX or s3:// target (launch with mpirun or srun)",
          "ccbench checkpoint") {
  add_shared_flags(*this, config, shared, "phase");
  remove_flags(*this,
               {"--min-bytes", "--max-bytes", "--step-factor", "--step-bytes", "--warmup", "--iters", "--target-ci",
                "--max-time-per-size", "--check", "--batch", "--progress", "--require-path", "--require-rails"});
  get_option("--trials")->description("checkpoints to write (each a new step directory)");
  get_option("--seed")->description("seed of the shards' random data");
  add_option("--target", opt.target, "directory on the tier under test, or s3://BUCKET/PREFIX")->required();
  add_option("--shard-bytes", shard, "bytes each rank writes (K/M/G/T, a multiple of 4K)");
  add_option("--workload", opt.workload, "workload file (configs/workloads): parameters and parallelism");
  add_option("--layout", layout, "file-per-rank | shared-file")->default_str(layout);
  add_option("--transfer-size", transfer, "bytes per write or read call (a multiple of 4K)")->default_str(transfer);
  add_flag("--direct", opt.direct, "O_DIRECT (falls back to buffered, recorded, where the filesystem refuses it)");
  add_flag("--no-fsync", no_fsync, "skip fsync: shows the page cache, rows say durable: false");
  add_option("--phases", phases, "write | read (the newest committed step, restart) | write,read")->default_str(phases);
  add_option("--keep", opt.keep,
             "keep the newest INT steps ccbench wrote, removing older ones (s3://: of this run's own; 0: remove "
             "this run's steps at its end)")
      ->default_val(0);
  add_option("--tier", opt.tier, "the tier as you state it: nvme, fsx, ... (recorded)");
  add_option("--tier-gbps", tier_gbps, "the stated tier's ceiling, GB/s: WRITE[,READ] (plausibility)");
  add_option("--fsx-deployment", opt.fsx_deployment, "SCRATCH_2 | PERSISTENT_2");
  add_option("--fsx-throughput-per-tib", per_tib, "MB/s per TiB: 125, 250, 500, 1000 (PERSISTENT_2), 200 (SCRATCH_2)");
  add_option("--fsx-capacity-tib", capacity, "provisioned storage, TiB");
  add_option("--tiered", opt.tiered,
             "LOCAL_PATH: write each shard there (training blocked), then drain it to --target");
  add_option("--part-size", part_size, "s3://: multipart part size, 5M..5G (S3's limits)")->default_str(part_size);
  add_option("--concurrency", opt.remote.concurrency, "s3://: parts (and ranged GETs) in flight per rank")
      ->default_val(4);
  add_option("--s3-endpoint", opt.remote.endpoint,
             "s3://: endpoint URL (default AWS_ENDPOINT_URL, else https://s3.REGION.amazonaws.com)");
  add_option("--export-to", opt.export_to,
             "s3://BUCKET/PREFIX the POSIX target is exported to (FSx data repository): wait for every shard there");
  add_option("--export-deadline", export_deadline, "seconds to wait for the export (default 300, below -T)");
}

std::unique_ptr<CLI::App> checkpoint_flags() { return std::make_unique<CheckpointFlags>(); }

}  // namespace ccbench::cli
