#include "cli/checkpoint_options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "checkpoint/s3/protocol.hpp"
#include "cli/flag_sets/checkpoint.hpp"
#include "cli/number_flags.hpp"
#include "cli/parse_flags.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/sizes.hpp"

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
  CheckpointFlags flags;  // the row's flag set (cli/flag_sets/checkpoint.hpp)
  if (!parse_flags_or_help(flags, argc, argv, print_help)) return false;
  config = std::move(flags.config);
  opt = std::move(flags.opt);
  apply_shared_flags(config, flags.shared);
  // Every S3 request, all its tries, ends inside -T (a trickling or silent server fails the call, not
  // the watchdog); a quarter leaves the failure path (abort, cleanup) room before the watchdog.
  opt.remote.request_deadline_s = config.timeout_s > 0 ? config.timeout_s / 4 : 0;
  opt.remote.endpoint = s3::without_userinfo(opt.remote.endpoint);  // never used (SigV4), never stored
  if (config.trials < 1 || config.trials > 100000) {
    throw UsageError(fmt::format("--trials: {} is out of range (1 to 100000)", config.trials));
  }
  if (opt.keep < 0) throw UsageError(fmt::format("--keep: {} must not be negative", opt.keep));
  if (opt.target.empty()) throw UsageError("--target: empty path");
  if (flags.count("--tiered") > 0 && opt.tiered.empty()) throw UsageError("--tiered: empty path");
  if (flags.shard.empty() == opt.workload.empty()) throw UsageError("--shard-bytes or --workload: give exactly one");
  if (!flags.shard.empty()) opt.shard_bytes = size_flag("--shard-bytes", flags.shard);
  opt.transfer_bytes = size_flag("--transfer-size", flags.transfer);
  if (opt.transfer_bytes > (1ULL << 30))
    throw UsageError(fmt::format("--transfer-size: {} is above 1G", flags.transfer));
  if (flags.layout == "file-per-rank")
    opt.layout = CheckpointLayout::file_per_rank;
  else if (flags.layout == "shared-file")
    opt.layout = CheckpointLayout::shared_file;
  else
    throw UsageError(fmt::format("--layout: '{}' is not file-per-rank or shared-file", flags.layout));
  if (flags.phases == "write")
    opt.read = false;
  else if (flags.phases == "read")
    opt.write = false;
  else if (flags.phases != "write,read") {
    throw UsageError(fmt::format("--phases: '{}' is not write, read or write,read", flags.phases));
  }
  opt.fsync = !flags.no_fsync;
  if (!flags.tier_gbps.empty()) {
    const auto comma = flags.tier_gbps.find(',');
    opt.tier_gbps = positive_flag("--tier-gbps", flags.tier_gbps.substr(0, comma));
    opt.tier_read_gbps =
        comma == std::string::npos ? *opt.tier_gbps : positive_flag("--tier-gbps", flags.tier_gbps.substr(comma + 1));
  }
  const bool fsx = !opt.fsx_deployment.empty() || !flags.per_tib.empty() || !flags.capacity.empty();
  if (fsx) {
    if (opt.fsx_deployment != "SCRATCH_2" && opt.fsx_deployment != "PERSISTENT_2") {
      throw UsageError(fmt::format("--fsx-deployment: '{}' is not SCRATCH_2 or PERSISTENT_2", opt.fsx_deployment));
    }
    if (flags.capacity.empty()) throw UsageError("--fsx-capacity-tib: needed with --fsx-deployment");
    opt.fsx_capacity_tib = positive_flag("--fsx-capacity-tib", flags.capacity);
    if (flags.per_tib.empty() && opt.fsx_deployment == "SCRATCH_2") flags.per_tib = "200";
    if (flags.per_tib.empty()) throw UsageError("--fsx-throughput-per-tib: needed with --fsx-deployment PERSISTENT_2");
    opt.fsx_per_tib = positive_flag("--fsx-throughput-per-tib", flags.per_tib);
    if (opt.tier_gbps) throw UsageError("--tier-gbps: give it or the --fsx-* flags, not both");
  }
  check_s3_flags(opt, flags.part_size);
  check_export_flags(opt, config, flags.export_deadline);
  return true;
}

}  // namespace ccbench::cli
