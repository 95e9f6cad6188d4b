// The replay loop (docs/replay.md, "Replay"). A step is one pass over the rank's traced calls: a
// barrier on the world, then each call after its gap, timed alone by the backend (the gaps and
// the data check are outside the timed region). After each step the ranks' per-site and total
// times go to rank 0 as maxima, so a killed run keeps every finished step.
#include "replay/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "backends/point_to_point.hpp"
#include "core/error.hpp"
#include "core/percentiles.hpp"
#include "core/result.hpp"
#include "core/stats.hpp"
#include "core/types.hpp"
#include "replay/call_log.hpp"
#include "replay/trace_digest.hpp"
#include "sweep/describe_run.hpp"
#include "sweep/peer_table.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench::replay {
namespace {

using Clock = std::chrono::steady_clock;

// Waits `us` microseconds of compute gap: a sleep for the long ones, a spin for the short ones
// (a sleep's wake-up is tens of microseconds late, more than a short traced gap).
void wait_gap(double us) {
  if (!(us > 0)) return;
  const auto until = Clock::now() + std::chrono::duration<double, std::micro>(us);
  constexpr double kSpinBelowUs = 200;
  if (us > kSpinBelowUs) std::this_thread::sleep_until(until - std::chrono::duration<double, std::micro>(kSpinBelowUs));
  while (Clock::now() < until) {
  }
}

CaseSpec case_of(const PlannedCall& call) {
  CaseSpec c;
  c.op = call.op;
  c.dtype = call.dtype;
  c.redop = call.redop;
  c.in_place = false;
  c.root = call.root;
  c.nranks = call.comm_size;
  c.rank = call.comm_rank;
  c.layout = call.layout;
  c.matrix = call.matrix;
  return c;
}

pattern::Params params_of(const CaseSpec& c, std::uint32_t seed) {
  const DTypeInfo& dtype = info(c.dtype);
  pattern::Params p;
  p.nranks = c.nranks;
  p.seed = seed;
  p.exact_limit = dtype.exact_int_limit;
  p.is_signed = dtype.is_signed;
  p.is_floating = dtype.is_floating;
  p.redop = c.redop;
  p.root = c.root;
  return p;
}

class Replay {
 public:
  Replay(ControlChannel& world, RunEnding& ending, const RunConfig& config, const ReplayOptions& opt,
         const ReplayPlan& plan, Printer& printer, const std::vector<Backend*>& backends, const Backend& world_backend,
         ResultWriter* writer)
      : world_(world),
        ending_(ending),
        config_(config),
        opt_(opt),
        plan_(plan),
        printer_(printer),
        backends_(backends),
        backend_name_(world_backend.name()),
        writer_(writer),
        calls_(plan.calls[static_cast<std::size_t>(world.rank())]),
        issued_(calls_.size(), 0) {
    // Each message's number on its (communicator, sender, receiver), in this rank's issue order:
    // the sender's n-th send to b and b's n-th receive from it get the same number. Sends and
    // receives are counted apart, so a rank sending to itself numbers both sides alike too.
    std::map<std::tuple<int, int, int, bool>, std::uint64_t> messages;
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      const PlannedCall& call = calls_[i];
      cases_.push_back(case_of(call));
      const bool continues = i > 0 && call.point_to_point && calls_[i - 1].point_to_point &&
                             calls_[i - 1].communicator == call.communicator;
      if (call.point_to_point && !continues) {
        batch_of_.push_back(static_cast<int>(batches_.size()));
        batches_.emplace_back();
      } else {
        batch_of_.push_back(-1);
      }
      if (call.point_to_point) {
        const auto pair = call.send ? std::make_tuple(call.communicator, call.comm_rank, call.peer, true)
                                    : std::make_tuple(call.communicator, call.peer, call.comm_rank, false);
        batches_.back().push_back({call.send, call.dtype, call.layout.count, call.peer, messages[pair]++});
      }
    }
  }

  int run();

 private:
  void step(int trial, int step_index, std::vector<double>& times);
  void count_wrong(std::size_t call_index, std::uint64_t wrong, int trial, int step_index);
  void append_rows_locked(int trial);
  void keep_finished_steps() noexcept;
  bool write_call_log() noexcept;

