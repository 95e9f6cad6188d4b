// `ccbench congestion` (docs/congestion.md): GPCNeT's design on ccbench's harness. The measured
// set runs small-message allreduce latency and bandwidth-bound allreduce and alltoall, alone
// (isolated phase: the congestors idle) and while the other ranks run a congestor pattern in a loop
// (congested phase), the two phases of a pattern adjacent in every trial and their order alternating
// (congestion/phases.hpp). The measured set's "done" reaches the congestors through a non-blocking
// barrier on the world channel that they poll between their ops (ControlChannel::start_barrier),
// and they agree on the op after which all of them stop. Layout, phase order, statistics and the
// gate are the pure library congestion/; this file runs it over MPI with the sweep's engine.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "backends/backend.hpp"
#include "cli/command.hpp"
#include "cli/measuring_commands.hpp"
#include "cli/parse_flags.hpp"
#include "cli/run_metadata.hpp"
#include "congestion/impact.hpp"
#include "congestion/layout.hpp"
#include "congestion/phases.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/result.hpp"
#include "core/save_or_keep.hpp"
#include "core/sizes.hpp"
#include "sweep/engine.hpp"
#include "sweep/mpi_channel.hpp"
#include "sweep/peer_table.hpp"
#include "sweep/plan.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/run_ending.hpp"
#include "sweep/session.hpp"
#include "sweep/session_flags.hpp"
#include "sweep/watchdog.hpp"
#include "system/host_info.hpp"
#include "system/tool_version.hpp"

