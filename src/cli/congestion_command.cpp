// `ccbench congestion` (docs/congestion.md): GPCNeT's design on ccbench's harness. The measured
// set runs small-message allreduce latency and bandwidth-bound allreduce and alltoall, alone
// (isolated phase: the congestors idle) and while the other ranks run a congestor pattern in a loop
// (congested phase), the two phases of a pattern adjacent in every trial and their order alternating
// (congestion/phases.hpp). This file is the command's flags, their checks against the layout and
// what it prints; the phases run over MPI in congestion_run/, the layout, phase order, statistics
// and the gate are the pure library congestion/.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/flag_sets/congestion.hpp"
#include "cli/measuring_commands.hpp"
#include "cli/parse_flags.hpp"
#include "congestion/impact.hpp"
#include "congestion/layout.hpp"
#include "congestion/phases.hpp"
#include "congestion_run/run.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/sizes.hpp"
#include "measure/frame.hpp"
#include "sweep/describe_run.hpp"
#include "sweep/percentiles_flag.hpp"
#include "sweep/rank_hosts.hpp"

namespace ccbench::cli {
namespace {

namespace fs = std::filesystem;
using namespace ccbench::congestion;
using congestion_run::CongestionOptions;
using congestion_run::kCommand;

// A measured or congestor op moves at least one byte.
constexpr BytesRange kOpBytes{.min_bytes = 1};

// Returns false when --help was printed. Throws UsageError naming the flag.
bool parse_options(int argc, char** argv, RunConfig& config, CongestionOptions& opt, bool print_help) {
  CongestionFlags flags;  // the row's flag set (cli/flag_sets/congestion.hpp)
  if (!parse_flags_or_help(flags, argc, argv, print_help)) return false;
  config = std::move(flags.config);
  opt = std::move(flags.opt);
  apply_shared_flags(config, flags.shared);
  apply_percentiles_flag(config, flags.percentiles);
  if (!flags.link_gbps.empty()) {
    config.link_gbps = parse_finite(flags.link_gbps, "--link-gbps");
    if (config.link_gbps < 0) throw UsageError("--link-gbps must not be negative");
  }
  // NCCL has group communicators (--groups), but congestion would open one per pattern on each GPU,
  // beside the measured one, a set-up no GPU has run yet (docs/congestion.md).
  if (config.backend != "mpi") {
    throw UsageError("--backend: congestion runs on mpi only (got '" + config.backend + "')");
  }
  if (config.trials < 1) throw UsageError(fmt::format("--trials: must be at least 1, got {}", config.trials));
  // Each trial is 2 phases per pattern, planned up front; a million trials is weeks of phases.
  constexpr int kMaxTrials = 1000000;
  if (config.trials > kMaxTrials) {
    throw UsageError(fmt::format("--trials: at most {}, got {}", kMaxTrials, config.trials));
  }
  if (!flags.measured_hosts.empty()) {
    const double h = parse_finite(flags.measured_hosts, "--measured-hosts");
    if (h != std::floor(h) || h < 1 || h > 1e6) {
      throw UsageError("--measured-hosts: expected a host count of 1 or more, got '" + flags.measured_hosts + "'");
    }
    opt.layout.measured_hosts = static_cast<int>(h);
  }
  if (!flags.measured_ranks.empty()) opt.layout.measured_ranks = parse_rank_list(flags.measured_ranks);
  if (opt.ranks_per_host < 0) {
    throw UsageError(fmt::format("--ranks-per-host: must be 0 (by hostname) or more, got {}", opt.ranks_per_host));
  }
  opt.layout.patterns = parse_patterns(opt.patterns);
  opt.lat = bytes_flag("--lat-bytes", opt.lat_bytes, kOpBytes);
  opt.bw = bytes_flag("--bw-bytes", opt.bw_bytes, kOpBytes);
  opt.congestor = bytes_flag("--congestor-bytes", opt.congestor_bytes, kOpBytes);
  if (!opt.max_impact.empty()) {
    double m = std::nan("");
    try {
      m = parse_finite(opt.max_impact, "--max-impact");
    } catch (const UsageError&) {
    }
    if (!(m > 0) || !std::isfinite(m)) {
      throw UsageError("--max-impact: must be a positive finite number, got '" + opt.max_impact + "'");
    }
    opt.max_impact_value = m;
  }
  return true;
}

// A size too small for one whole element per rank is refused naming its flag and the least size
// that works (make_plan alone said "nothing to measure; allreduce 1: smaller than one element per
// rank", without the flag).
void check_whole_element(const char* flag, const std::string& text, Op op, DType dtype, std::uint64_t bytes,
                         int nranks) {
  const auto carries = [&](std::uint64_t b) { return layout_for(op, dtype, b, nranks).count > 0; };
  if (carries(bytes)) return;
  // The count grows with the size: the least size that carries one is found by bisection.
  std::uint64_t lo = bytes, hi = bytes;
  while (!carries(hi) && hi < (std::uint64_t{1} << 62)) hi = 2 * hi + 1;
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (carries(mid) ? hi : lo) = mid;
  }
  throw UsageError(fmt::format("{} {}: {} of {} over {} ranks needs at least {} bytes", flag, text, name(op),
                               name(dtype), nranks, hi));
}

// Every rank checks every size against the layout (the same answer everywhere, so one line).
void check_sizes(const RunConfig& config, const CongestionOptions& opt, const Layout& layout) {
  const int measured = static_cast<int>(layout.measured.size());
  check_whole_element("--lat-bytes", opt.lat_bytes, Op::allreduce, config.dtype, opt.lat, measured);
  check_whole_element("--bw-bytes", opt.bw_bytes, Op::allreduce, config.dtype, opt.bw, measured);
  check_whole_element("--bw-bytes", opt.bw_bytes, Op::alltoall, config.dtype, opt.bw, measured);
  for (const auto& roles : layout.patterns) {
    const Op op =
        roles.pattern == Pattern::alltoall ? Op::alltoall : Op::broadcast;  // as congestion_run's congestor_case
    for (const auto& group : roles.groups) {
      check_whole_element("--congestor-bytes", opt.congestor_bytes, op, config.dtype, opt.congestor,
                          static_cast<int>(group.size()));
    }
  }
}

// Rank 0's lines on stdout (stderr for a failed data check), flushed where a run is seen to move.
class ConsolePrinter final : public congestion_run::Printer {
 public:
  void start(const Layout& layout, int trials, std::uint64_t congestor_bytes) override {
    for (const auto& line : describe(layout)) std::printf("# %s\n", line.c_str());
    std::printf("# %d trial%s x %zu pattern%s x (isolated, congested); congestor op %s\n", trials,
                trials == 1 ? "" : "s", layout.patterns.size(), layout.patterns.size() == 1 ? "" : "s",
                format_bytes(congestor_bytes).c_str());
    std::fflush(stdout);
  }
  void phase(const congestion_run::PhaseLine& line) override {
    std::string tests;
    for (const auto& t : line.tests) tests += (tests.empty() ? "" : ", ") + t;
    std::printf("# trial %d %-8s %-9s %s; congestor ops %.0f (%.1f ms each), stopped %.1f ms after the measured set\n",
                line.trial, line.pattern.c_str(), phase_name(line.congested).c_str(), tests.c_str(), line.congestor_ops,
                line.congestor_op_ms, line.stop_wait_ms);
    std::fflush(stdout);
  }
  void table(const std::vector<ImpactRow>& rows) override { std::printf("#\n%s", render_table(rows).c_str()); }
  void gate_and_method(const std::optional<GateResult>& gate, double max_impact, int trials) override {
    if (gate) {
      std::printf("# gate --max-impact %g: %s: %s (exit %d)\n", max_impact, std::string(name(gate->verdict)).c_str(),
                  gate->reason.c_str(), gate->exit_code);
    }
    std::printf(
        "# impact = congested / isolated per trial pair, geometric mean over %d trials; 95%% CI: paired t "
        "on the log ratios (docs/method.md)\n",
        trials);
  }
  void files(const fs::path& isolated, const fs::path& congested, const fs::path& summary) override {
    std::printf("# result files: %s (isolated) and %s (congested), one pair per pattern; summary: %s\n",
                isolated.string().c_str(), congested.string().c_str(),
                summary.empty() ? "not written" : summary.string().c_str());
  }
  void data_check_failed(std::uint64_t wrong_elements) override {
    std::fprintf(stderr, "%s: data check failed: %llu wrong elements\n", kCommand,
                 static_cast<unsigned long long>(wrong_elements));
  }
  void flush() override { std::fflush(stdout); }
};

}  // namespace