  ControlChannel& world_;
  RunEnding& ending_;
  const RunConfig& config_;
  const ReplayOptions& opt_;
  const ReplayPlan& plan_;
  Printer& printer_;
  const std::vector<Backend*>& backends_;  // per communicator (null where not a member)
  const std::string backend_name_;
  ResultWriter* writer_;  // rank 0
  const std::vector<PlannedCall>& calls_;
  std::vector<CaseSpec> cases_;
  // Sends and receives back to back on one communicator are one batch, posted together:
  // batch_of_[i] is the batch call i starts (-1: a collective, or inside a batch).
  std::vector<std::vector<PointToPointCall>> batches_;
  std::vector<int> batch_of_;
  std::uint64_t wrong_ = 0;        // this rank's, this trial
  bool named_wrong_call_ = false;  // the first call with wrong elements is named, once per rank
  bool warming_up_ = false;        // the unrecorded first step: its wrong elements are not counted
  // --log-calls: how many times each call returned from the backend, and the passes begun.
  std::vector<std::uint64_t> issued_;
  std::uint64_t passes_ = 0;

  std::mutex mutex_;  // rank 0's samples of the trial running: the watchdog's handler keeps them
  int trial_ = 0;
  std::vector<std::vector<double>> samples_;  // per finished step of the trial: per site, then the step
  bool appended_ = false;
  std::optional<Watchdog> watchdog_;  // last: its handler ends through ending_
};

void Replay::step(int trial, int step_index, std::vector<double>& times) {
  std::fill(times.begin(), times.end(), 0.0);
  const std::uint32_t seed = config_.seed + static_cast<std::uint32_t>(trial) * 7919u;
  watchdog_->arm(Phase::setup);
  world_.barrier();
  ++passes_;
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    const PlannedCall& call = calls_[i];
    const CaseSpec& c = cases_[i];
    Backend& backend = *backends_[static_cast<std::size_t>(call.communicator)];
    if (call.point_to_point) {
      // A batch: the first call's gap, then every call posted and completed together; each call
      // of it is counted an equal share of the batch's time. Each receive is checked against the
      // message its peer sent, outside the timed batch.
      if (batch_of_[i] < 0) continue;
      const auto& batch = batches_[static_cast<std::size_t>(batch_of_[i])];
      auto& point_to_point = dynamic_cast<PointToPoint&>(backend);
      const pattern::Params params = params_of(c, seed);
      if (config_.check) point_to_point.fill_point_to_point(batch, call.comm_rank, params);
      wait_gap(opt_.gaps.wait_us(call.gap_us));
      watchdog_->arm(Phase::sample, static_cast<std::uint64_t>(step_index) * calls_.size() + i);
      const double us = point_to_point.time_point_to_point_us(batch);
      for (std::size_t k = 0; k < batch.size(); ++k) {
        times[static_cast<std::size_t>(calls_[i + k].site)] += us / static_cast<double>(batch.size());
        ++issued_[i + k];
      }
      times.back() += us;
      if (config_.check) {
        const std::vector<std::uint64_t> wrong = point_to_point.verify_point_to_point(batch, call.comm_rank, params);
        for (std::size_t k = 0; k < batch.size(); ++k) count_wrong(i + k, wrong[k], trial, step_index);
      }
      continue;
    }
    const pattern::Params params = params_of(c, seed);
    if (config_.check) backend.fill(c, params);
    wait_gap(opt_.gaps.wait_us(call.gap_us));
    watchdog_->set_case(trial, c.op, c.layout.bytes, false);
    watchdog_->arm(Phase::sample, static_cast<std::uint64_t>(step_index) * calls_.size() + i);
    const double us = backend.time_batch_us(c, 1);
    ++issued_[i];
    times[static_cast<std::size_t>(call.site)] += us;
    times.back() += us;
    if (config_.check) count_wrong(i, backend.verify(c, params), trial, step_index);
  }
  watchdog_->arm(Phase::aggregate);
  world_.max_to_root(times);
  if (world_.is_root()) {
    std::lock_guard lock(mutex_);
    samples_.push_back(times);
  }
}

// A call's wrong elements count toward the trial's; the rank's first such call is named on stderr
// (its site, the traced call and where), since rank 0's total does not say which call it was.
void Replay::count_wrong(std::size_t call_index, std::uint64_t wrong, int trial, int step_index) {
  wrong_ += wrong;
  if (wrong == 0 || named_wrong_call_ || warming_up_) return;
  named_wrong_call_ = true;
  const PlannedCall& call = calls_[call_index];
  const CallSite& site = plan_.sites[static_cast<std::size_t>(call.site)];
  const int rank = world_.rank();
  std::string what = fmt::format("{} {} x{}", trace::name(site.trace_op), info(site.dtype).name, site.count);
  if (call.point_to_point) what += fmt::format(" {} comm rank {}", call.send ? "to" : "from", call.peer);
  std::fprintf(stderr,
               "%s: rank %d: data check failed: call site %d (%s on group '%s', ranks[%d].calls[%zu]): %llu wrong "
               "elements in step %d of trial %d\n",
               kCommand, rank, call.site, what.c_str(), site.group.c_str(),
               plan_.map.trace_rank[static_cast<std::size_t>(rank)], call_index, static_cast<unsigned long long>(wrong),
               step_index, trial);
}