namespace ccbench::cli {
namespace {

namespace fs = std::filesystem;
using namespace ccbench::congestion;

constexpr const char* kCommand = "ccbench congestion";

struct CongestionOptions {
  LayoutOptions layout;
  int ranks_per_host = 0;
  std::string patterns = "alltoall,incast,bcast";
  std::string lat_bytes = "8";
  std::string bw_bytes = "1M";
  std::string congestor_bytes = "4M";
  std::string max_impact;  // empty: no gate
  std::optional<double> max_impact_value;
  std::uint64_t lat = 8, bw = 1 << 20, congestor = 4 << 20;
};

std::uint64_t bytes_flag(const char* flag, const std::string& text) {
  try {
    const std::uint64_t v = parse_bytes(text);
    if (v == 0) throw UsageError("must be at least 1 byte");
    return v;
  } catch (const UsageError& e) {
    throw UsageError(std::string(flag) + ": " + e.what());
  }
}

// Returns false when --help was printed. Throws UsageError naming the flag.
bool parse_options(int argc, char** argv, RunConfig& config, CongestionOptions& opt, bool print_help) {
  CLI::App app{"ccbench congestion: congestion impact factor of collectives (launch with mpirun or srun)", kCommand};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(36);
  config.trials = 4;
  config.in_place = InPlaceMode::no;
  SharedFlagText shared;
  shared.max_time_per_size = "0.5";
  add_shared_flags(app, config, shared, "collective");
  // The measured tests have their own sizes; the sweep's size flags do not apply.
  // (and there is no per-size progress line).
  remove_flags(app, {"--min-bytes", "--max-bytes", "--step-factor", "--step-bytes", "--progress"});
  app.get_option("--trials")->description("trials: pairs of phases (isolated, congested) per pattern, interleaved");
  app.get_option("--json")->description(
      "PATH.json: writes PATH.<pattern>.<isolated|congested>.json and PATH.impact.json");
  std::string measured_hosts, measured_ranks;
  app.add_option("--backend", config.backend, "mpi (the only backend congestion runs on so far)")
      ->default_val(config.backend);
  app.add_option("--measured-hosts", measured_hosts,
                 "hosts whose ranks are measured (default: the first 20% of the hosts, at least 2 ranks)");
  app.add_option("--measured-per-host", opt.layout.measured_per_host,
                 "measured ranks per measured host (0 = all; the others there are incast receivers)")
      ->default_val(0);
  app.add_option("--measured-ranks", measured_ranks, "explicit measured ranks, e.g. 0,1 or 0-3 (must hold 0)");
  app.add_option("--ranks-per-host", opt.ranks_per_host,
                 "treat blocks of K consecutive ranks as one host (0 = by hostname)")
      ->default_val(0);
  app.add_option("--congestors", opt.patterns, "congestor patterns: alltoall,incast,bcast")->default_str(opt.patterns);
  app.add_option("--lat-bytes", opt.lat_bytes, "size of the latency allreduce")->default_str(opt.lat_bytes);
  app.add_option("--bw-bytes", opt.bw_bytes, "size of the bandwidth allreduce and alltoall")->default_str(opt.bw_bytes);
  app.add_option("--congestor-bytes", opt.congestor_bytes, "size of one congestor op")
      ->default_str(opt.congestor_bytes);
  app.add_option("--max-impact", opt.max_impact, "gate: exit 1 when an impact factor is shown above this");
  std::string link_gbps;
  app.add_option("--fabric-path", config.fabric_path, "record the fabric path (shm, tcp, efa, ...)");
  app.add_option("--fabric-generation", config.fabric_generation, "record the fabric generation (v3, v4, ...)");
  app.add_option("--link-gbps", link_gbps, "record the per-node link rate in Gbit/s");
  if (!parse_flags_or_help(app, argc, argv, print_help)) return false;
  apply_shared_flags(config, shared);
  if (!link_gbps.empty()) {
    config.link_gbps = parse_finite(link_gbps, "--link-gbps");
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
  if (!measured_hosts.empty()) {
    const double h = parse_finite(measured_hosts, "--measured-hosts");
    if (h != std::floor(h) || h < 1 || h > 1e6) {
      throw UsageError("--measured-hosts: expected a host count of 1 or more, got '" + measured_hosts + "'");
    }
    opt.layout.measured_hosts = static_cast<int>(h);
  }
  if (!measured_ranks.empty()) opt.layout.measured_ranks = parse_rank_list(measured_ranks);
  if (opt.ranks_per_host < 0) {
    throw UsageError(fmt::format("--ranks-per-host: must be 0 (by hostname) or more, got {}", opt.ranks_per_host));
  }
  opt.layout.patterns = parse_patterns(opt.patterns);
  opt.lat = bytes_flag("--lat-bytes", opt.lat_bytes);
  opt.bw = bytes_flag("--bw-bytes", opt.bw_bytes);
  opt.congestor = bytes_flag("--congestor-bytes", opt.congestor_bytes);
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
    const Op op = roles.pattern == Pattern::alltoall ? Op::alltoall : Op::broadcast;  // as congestor_case
    for (const auto& group : roles.groups) {
      check_whole_element("--congestor-bytes", opt.congestor_bytes, op, config.dtype, opt.congestor,
                          static_cast<int>(group.size()));
    }
  }
}

// The measured tests: allreduce at --lat-bytes and --bw-bytes, alltoall at --bw-bytes.
Plan measured_plan(const RunConfig& base, const Backend& backend, int nranks, int rank, const CongestionOptions& opt) {
  Plan plan;
  const auto add = [&](Op op, std::uint64_t bytes) {
    RunConfig c = base;
    c.ops = {op};
    c.sizes = SizeRange{bytes, bytes, 2.0, 0};
    const Plan one = make_plan(c, backend, nranks, rank);
    for (const auto& s : one.skipped) plan.skipped.push_back(s);
    for (const auto& o : one.ops) {
      if (!plan.ops.empty() && plan.ops.back().op == o.op) {
        for (const auto& size : o.sizes) plan.ops.back().sizes.push_back(size);
      } else {
        plan.ops.push_back(o);
      }
    }
    plan.send_bytes = std::max(plan.send_bytes, one.send_bytes);
    plan.recv_bytes = std::max(plan.recv_bytes, one.recv_bytes);
    plan.cases_per_trial += one.cases_per_trial;
  };
  add(Op::allreduce, opt.lat);
  if (opt.bw != opt.lat) add(Op::allreduce, opt.bw);
  add(Op::alltoall, opt.bw);
  return plan;
}

// One congestor op of a pattern on this rank's group.
CaseSpec congestor_case(const RunConfig& base, const Backend& backend, const PatternRoles& roles, int world_rank,
                        std::uint64_t bytes, Plan& plan) {
  for (std::size_t g = 0; g < roles.groups.size(); ++g) {
    const auto& group = roles.groups[g];
    const auto it = std::find(group.begin(), group.end(), world_rank);
    if (it == group.end()) continue;
    RunConfig c = base;
    c.ops = {roles.pattern == Pattern::alltoall ? Op::alltoall : Op::broadcast};
    c.sizes = SizeRange{bytes, bytes, 2.0, 0};
    c.root = 0;
    if (roles.roots[g] >= 0) {
      c.root = static_cast<int>(std::find(group.begin(), group.end(), roles.roots[g]) - group.begin());
    }
    plan = make_plan(c, backend, static_cast<int>(group.size()), static_cast<int>(it - group.begin()));
    return plan.ops.at(0).sizes.at(0).variants.at(0);
  }
  throw std::logic_error("congestor_case: rank in no group");
}

// Waits for a pending barrier without spinning a core (ranks with nothing to do in a phase).
void wait_quietly(PendingBarrier& pending) {
  while (!pending.test()) std::this_thread::sleep_for(std::chrono::microseconds(500));
}

// PATH.json -> PATH.<what>.json. A folder (`-J out/`, or one that exists) holds
// congestion.<what>.json: a stem of "" would make hidden files (.impact.json) that `report out/`
// does not list.
fs::path phase_path(const std::string& json_path, const std::string& what) {
  fs::path p(json_path);
  std::error_code ec;
  if (p.filename().empty() || fs::is_directory(p, ec)) return p / ("congestion." + what + ".json");
  const std::string stem = p.extension() == ".json" ? p.stem().string() : p.filename().string();
  return p.parent_path() / (stem + "." + what + ".json");
}

// Rank 0: rows from the engine go to the phase's result file and to the statistics.
class PhaseObserver final : public SweepObserver {
 public:
  ResultWriter* writer = nullptr;
  int trial = 0;
  std::string pattern;
  bool congested = false;
  std::uint64_t wrong = 0;
  // (op, bytes) -> pattern -> trial -> pair of samples
  std::map<std::pair<std::string, std::uint64_t>, std::map<std::string, std::map<int, TrialPair>>> samples;
  std::vector<std::pair<std::string, std::uint64_t>> order;
  std::vector<std::string> line;

