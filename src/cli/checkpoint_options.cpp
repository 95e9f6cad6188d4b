#include "cli/checkpoint_options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "checkpoint/s3/protocol.hpp"
#include "cli/number_flags.hpp"
#include "cli/parse_flags.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/sizes.hpp"
#include "sweep/session_flags.hpp"

namespace ccbench::cli {
namespace s3 = checkpoint::s3;
namespace {

std::uint64_t size_flag(const char* flag, const std::string& text) {
  const std::uint64_t v = bytes_flag(flag, text, kFileBytes);
  if (v == 0 || v % 4096 != 0)
    throw UsageError(fmt::format("{}: {} is not a positive multiple of 4K (4096 bytes)", flag, text));
  return v;
}

double positive_flag(const char* flag, const std::string& text) {
  const double v = parse_finite(text, flag);
  if (!(v > 0)) throw UsageError(fmt::format("{}: {} must be above 0", flag, text));
  return v;
}

// S3's multipart limits (5 MiB to 5 GiB a part). What an engine cannot do (--direct on S3, 10,000
// parts) is the engine's to refuse (Storage::refuses), in the command.
void check_s3_flags(CheckpointOptions& opt, const std::string& part_size) {
  opt.remote.part_bytes = bytes_flag("--part-size", part_size, kFileBytes);
  if (opt.remote.part_bytes < (5ULL << 20) || opt.remote.part_bytes > (5ULL << 30))
    throw UsageError(fmt::format(
        "--part-size: {} is outside S3's part sizes (5M to 5G; every part but the last is at least 5 MiB)", part_size));
  if (opt.remote.concurrency < 1 || opt.remote.concurrency > 64)
    throw UsageError(fmt::format("--concurrency: {} is out of range (1 to 64)", opt.remote.concurrency));
}

// --export-to waits inside a phase the watchdog times, so its deadline must end before -T does.
void check_export_flags(CheckpointOptions& opt, const RunConfig& config, const std::string& deadline) {
  if (opt.export_to.empty()) {
    if (!deadline.empty()) throw UsageError("--export-deadline: needs --export-to");
    return;
  }
  if (!s3::is_s3_url(opt.export_to))
    throw UsageError(fmt::format("--export-to {}: expected s3://BUCKET/PREFIX", s3::redact_userinfo(opt.export_to)));
  if (!opt.write) throw UsageError("--export-to: needs the write phase (--phases write or write,read)");
  const bool hang_limit = config.timeout_s > 0;  // -T 0: no watchdog
  opt.export_deadline_s = !deadline.empty() ? positive_flag("--export-deadline", deadline)
                          : hang_limit      ? std::min(300.0, 0.8 * config.timeout_s)
                                            : 300.0;
  if (hang_limit && opt.export_deadline_s >= config.timeout_s)
    throw UsageError(
        fmt::format("--export-deadline: {} s is not below -T {} s", opt.export_deadline_s, config.timeout_s));
}

}  // namespace

bool parse_checkpoint_options(int argc, char** argv, RunConfig& config, CheckpointOptions& opt, bool print_help) {
  CLI::App app{
      "ccbench checkpoint: time to a durable checkpoint on a POSIX or s3:// target (launch with mpirun or srun)",
      "ccbench checkpoint"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(36);
  SharedFlagText shared;
  add_shared_flags(app, config, shared, "phase");
  remove_flags(app, {"--min-bytes", "--max-bytes", "--step-factor", "--step-bytes", "--warmup", "--iters",
                     "--target-ci", "--max-time-per-size", "--check", "--batch", "--progress"});
  app.get_option("--trials")->description("checkpoints to write (each a new step directory)");
  app.get_option("--seed")->description("seed of the shards' random data");
  std::string shard, transfer = "16M", layout = "file-per-rank", phases = "write,read", tier_gbps, per_tib, capacity;
  app.add_option("--target", opt.target, "directory on the tier under test, or s3://BUCKET/PREFIX")->required();
  app.add_option("--shard-bytes", shard, "bytes each rank writes (K/M/G/T, a multiple of 4K)");
  app.add_option("--workload", opt.workload, "workload file (configs/workloads): parameters and parallelism");
  app.add_option("--layout", layout, "file-per-rank | shared-file")->default_str(layout);
  app.add_option("--transfer-size", transfer, "bytes per write or read call (a multiple of 4K)")->default_str(transfer);
  app.add_flag("--direct", opt.direct, "O_DIRECT (falls back to buffered, recorded, where the filesystem refuses it)");
  bool no_fsync = false;
  app.add_flag("--no-fsync", no_fsync, "skip fsync: shows the page cache, rows say durable: false");
  app.add_option("--phases", phases, "write | read (the newest committed step, restart) | write,read")
      ->default_str(phases);
  app.add_option("--keep", opt.keep,
                 "keep the newest INT steps ccbench wrote, removing older ones (s3://: of this run's own; 0: remove "
                 "this run's steps at its end)")
      ->default_val(0);
  app.add_option("--tier", opt.tier, "the tier as you state it: nvme, fsx, ... (recorded)");
  app.add_option("--tier-gbps", tier_gbps, "the stated tier's ceiling, GB/s: WRITE[,READ] (plausibility)");
  app.add_option("--fsx-deployment", opt.fsx_deployment, "SCRATCH_2 | PERSISTENT_2");
  app.add_option("--fsx-throughput-per-tib", per_tib,
                 "MB/s per TiB: 125, 250, 500, 1000 (PERSISTENT_2), 200 (SCRATCH_2)");
  app.add_option("--fsx-capacity-tib", capacity, "provisioned storage, TiB");
  app.add_option("--tiered", opt.tiered,
                 "LOCAL_PATH: write each shard there (training blocked), then drain it to --target");
  std::string part_size = "64M";
  app.add_option("--part-size", part_size, "s3://: multipart part size, 5M..5G (S3's limits)")->default_str(part_size);
  app.add_option("--concurrency", opt.remote.concurrency, "s3://: parts (and ranged GETs) in flight per rank")
      ->default_val(4);
  app.add_option("--s3-endpoint", opt.remote.endpoint,
                 "s3://: endpoint URL (default AWS_ENDPOINT_URL, else https://s3.REGION.amazonaws.com)");
  std::string export_deadline;
  app.add_option(
      "--export-to", opt.export_to,
      "s3://BUCKET/PREFIX the POSIX target is exported to (FSx data repository): wait for every shard there");
  app.add_option("--export-deadline", export_deadline, "seconds to wait for the export (default 300, below -T)");
  if (!parse_flags_or_help(app, argc, argv, print_help)) return false;
  apply_shared_flags(config, shared);
  // Every S3 request, all its tries, ends inside -T (a trickling or silent server fails the call, not
  // the watchdog); a quarter leaves the failure path (abort, cleanup) room before the watchdog.
  opt.remote.request_deadline_s = config.timeout_s > 0 ? config.timeout_s / 4 : 0;
  opt.remote.endpoint = s3::without_userinfo(opt.remote.endpoint);  // never used (SigV4), never stored
  if (config.trials < 1 || config.trials > 100000) {
    throw UsageError(fmt::format("--trials: {} is out of range (1 to 100000)", config.trials));
  }
  if (opt.keep < 0) throw UsageError(fmt::format("--keep: {} must not be negative", opt.keep));
  if (opt.target.empty()) throw UsageError("--target: empty path");
  if (app.count("--tiered") > 0 && opt.tiered.empty()) throw UsageError("--tiered: empty path");
  if (shard.empty() == opt.workload.empty()) throw UsageError("--shard-bytes or --workload: give exactly one");
  if (!shard.empty()) opt.shard_bytes = size_flag("--shard-bytes", shard);
  opt.transfer_bytes = size_flag("--transfer-size", transfer);
  if (opt.transfer_bytes > (1ULL << 30)) throw UsageError(fmt::format("--transfer-size: {} is above 1G", transfer));
  if (layout == "file-per-rank")
    opt.layout = CheckpointLayout::file_per_rank;
  else if (layout == "shared-file")
    opt.layout = CheckpointLayout::shared_file;
  else
    throw UsageError(fmt::format("--layout: '{}' is not file-per-rank or shared-file", layout));
  if (phases == "write")
    opt.read = false;
  else if (phases == "read")
    opt.write = false;
  else if (phases != "write,read") {
    throw UsageError(fmt::format("--phases: '{}' is not write, read or write,read", phases));
  }
  opt.fsync = !no_fsync;
  if (!tier_gbps.empty()) {
    const auto comma = tier_gbps.find(',');
    opt.tier_gbps = positive_flag("--tier-gbps", tier_gbps.substr(0, comma));
    opt.tier_read_gbps =
        comma == std::string::npos ? *opt.tier_gbps : positive_flag("--tier-gbps", tier_gbps.substr(comma + 1));
  }
  const bool fsx = !opt.fsx_deployment.empty() || !per_tib.empty() || !capacity.empty();
  if (fsx) {
    if (opt.fsx_deployment != "SCRATCH_2" && opt.fsx_deployment != "PERSISTENT_2") {
      throw UsageError(fmt::format("--fsx-deployment: '{}' is not SCRATCH_2 or PERSISTENT_2", opt.fsx_deployment));
    }
    if (capacity.empty()) throw UsageError("--fsx-capacity-tib: needed with --fsx-deployment");
    opt.fsx_capacity_tib = positive_flag("--fsx-capacity-tib", capacity);
    if (per_tib.empty() && opt.fsx_deployment == "SCRATCH_2") per_tib = "200";
    if (per_tib.empty()) throw UsageError("--fsx-throughput-per-tib: needed with --fsx-deployment PERSISTENT_2");
    opt.fsx_per_tib = positive_flag("--fsx-throughput-per-tib", per_tib);
    if (opt.tier_gbps) throw UsageError("--tier-gbps: give it or the --fsx-* flags, not both");
  }
  check_s3_flags(opt, part_size);
  check_export_flags(opt, config, export_deadline);
  return true;
}

}  // namespace ccbench::cli