// Rank 0: the trial's rows (its finished steps) into the result file, once.
void Replay::append_rows_locked(int trial) {
  if (appended_ || samples_.empty() || writer_ == nullptr) return;
  appended_ = true;
  for (const ResultRow& row :
       trial_rows(plan_, backend_name_, trial, samples_, wrong_, config_.target_ci, config_.percentiles)) {
    writer_->append(row);
  }
}

// On a hang, a signal or an error: the running trial's finished steps go into the file before the
// ladder finishes it.
void Replay::keep_finished_steps() noexcept {
  if (!world_.is_root()) return;
  try {
    std::lock_guard lock(mutex_);
    append_rows_locked(trial_);
  } catch (...) {
  }
}

// Each rank writes its own log (atomically); false when it could not.
bool Replay::write_call_log() noexcept {
  const std::string path = call_log_path(opt_.log_calls, world_.rank());
  try {
    write_file_atomically(path, call_log(plan_, world_.rank(), issued_, passes_).dump() + "\n");
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: rank %d: --log-calls %s: %s\n", kCommand, world_.rank(), path.c_str(), e.what());
    return false;
  }
}

int Replay::run() {
  watchdog_.emplace(config_.timeout_s, [this](const Watchdog::Event& event) {
    keep_finished_steps();
    ending_.end(event);
  });
  if (world_.is_root()) printer_.start(plan_, opt_, config_.trials);
  std::vector<double> times(plan_.sites.size() + 1);
  std::uint64_t wrong_total = 0;
  int exit = exit_code::ok;
  try {
    // One step before the first trial, not recorded: the first call on each communicator pays for
    // its connections (tens of times a call's time on shared memory).
    warming_up_ = true;
    step(0, 0, times);
    warming_up_ = false;
    if (world_.is_root()) {
      std::lock_guard lock(mutex_);
      samples_.clear();
    }
    for (int trial = 0; trial < config_.trials; ++trial) {
      {
        std::lock_guard lock(mutex_);
        trial_ = trial;
        samples_.clear();
        appended_ = false;
      }
      wrong_ = 0;
      for (int s = 0; s < opt_.steps; ++s) step(trial, s, times);
      watchdog_->arm(Phase::aggregate);
      wrong_ = world_.sum_all(wrong_);
      wrong_total += wrong_;
      if (world_.is_root()) {
        std::lock_guard lock(mutex_);
        printer_.trial(
            trial_rows(plan_, backend_name_, trial, samples_, wrong_, config_.target_ci, config_.percentiles));
        append_rows_locked(trial);
      }
    }
    watchdog_->arm(Phase::finish);
    exit = wrong_total > 0 ? exit_code::data_check_failed : exit_code::ok;
    if (!opt_.log_calls.empty()) {
      const std::uint64_t logs_lost = world_.sum_all(write_call_log() ? 0 : 1);
      if (logs_lost > 0 && exit == exit_code::ok) exit = exit_code::not_saved;
    }
    if (world_.is_root()) {
      const std::optional<std::string> error =
          wrong_total > 0 ? std::optional<std::string>(fmt::format("data check failed: {} wrong elements", wrong_total))
                          : std::nullopt;
      bool saved = true;
      if (writer_ != nullptr) saved = writer_->finish("complete", exit, error);
      if (!saved && exit == exit_code::ok) exit = exit_code::not_saved;
      printer_.finished(writer_ != nullptr && saved ? writer_->path().string() : "", wrong_total, exit);
    }
    exit = world_.broadcast(exit);
  } catch (const std::exception&) {
    keep_finished_steps();
    ending_.end_current_exception(watchdog_->describe());
  }
  watchdog_.reset();
  return exit;
}

}  // namespace

MakeBackend registry_backends() {
  return [](std::string_view name, const BackendOptions& options) { return make_backend(name, options); };
}