  std::mutex mutex;  // samples: the watchdog thread reads them when a run is interrupted

  void on_result(const ResultRow& in) override {
    std::lock_guard lock(mutex);
    ResultRow row = in;
    row.trial = trial;
    row.extra["congestion"] = {{"phase", phase_name(congested)}, {"pattern", pattern}};
    wrong += row.wrong;
    if (writer) writer->append(row);
    const auto key = std::make_pair(row.op, row.bytes);
    if (!samples.count(key)) order.push_back(key);
    TrialPair& pair = samples[key][pattern][trial];
    pair.trial = trial;
    (congested ? pair.congested_us : pair.isolated_us) = row.samples_us;
    line.push_back(fmt::format("{} {:.1f} us", test_name(row.op, row.bytes), row.time_us.median));
  }
};

int run_phases(MpiChannel& world, int argc, char** argv, const RunConfig& config, const CongestionOptions& opt,
               const Layout& layout);

// The impact rows of every (test, pattern) from the trials whose two phases both finished.
std::vector<ImpactRow> impact_rows(PhaseObserver& observer, const Layout& layout) {
  std::lock_guard lock(observer.mutex);
  std::vector<ImpactRow> rows;
  for (const auto& key : observer.order) {
    for (const auto& roles : layout.patterns) {
      const std::string pattern(name(roles.pattern));
      std::vector<TrialPair> trials;
      for (const auto& [t, pair] : observer.samples[key][pattern]) {
        if (!pair.isolated_us.empty() && !pair.congested_us.empty()) trials.push_back(pair);
      }
      rows.push_back(impact_row(key.first, key.second, pattern, trials));
    }
  }
  return rows;
}

// Writes PATH.impact.json atomically; when it cannot, a copy in the working or temporary folder.
// Returns where it went (empty: nowhere), printing why on stderr when not at `path`.
fs::path write_summary(const fs::path& path, const std::string& text, bool durable) {
  const SaveOutcome saved = save_or_keep(path, text, durable);
  if (saved.folder_recreated) {
    std::fprintf(stderr, "%s: warning: the folder %s was removed during the run; created it again and wrote %s\n",
                 kCommand, path.parent_path().c_str(), path.c_str());
  } else if (saved.written.empty()) {
    std::fprintf(stderr, "%s: cannot write %s: %s\n", kCommand, path.c_str(), saved.why.c_str());
  } else if (saved.written != path) {
    std::fprintf(stderr, "%s: cannot write %s: %s; the summary was saved to %s instead\n", kCommand, path.c_str(),
                 saved.why.c_str(), saved.written.c_str());
  }
  return saved.written;
}

int congestion_main(int argc, char** argv) {
  Watchdog::block_termination_signals();
  system::environment_at_startup();
  MpiChannel world = MpiChannel::init_world(argc, argv);
  const auto usage = [&](const std::string& message) {
    if (world.is_root()) std::fprintf(stderr, "%s: %s\n", kCommand, message.c_str());
    return MpiChannel::finalize(exit_code::usage);
  };

  RunConfig config;
  CongestionOptions opt;
  try {
    if (!parse_options(argc, argv, config, opt, world.is_root())) return MpiChannel::finalize(exit_code::ok);
  } catch (const UsageError& e) {
    return usage(e.what());
  }

  // A job smaller than one host of --ranks-per-host ranks would be one partial host, and the layout
  // would blame the measured set instead (every rank the same answer, so one line).
  if (opt.ranks_per_host > world.size()) {
    return usage(fmt::format("--ranks-per-host {}: the job has {} rank{}, fewer than one host of {}",
                             opt.ranks_per_host, world.size(), world.size() == 1 ? "" : "s", opt.ranks_per_host));
  }
  // Every rank learns every rank's host and makes the same layout (or the same error).
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string joined;
  for (const auto& h : world.gather_to_root(host)) joined += h + "\n";
  joined = world.broadcast(joined);
  std::vector<std::string> hostnames;
  for (std::size_t start = 0; start < joined.size();) {
    const auto nl = joined.find('\n', start);
    hostnames.push_back(joined.substr(start, nl - start));
    start = nl + 1;
  }
  Layout layout;
  try {
    layout = make_layout(host_indexes(hostnames, opt.ranks_per_host), opt.layout);
    check_sizes(config, opt, layout);
  } catch (const UsageError& e) {
    return usage(e.what());
  }
  return MpiChannel::finalize(run_phases(world, argc, argv, config, opt, layout));
}

// Everything after the layout; every channel and backend is made and destroyed in here, before
// the caller's MPI_Finalize. Returns the exit code.
int run_phases(MpiChannel& world, int argc, char** argv, const RunConfig& config, const CongestionOptions& opt,
               const Layout& layout) {
  const int rank = world.rank();
  const auto usage = [&](const std::string& message) {
    if (world.is_root()) std::fprintf(stderr, "%s: %s\n", kCommand, message.c_str());
    return exit_code::usage;
  };
  const bool measured = layout.is_measured(rank);

  // Channels and backends, created collectively on every rank in the same order; agreed errors.
  std::unique_ptr<ControlChannel> measured_channel;
  std::vector<std::unique_ptr<ControlChannel>> active_channels;
  std::unique_ptr<Backend> measured_backend;
  std::vector<std::unique_ptr<Backend>> pattern_backends;
  std::vector<CaseSpec> pattern_cases(layout.patterns.size());
  std::vector<bool> active(layout.patterns.size(), false);
  Plan plan;
  std::vector<Plan> pattern_plans(layout.patterns.size());
  const auto backend_for = [&](int color) {
    BackendOptions options;
    options.local_rank = world.local_rank();
    options.local_size = world.local_size();
    options.channel = &world;
    options.group_color = color;
    return make_backend(config.backend, options);
  };
  try {
    std::string error;
    try {
      measured_channel = world.split(measured ? kMeasuredColor : kIdleColor);
      measured_backend = backend_for(measured ? kMeasuredColor : kIdleColor);
      for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
        const int color = layout.patterns[p].color[static_cast<std::size_t>(rank)];
        active[p] = color >= kFirstActiveColor;
        active_channels.push_back(world.split(active[p] ? 0 : 1));
        pattern_backends.push_back(backend_for(color));
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    agree_or_throw(world, error);
    try {
      if (measured) {
        plan = measured_plan(config, *measured_backend, measured_channel->size(), measured_channel->rank(), opt);
      }
      for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
        if (active[p]) {
          pattern_cases[p] =
              congestor_case(config, *pattern_backends[p], layout.patterns[p], rank, opt.congestor, pattern_plans[p]);
        }
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    // Buffers that cannot fit are named by their flag before anything is allocated (an
    // allocation of --bw-bytes 1T said only "std::bad_alloc").
    if (error.empty()) {
      const auto fits = [&](const Plan& p, const Backend& b) {
        const std::uint64_t need = buffer_bytes_needed(p);
        const std::uint64_t budget = b.memory_budget_bytes(world.local_size());
        return need != std::numeric_limits<std::uint64_t>::max() && (budget == 0 || need <= budget);
      };
      const auto too_big = [&](const std::string& flag, const Plan& p, const Backend& b) {
        const std::uint64_t need = buffer_bytes_needed(p);
        const std::uint64_t budget = b.memory_budget_bytes(world.local_size());
        return fmt::format("{}: needs {:.1f} MiB of buffers per rank, but only {:.1f} MiB is available per rank ({} "
                           "ranks on this node)",
                           flag, static_cast<double>(need) / 1048576.0, static_cast<double>(budget) / 1048576.0,
                           world.local_size());
      };
      if (measured && !fits(plan, *measured_backend)) {
        error = too_big(opt.bw >= opt.lat ? "--bw-bytes " + format_bytes(opt.bw) : "--lat-bytes " + format_bytes(opt.lat),
                        plan, *measured_backend);
      }
      for (std::size_t p = 0; p < layout.patterns.size() && error.empty(); ++p) {
        if (active[p] && !fits(pattern_plans[p], *pattern_backends[p])) {
          error = too_big("--congestor-bytes " + format_bytes(opt.congestor), pattern_plans[p], *pattern_backends[p]);
        }
      }
    }
    agree_or_throw(world, error);
    try {
      if (measured) measured_backend->allocate(plan.send_bytes, plan.recv_bytes);
      for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
        if (!active[p]) continue;
        pattern_backends[p]->allocate(pattern_plans[p].send_bytes, pattern_plans[p].recv_bytes);
        pattern::Params params;
        params.nranks = pattern_cases[p].nranks;
        params.seed = config.seed;
        params.exact_limit = info(pattern_cases[p].dtype).exact_int_limit;
        params.is_signed = info(pattern_cases[p].dtype).is_signed;
        params.root = pattern_cases[p].root;
        pattern_backends[p]->fill(pattern_cases[p], params);
      }
    } catch (const std::bad_alloc&) {
      error = fmt::format("--bw-bytes {} / --congestor-bytes {}: cannot allocate the buffers on rank {}",
                          format_bytes(opt.bw), format_bytes(opt.congestor), rank);
    } catch (const std::exception& e) {
      error = e.what();
    }
    agree_or_throw(world, error);
  } catch (const AgreedSetupError& e) {
    return usage(e.what());
  }

  const PeerTable peers = PeerTable::exchange(world);
  // The result files: one per pattern and phase kind, each an ordinary result file of the
  // measured set (compare one pattern's isolated file with its congested file directly).
  std::vector<std::array<std::unique_ptr<ResultWriter>, 2>> writers(layout.patterns.size());
  std::string output_error;
  RunConfig header_config = config;
  header_config.ops = {Op::allreduce, Op::alltoall};
  header_config.sizes = SizeRange{std::min(opt.lat, opt.bw), std::max(opt.lat, opt.bw), 2.0, 0};
  ResultFile header;
  if (measured) header = describe_run(header_config, *measured_channel, *measured_backend, plan, argc, argv);
  if (world.is_root()) {
    nlohmann::json layout_json = {{"measured_ranks", layout.measured},
                                  {"local_congestors", layout.local_congestors},
                                  {"remote_congestors", layout.remote_congestors},
                                  {"hosts", layout.hosts},
                                  {"lat_bytes", opt.lat},
                                  {"bw_bytes", opt.bw},
                                  {"congestor_bytes", opt.congestor}};
    header.system["ranks_in_job"] = layout.ranks;
    try {
      for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
        for (int congested = 0; congested < 2; ++congested) {
          ResultFile h = header;
          const std::string pattern(name(layout.patterns[p].pattern));
          h.config["congestion"] = layout_json;
          h.config["congestion"]["pattern"] = pattern;
          h.config["congestion"]["phase"] = phase_name(congested != 0);
          h.config["congestion"]["groups"] = layout.patterns[p].groups;
          if (h.run.label.empty()) h.run.label = "congestion " + pattern + " " + phase_name(congested != 0);
          const std::string path =
              config.json_path.empty() ? "" : phase_path(config.json_path, pattern + "." + phase_name(congested != 0));
          try {
            writers[p][static_cast<std::size_t>(congested)] = std::make_unique<ResultWriter>(h, path);
          } catch (const std::exception& e) {
            throw std::runtime_error(path + ": " + e.what());
          }
        }
      }
      if (!config.json_path.empty()) {
        const fs::path impact = phase_path(config.json_path, "impact");
        // Checked now, written at the end (atomically): a run that fails leaves an old summary as it was.
        const fs::path dir = impact.has_parent_path() ? impact.parent_path() : fs::path(".");
        if (fs::is_directory(impact) || ::access(dir.c_str(), W_OK) != 0) {
          throw std::runtime_error(impact.string() + ": cannot be written");
        }
      }
    } catch (const std::exception& e) {
      output_error = fmt::format("-J/--json {}: {}", config.json_path, e.what());
    }
  }
  if (const std::string error = world.broadcast(output_error); !error.empty()) return usage(error);

  PhaseObserver observer;
  nlohmann::json phases_json = nlohmann::json::array();  // under observer.mutex
  // PATH.impact.json: the impacts of the trials finished, the gate, the files; `status` as the
  // phase files' (complete, interrupted, incomplete).
  const auto summary_json = [&](const std::vector<ImpactRow>& rows, const std::optional<GateResult>& gate, int exit,
                                const std::string& status) {
    nlohmann::json summary = {{"tool",
                               {{"name", "ccbench"},
                                {"version", std::string(system::tool_version())},
                                {"git", std::string(system::tool_git_commit())}}},
                              {"command", header.run.command},
                              {"status", status},
                              {"trials", config.trials},
                              {"impacts", nlohmann::json::array()},
                              {"exit_code", exit}};
    {
      std::lock_guard lock(observer.mutex);
      summary["phases"] = phases_json;
    }
    summary["layout"] = {{"measured_ranks", layout.measured},
                         {"local_congestors", layout.local_congestors},
                         {"remote_congestors", layout.remote_congestors},
                         {"hosts", layout.hosts},
                         {"ranks", layout.ranks}};
    for (const auto& r : rows) summary["impacts"].push_back(to_json(r));
    if (gate) {
      summary["gate"] = {{"max_impact", *opt.max_impact_value},
                         {"verdict", name(gate->verdict)},
                         {"reason", gate->reason},
                         {"exit_code", gate->exit_code}};
    }
    summary["files"] = nlohmann::json::object();
    for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
      const std::string pattern(name(layout.patterns[p].pattern));
      summary["files"][pattern] = {{"isolated", writers[p][0]->path().string()},
                                   {"congested", writers[p][1]->path().string()}};
    }
    return summary;
  };