int congestion_entry(measure::Frame& frame) {
  ControlChannel& world = frame.channel();
  const int argc = frame.argc();
  char** const argv = frame.argv();
  RunConfig config;
  CongestionOptions opt;
  try {
    if (!parse_options(argc, argv, config, opt, world.is_root())) return exit_code::ok;
  } catch (const UsageError& e) {
    return frame.usage_error(e.what());
  }

  // A job smaller than one host of --ranks-per-host ranks would be one partial host, and the layout
  // would blame the measured set instead (every rank the same answer, so one line).
  if (opt.ranks_per_host > world.size()) {
    return frame.usage_error(fmt::format("--ranks-per-host {}: the job has {} rank{}, fewer than one host of {}",
                                         opt.ranks_per_host, world.size(), world.size() == 1 ? "" : "s",
                                         opt.ranks_per_host));
  }
  // Every rank learns every rank's host and makes the same layout (or the same error).
  const std::vector<std::string> hostnames = every_rank_hostname(world);
  Layout layout;
  try {
    layout = make_layout(host_indexes(hostnames, opt.ranks_per_host), opt.layout);
    check_sizes(config, opt, layout);
  } catch (const UsageError& e) {
    return frame.usage_error(e.what());
  }
  opt.command = recorded_command(kCommand, argc, argv);
  ConsolePrinter printer;
  return congestion_run::run_congestion(world, frame.ending(), config, opt, layout, printer);
}

}  // namespace ccbench::cli