std::vector<ResultRow> trial_rows(const ReplayPlan& plan, const std::string& backend, int trial,
                                  const std::vector<std::vector<double>>& samples, std::uint64_t wrong,
                                  double target_ci, std::span<const double> percentiles) {
  std::vector<ResultRow> rows;
  const std::size_t sites = plan.sites.size();
  const auto column = [&](std::size_t k) {
    std::vector<double> values;
    for (const auto& step : samples) values.push_back(step[k]);
    return values;
  };
  const std::vector<double> step_values = column(sites);
  const stats::Summary step_summary = stats::summarize(step_values);
  const auto fill = [&](ResultRow& row, const std::vector<double>& values) {
    const stats::Summary s = stats::summarize(values);
    row.backend = backend;
    row.trial = trial;
    row.samples_us = values;
    row.batch = 1;
    row.time_us = {s.min, s.median, s.mean, s.p99, s.max, s.ci_lo, s.ci_hi};
    row.ci_target_met = s.median > 0 && stats::relative_ci_halfwidth(s) <= target_ci;
    if (!percentiles.empty()) {
      std::vector<double> sorted = values;
      std::ranges::sort(sorted);
      row.extra["percentiles_us"] = percentiles::to_json(sorted, percentiles);
    }
    return s;
  };
  // The step's calls and bytes per rank: the most any rank issues (ranks of different groups
  // issue different calls).
  std::uint64_t step_calls = 0, step_bytes = 0;
  for (const auto& calls : plan.calls) {
    std::uint64_t bytes = 0;
    for (const PlannedCall& call : calls) bytes += plan.sites[static_cast<std::size_t>(call.site)].bytes;
    step_calls = std::max<std::uint64_t>(step_calls, calls.size());
    step_bytes = std::max(step_bytes, bytes);
  }
  for (std::size_t k = 0; k < sites; ++k) {
    const CallSite& site = plan.sites[k];
    ResultRow row;
    row.op = std::string(trace::name(site.trace_op));
    row.dtype = std::string(info(site.dtype).name);
    row.redop = trace::info(site.trace_op).takes_redop ? "sum" : "none";
    row.bytes = site.bytes;
    row.count = site.count;
    row.ranks = site.group_size;
    const stats::Summary s = fill(row, column(k));
    row.extra["replay"] = {
        {"kind", "call_site"},
        {"site", k},
        {"group", site.group},
        {"calls", site.calls_per_step},
        {"fraction_of_step", step_summary.median > 0 ? s.median / step_summary.median : 0.0},
    };
    rows.push_back(std::move(row));
  }
  ResultRow step;
  step.op = std::string(kStepOp);
  step.dtype = "none";
  step.bytes = step_bytes;
  step.count = step_calls;
  step.ranks = plan.world_size;
  step.wrong = wrong;
  fill(step, step_values);
  step.extra["replay"] = {{"kind", "step"}, {"calls", step_calls}, {"sites", sites}, {"steps", samples.size()}};
  rows.push_back(std::move(step));
  return rows;
}