  // Set by the main thread, read by the watchdog's: the main thread goes on measuring while the
  // handler writes the files, so the handler reads each once.
  std::atomic<ResultWriter*> current_writer{nullptr};
  std::atomic<Backend*> current_backend{measured_backend.get()};
  Watchdog watchdog(config.timeout_s, [&](const Watchdog::Event& event) {
    // One snapshot for the whole handler. It read current_writer twice, and the main thread could
    // move to the next phase in between (writing the summary takes a while): the file of the phase
    // it left was then finished by no one and kept the "incomplete" of its first row while the
    // other said "interrupted" (hostile.congestion's interrupted run, 1 in 2 before).
    ResultWriter* const current = current_writer.load();
    Backend* const backend = current_backend.load();
    if (rank == 0) {
      // Every phase file says the same (end_run finishes the current one, the others are finished
      // here, before the summary, even those without a row yet: a finished writer takes no later
      // row, so none can start its file as "incomplete" after this), and the summary holds the
      // impacts of the trials that finished both phases.
      const std::string status = event.signal != 0 ? "interrupted" : "incomplete";
      for (auto& pair : writers) {
        for (auto& w : pair) {
          if (w && w.get() != current) w->finish(status, event.exit_code, event.message, false);
        }
      }
      if (!config.json_path.empty()) {
        write_summary(phase_path(config.json_path, "impact"),
                      summary_json(impact_rows(observer, layout), std::nullopt, event.exit_code, status).dump(1) + "\n",
                      false);
      }
    }
    end_run(kCommand, event, rank, current, peers, backend);
  });

  if (world.is_root()) {
    for (const auto& line : describe(layout)) std::printf("# %s\n", line.c_str());
    std::printf("# %d trial%s x %zu pattern%s x (isolated, congested); congestor op %s\n", config.trials,
                config.trials == 1 ? "" : "s", layout.patterns.size(), layout.patterns.size() == 1 ? "" : "s",
                format_bytes(opt.congestor).c_str());
    std::fflush(stdout);
  }

  SweepObserver quiet;
  RunConfig phase_config = config;
  phase_config.trials = 1;
  int exit = exit_code::ok;
  try {
    for (const PhaseSpec& phase : phase_plan(config.trials, static_cast<int>(layout.patterns.size()))) {
      const auto p = static_cast<std::size_t>(phase.pattern);
      const PatternRoles& roles = layout.patterns[p];
      const std::string pattern(name(roles.pattern));
      watchdog.arm(Phase::setup);
      world.barrier();
      std::uint64_t ops = 0;
      double stop_wait_ms = 0, measured_ms = 0, op_ms = 0;
      const auto phase_start = std::chrono::steady_clock::now();
      if (measured) {
        observer.writer = writers.empty() || !world.is_root() ? nullptr : writers[p][phase.congested ? 1 : 0].get();
        current_writer = observer.writer;
        observer.trial = phase.trial;
        observer.pattern = pattern;
        observer.congested = phase.congested;
        observer.line.clear();
        watchdog.set_trial_offset(phase.trial);
        current_backend = measured_backend.get();
        Engine(phase_config, plan, *measured_backend, *measured_channel, watchdog,
               measured_channel->is_root() ? static_cast<SweepObserver&>(observer) : quiet)
            .run();
        watchdog.arm(Phase::finish);
        const auto done = std::chrono::steady_clock::now();
        measured_ms = std::chrono::duration<double, std::milli>(done - phase_start).count();
        auto pending = world.start_barrier();
        wait_quietly(*pending);
        stop_wait_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - done).count();
      } else if (phase.congested && active[p]) {
        // Run the pattern until the measured set is done: after every op the active congestors
        // agree whether any of them has seen the barrier complete, so all stop after the same op.
        current_backend = pattern_backends[p].get();
        auto pending = world.start_barrier();
        const CaseSpec& c = pattern_cases[p];
        watchdog.set_case(phase.trial, c.op, c.layout.bytes, false);
        double busy_ms = 0;
        while (true) {
          watchdog.arm(Phase::sample, ops);
          const auto op_start = std::chrono::steady_clock::now();
          pattern_backends[p]->launch(c);
          pattern_backends[p]->synchronize();
          busy_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - op_start).count();
          ++ops;
          if (active_channels[p]->max_all(pending->test() ? 1.0 : 0.0) > 0) break;
        }
        op_ms = busy_ms / static_cast<double>(ops);
        watchdog.arm(Phase::finish);
        pending->wait();
      } else {
        // Idle until the measured set is done: a phase has no -T bound (it is several tests), and a
        // measured rank that hangs is caught by its own watchdog, which ends the job.
        watchdog.disarm();
        auto pending = world.start_barrier();
        wait_quietly(*pending);
      }
      // The ops the congestors ran in the phase (the largest count of any group's ranks).
      const double group_ops = world.max_all(static_cast<double>(ops));
      stop_wait_ms = world.max_all(stop_wait_ms);
      measured_ms = world.max_all(measured_ms);
      op_ms = world.max_all(op_ms);  // the slowest group's mean op time
      watchdog.disarm();
      if (world.is_root()) {
        std::printf(
            "# trial %d %-8s %-9s %s; congestor ops %.0f (%.1f ms each), stopped %.1f ms after the measured set\n",
            phase.trial, pattern.c_str(), phase_name(phase.congested).c_str(),
            [&] {
              std::string s;
              for (const auto& l : observer.line) s += (s.empty() ? "" : ", ") + l;
              return s;
            }()
                .c_str(),
            group_ops, op_ms, stop_wait_ms);
        std::fflush(stdout);
        std::lock_guard lock(observer.mutex);
        phases_json.push_back({{"trial", phase.trial},
                               {"pattern", pattern},
                               {"phase", phase_name(phase.congested)},
                               {"measured_ms", measured_ms},
                               {"congestor_ops", group_ops},
                               {"congestor_op_ms", op_ms},
                               {"stop_wait_ms", stop_wait_ms}});
      }
    }
    current_writer = nullptr;
    if (world.is_root()) {
      std::vector<ImpactRow> rows = impact_rows(observer, layout);
      std::optional<GateResult> gate;
      if (opt.max_impact_value) gate = apply_gate(rows, *opt.max_impact_value);
      std::printf("#\n%s", render_table(rows).c_str());
      const bool wrong = observer.wrong > 0;
      exit = wrong ? exit_code::data_check_failed : (gate ? gate->exit_code : exit_code::ok);
      // Every phase was measured: a file that cannot be written is kept elsewhere (the writer and
      // write_summary say where) and the exit says "measured, not saved" unless a worse code holds.
      bool saved = true;
      for (auto& pair : writers) {
        for (auto& w : pair) {
          saved = w->finish("complete", exit,
                            wrong ? std::optional<std::string>(
                                        fmt::format("data check failed: {} wrong elements", observer.wrong))
                                  : std::nullopt) &&
                  saved;
        }
      }
      if (gate) {
        std::printf("# gate --max-impact %g: %s: %s (exit %d)\n", *opt.max_impact_value,
                    std::string(name(gate->verdict)).c_str(), gate->reason.c_str(), gate->exit_code);
      }
      std::printf(
          "# impact = congested / isolated per trial pair, geometric mean over %d trials; 95%% CI: paired t "
          "on the log ratios (docs/method.md)\n",
          config.trials);
      if (!config.json_path.empty()) {
        const fs::path path = phase_path(config.json_path, "impact");
        const fs::path written = write_summary(path, summary_json(rows, gate, exit, "complete").dump(1) + "\n", true);
        saved = saved && written == path;
        std::printf("# result files: %s (isolated) and %s (congested), one pair per pattern; summary: %s\n",
                    writers[0][0]->path().string().c_str(), writers[0][1]->path().string().c_str(),
                    written.empty() ? "not written" : written.string().c_str());
        if (!saved && exit == exit_code::ok) exit = exit_code::not_saved;
      }
      if (wrong)
        std::fprintf(stderr, "%s: data check failed: %llu wrong elements\n", kCommand,
                     static_cast<unsigned long long>(observer.wrong));
      std::fflush(stdout);
    }
    exit = world.broadcast(exit);
  } catch (const PeerFailure& e) {
    end_run(kCommand, {exit_code::peer_failed, 0, std::string("peer failed: ") + e.what()}, rank, current_writer.load(),
            peers, current_backend.load());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: rank %d: %s during %s\n", kCommand, rank, e.what(), watchdog.describe().c_str());
    std::fflush(stdout);
    std::_Exit(exit_code::usage);
  }
  pattern_backends.clear();
  measured_backend.reset();
  active_channels.clear();
  measured_channel.reset();
  return exit;
}

const bool registered = register_command({"congestion", measuring_summary("congestion"), &congestion_main});

}  // namespace
}  // namespace ccbench::cli