int run_replay(ControlChannel& world, RunEnding& ending, const RunConfig& config, const ReplayOptions& opt,
               const ReplayPlan& plan, Printer& printer, const MakeBackend& make_backend) {
  ending.arm_setup(config.timeout_s);
  struct SetupDoneAtReturn {
    RunEnding& ending;
    ~SetupDoneAtReturn() { ending.setup_done(); }
  } setup_done_at_return{ending};
  const auto usage = [&](const std::string& message) {
    if (world.is_root()) std::fprintf(stderr, "%s: %s\n", kCommand, message.c_str());
    return exit_code::usage;
  };
  const int rank = world.rank();
  BackendOptions options;
  options.channel = &world;
  options.local_rank = world.local_rank();
  options.local_size = world.local_size();
  options.path = config.nccl_path;
  options.setup_watchdog_s = config.timeout_s;

  // The world's backend (the header, the ending's abort), then one per communicator, split once:
  // members pass color 0, the others 1 and drop theirs (a communicator of the whole world is the
  // world's backend itself).
  std::unique_ptr<Backend> world_backend;
  std::vector<std::unique_ptr<Backend>> backends(plan.communicators.size());
  std::string error;
  try {
    options.group_color = -1;
    world_backend = make_backend(config.backend, options);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (auto failed = world.agree_on_error(error)) return usage(*failed);
  std::vector<Backend*> by_comm(plan.communicators.size(), nullptr);
  for (std::size_t i = 0; i < plan.communicators.size(); ++i) {
    const auto& members = plan.communicators[i].world_ranks;
    const bool member = std::find(members.begin(), members.end(), rank) != members.end();
    if (static_cast<int>(members.size()) == world.size()) {
      by_comm[i] = world_backend.get();
      continue;
    }
    try {
      options.group_color = member ? 0 : 1;
      auto backend = make_backend(config.backend, options);
      if (member) backends[i] = std::move(backend);
      by_comm[i] = backends[i].get();
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  }
  // Buffers for the largest call on each communicator; a call the backend cannot run is refused
  // naming its site.
  if (error.empty()) {
    try {
      std::vector<std::uint64_t> send(plan.communicators.size(), 0), recv(plan.communicators.size(), 0);
      std::vector<std::uint64_t> p2p_send(send.size(), 0), p2p_recv(send.size(), 0);
      const PlannedCall* previous = nullptr;
      std::uint64_t batch_send = 0, batch_recv = 0;
      for (const PlannedCall& call : plan.calls[static_cast<std::size_t>(rank)]) {
        const CaseSpec c = case_of(call);
        Backend& backend = *by_comm[static_cast<std::size_t>(call.communicator)];
        auto& s = send[static_cast<std::size_t>(call.communicator)];
        auto& r = recv[static_cast<std::size_t>(call.communicator)];
        if (auto why = backend.unsupported(c)) {
          const CallSite& site = plan.sites[static_cast<std::size_t>(call.site)];
          throw UsageError(fmt::format("{}: {} {} on group '{}': {}", opt.trace_path, trace::name(site.trace_op),
                                       info(site.dtype).name, site.group, *why));
        }
        if (call.point_to_point) {
          if (dynamic_cast<PointToPoint*>(&backend) == nullptr) {
            throw UsageError(fmt::format("{}: send and recv: the {} backend has no point-to-point calls for replay",
                                         opt.trace_path, backend.name()));
          }
          // Each call of a batch has its own region: the buffers hold the largest batch.
          const bool continues =
              previous != nullptr && previous->point_to_point && previous->communicator == call.communicator;
          if (!continues) batch_send = batch_recv = 0;
          (call.send ? batch_send : batch_recv) += call.layout.count * info(call.dtype).size_bytes;
          auto& most_send = p2p_send[static_cast<std::size_t>(call.communicator)];
          auto& most_recv = p2p_recv[static_cast<std::size_t>(call.communicator)];
          most_send = std::max(most_send, batch_send);
          most_recv = std::max(most_recv, batch_recv);
          previous = &call;
          continue;
        }
        s = std::max(s, backend.send_bytes_needed(c));
        r = std::max(r, backend.recv_bytes_needed(c));
        previous = &call;
      }
      for (std::size_t i = 0; i < by_comm.size(); ++i) {
        send[i] = std::max(send[i], p2p_send[i]);
        recv[i] = std::max(recv[i], p2p_recv[i]);
        if (by_comm[i] != nullptr && (send[i] > 0 || recv[i] > 0)) by_comm[i]->allocate(send[i], recv[i]);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (auto failed = world.agree_on_error(error)) return usage(*failed);
  const PeerTable peers = PeerTable::exchange(world);
  Plan header_plan;
  ResultFile header = describe_run(config, world, *world_backend, header_plan, opt.command);
  std::unique_ptr<ResultWriter> writer;
  if (world.is_root()) {
    std::vector<int> ranks_map = plan.map.trace_rank;
    header.config["replay"] = {
        {"trace", opt.trace_path},
        {"trace_world_size", plan.trace_world_size},
        {"ranks_map", ranks_map},
        {"copies", plan.map.copies},
        {"gaps", opt.gaps_text},
        {"steps", opt.steps},
        {"traced_steps", plan.traced_steps},
        {"sites", plan.sites.size()},
    };
    // A replay's sample is one step, not one op as config_json says for run.
    if (!config.percentiles.empty())
      header.config["timing"]["batch_rule"] = "--percentiles: one step a sample (per-step times)";
    try {
      header.config[kReplayConfigKey][kReplayTraceSha256Key] = file_sha256_hex(opt.trace_path);
      writer = std::make_unique<ResultWriter>(header, config.json_path);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (auto failed = world.agree_on_error(error)) return usage(*failed);
  ending.set_peers(&peers);
  ending.set_backend(world_backend.get());
  if (writer) ending.add_writer(writer.get());
  ending.setup_done();

  Replay replay(world, ending, config, opt, plan, printer, by_comm, *world_backend, writer.get());
  const int exit = replay.run();
  ending.forget();  // the writer, the peer table and the backends go with this run
  return exit;
}

}  // namespace ccbench::replay
