#include "sweep/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/bandwidth.hpp"
#include "core/percentiles.hpp"
#include "core/sampling.hpp"
#include "core/stats.hpp"
#include "sweep/per_rank.hpp"
#include "sweep/stopping_rule.hpp"

namespace ccbench {
namespace {

// A batch should last at least this long, so the barrier's exit skew and the clock's resolution
// are small against it (docs/method.md, "Batching").
constexpr double kMinBatchUs = 100.0;
constexpr int kMaxBatch = 1024;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What a group's rank 0 sends to the job's rank 0 after a case: the group, its wrong elements and
// its time of every sample, as raw bytes (exact doubles).
struct GroupTimes {
  int group = 0;
  std::uint64_t wrong = 0;
  std::vector<double> samples_us;
};

std::string encode(const GroupTimes& t) {
  std::string out(sizeof t.group + sizeof t.wrong + t.samples_us.size() * sizeof(double), '\0');
  char* at = out.data();
  std::memcpy(at, &t.group, sizeof t.group);
  std::memcpy(at + sizeof t.group, &t.wrong, sizeof t.wrong);
  if (!t.samples_us.empty())
    std::memcpy(at + sizeof t.group + sizeof t.wrong, t.samples_us.data(), t.samples_us.size() * sizeof(double));
  return out;
}

GroupTimes decode(const std::string& bytes) {
  GroupTimes t;
  constexpr std::size_t head = sizeof t.group + sizeof t.wrong;
  if (bytes.size() < head || (bytes.size() - head) % sizeof(double) != 0)
    throw std::runtime_error("a group's times arrived incomplete");
  std::memcpy(&t.group, bytes.data(), sizeof t.group);
  std::memcpy(&t.wrong, bytes.data() + sizeof t.group, sizeof t.wrong);
  t.samples_us.resize((bytes.size() - head) / sizeof(double));
  if (!t.samples_us.empty()) std::memcpy(t.samples_us.data(), bytes.data() + head, bytes.size() - head);
  return t;
}

}  // namespace

nlohmann::json matrix_row_json(const MatrixCase& matrix, double median_us, double link_gbps) {
  const MatrixLoad& load = matrix.load;
  nlohmann::json out = {
      {"source", matrix.source},
      {"imbalance", load.imbalance},
      {"total_bytes", load.total_bytes},
      {"off_rank_bytes", load.off_rank_bytes},
      {"mean_off_rank_send_bytes", load.mean_off_rank_send_bytes},
      {"most_loaded_rank", load.most_loaded_rank},
      {"most_loaded_bytes", load.most_loaded_bytes},
      {"most_loaded_off_rank_rank", load.most_loaded_off_rank_rank},
      {"most_loaded_off_rank_bytes", load.most_loaded_off_rank_bytes},
      // The rate the most loaded rank's off-rank bytes moved at: what its link carried.
      {"most_loaded_gbps", algbw_gbps(load.most_loaded_off_rank_bytes, median_us)},
  };
  // The time those bytes need at the asserted link rate (--link-gbps, Gbit/s): no faster op exists.
  if (link_gbps > 0) out["bound_us"] = static_cast<double>(load.most_loaded_off_rank_bytes) * 8.0 / (link_gbps * 1e3);
  return out;
}

Engine::Engine(const RunConfig& config, const Plan& plan, Backend& backend, ControlChannel& channel, Watchdog& watchdog,
               SweepObserver& observer)
    : config_(config), plan_(plan), backend_(backend), channel_(channel), watchdog_(watchdog), observer_(observer) {
  if (const char* hook = std::getenv("CCBENCH_TEST_CORRUPT_RANK")) corrupt_rank_ = std::atoi(hook);
}

SweepTotals Engine::run() {
  SweepTotals totals;
  for (int trial = 0; trial < config_.trials; ++trial) {
    for (const PlannedOp& op : plan_.ops) {
      if (channel_.is_root()) observer_.on_op_begin(trial, op.op);
      for (const PlannedSize& size : op.sizes) {
        std::vector<ResultRow> rows;
        for (const CaseSpec& c : size.variants) {
          ResultRow row = measure(trial, c);
          if (!channel_.is_root()) continue;
          for (SweepCheck* check : checks_) check->annotate(row);
          totals.wrong += row.wrong;
          totals.ci_met += row.ci_target_met ? 1 : 0;
          ++totals.results;
          observer_.on_result(row);
          rows.push_back(std::move(row));
        }
        if (channel_.is_root()) observer_.on_size_done(trial, op.op, rows);
        for (SweepCheck* check : checks_) {
          watchdog_.arm(Phase::finish);
          if (auto stop = check->after_size(trial, op.op, rows)) {
            totals.stop = std::move(stop);
            watchdog_.disarm();
            return totals;
          }
        }
      }
    }
  }
  watchdog_.disarm();
  return totals;
}

int Engine::choose_batch(const CaseSpec& c) {
  if (config_.batch > 0) return config_.batch;
  if (config_.timing == TimingMethod::nccl_tests) return 20;  // nccl-tests' default -n
  for (int i = 0; i < config_.warmup; ++i) {
    watchdog_.arm(Phase::warmup, static_cast<std::uint64_t>(i));
    backend_.launch(c);
  }
  backend_.synchronize();
  // One op after a barrier carries the barrier's exit skew, which for tiny ops is larger than the
  // op: when one op looks short, time a few back to back to see what an op really costs.
  watchdog_.arm(Phase::warmup, static_cast<std::uint64_t>(config_.warmup));
  channel_.barrier();
  double op_us = channel_.max_all(backend_.time_batch_us(c, 1));
  if (op_us < kMinBatchUs) {
    constexpr int kProbe = 16;
    watchdog_.arm(Phase::warmup, static_cast<std::uint64_t>(config_.warmup) + 1);
    channel_.barrier();
    op_us = channel_.max_all(backend_.time_batch_us(c, kProbe) / kProbe);
  }
  if (!(op_us > 0)) return kMaxBatch;
  return std::clamp(static_cast<int>(std::ceil(kMinBatchUs / op_us)), 1, kMaxBatch);
}

ResultRow Engine::measure(int trial, const CaseSpec& c) {
  watchdog_.set_case(trial, c.op, c.layout.bytes, c.in_place);
  const DTypeInfo& dtype = info(c.dtype);
  pattern::Params params;
  params.nranks = c.nranks;
  params.seed = config_.seed + static_cast<std::uint32_t>(trial) * 7919u;
  params.exact_limit = dtype.exact_int_limit;
  params.is_signed = dtype.is_signed;
  params.is_floating = dtype.is_floating;
  params.redop = c.redop;
  params.root = c.root < 0 ? 0 : c.root;

  GroupTimes mine_group;  // --groups: this group's wrong elements and time of every sample (group root)
  if (grouped()) mine_group.group = groups_.layout->group_of(channel_.rank());

  ResultRow row;
  row.op = std::string(name(c.op));
  row.backend = std::string(backend_.name());
  row.dtype = std::string(dtype.name);
  row.redop = std::string(name(c.redop));
  row.in_place = c.in_place;
  row.root = c.root;
  row.bytes = c.layout.bytes;
  row.count = c.layout.count;
  row.ranks = c.nranks;
  row.trial = trial;

  // Data check: one op on freshly filled buffers, every output element compared.
  watchdog_.arm(Phase::check);
  backend_.fill(c, params);
  if (config_.check) {
    backend_.launch(c);
    backend_.synchronize();
    if (corrupt_rank_ == channel_.rank()) backend_.corrupt_output_for_test(c);  // the world rank
    const std::uint64_t local_wrong = backend_.verify(c, params);
    row.wrong = channel_.sum_all(local_wrong);
    if (grouped()) mine_group.wrong = groups_.channel->sum_all(local_wrong);
    if (c.in_place) backend_.fill(c, params);
  }

  // Warm-up (in auto mode it also measures the op to choose the batch).
  const int batch = choose_batch(c);
  if (config_.batch > 0 || config_.timing == TimingMethod::nccl_tests) {
    for (int i = 0; i < config_.warmup; ++i) {
      watchdog_.arm(Phase::warmup, static_cast<std::uint64_t>(i));
      backend_.launch(c);
    }
    backend_.synchronize();
  }
  row.batch = batch;

  const StoppingRule rule{config_.iters, config_.target_ci, config_.max_time_per_size_s, config_.min_samples,
                          kMaxSamplesPerSize};
  int round = first_round(rule);
  std::vector<double> local;
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t iteration = 0;
  bool ci_met = false;
  per_rank::RankTiming mine;  // --per-rank: this rank's own samples and barrier waits
  while (round > 0) {
    local.assign(static_cast<std::size_t>(round), 0.0);
    for (double& sample : local) {
      watchdog_.arm(Phase::sample, iteration++);
      const auto arrived = std::chrono::steady_clock::now();
      channel_.barrier();
      if (config_.per_rank) mine.barrier_wait_us.push_back(seconds_since(arrived) * 1e6);
      sample = backend_.time_batch_us(c, batch) / batch;
    }
    if (config_.per_rank) mine.samples_us.insert(mine.samples_us.end(), local.begin(), local.end());
    watchdog_.arm(Phase::aggregate, iteration);
    if (grouped()) {
      // Each group's own time of every sample: its slowest rank (or mean, nccl-tests timing).
      std::vector<double> group = local;
      if (config_.timing == TimingMethod::nccl_tests) {
        groups_.channel->mean_to_root(group);
      } else {
        groups_.channel->max_to_root(group);
      }
      if (groups_.channel->is_root())
        mine_group.samples_us.insert(mine_group.samples_us.end(), group.begin(), group.end());
    }
    if (config_.timing == TimingMethod::nccl_tests) {
      channel_.mean_to_root(local);
    } else {
      channel_.max_to_root(local);
    }
    int next = 0;
    if (channel_.is_root()) {
      row.samples_us.insert(row.samples_us.end(), local.begin(), local.end());
      const double elapsed = seconds_since(start);
      const StopDecision d =
          decide(rule, row.samples_us, elapsed, elapsed / static_cast<double>(row.samples_us.size()));
      next = d.stop ? 0 : d.next_round;
      ci_met = d.ci_met;  // the rule's own verdict on the samples it stopped at
    }
    round = channel_.broadcast(next);
  }
  if (config_.per_rank) {
    mine.host = per_rank::local_host();
    const std::vector<std::string> all = channel_.gather_to_root(per_rank::encode(mine));
    if (channel_.is_root()) {
      std::vector<per_rank::RankTiming> ranks;
      for (const auto& text : all) ranks.push_back(per_rank::decode(text));
      row.extra["per_rank"] = per_rank::summarize(ranks);
    }
  }
  std::vector<std::vector<double>> group_samples;
  std::vector<std::uint64_t> group_wrong;
  if (grouped()) {
    const std::vector<std::string> all =
        channel_.gather_to_root(groups_.channel->is_root() ? encode(mine_group) : std::string());
    const auto count = static_cast<std::size_t>(groups_.layout->count);
    group_samples.resize(count);
    group_wrong.resize(count);
    for (const std::string& bytes : all) {
      if (bytes.empty()) continue;
      GroupTimes t = decode(bytes);
      if (t.group < 0 || static_cast<std::size_t>(t.group) >= count)
        throw std::runtime_error("a group's times name no group");
      group_samples[static_cast<std::size_t>(t.group)] = std::move(t.samples_us);
      group_wrong[static_cast<std::size_t>(t.group)] = t.wrong;
    }
  }
  watchdog_.arm(Phase::finish);

  if (channel_.is_root()) {
    const stats::Summary s = stats::summarize(row.samples_us);
    row.time_us = {s.min, s.median, s.mean, s.p99, s.max, s.ci_lo, s.ci_hi};
    row.algbw_gbps = algbw_gbps(row.bytes, s.median);
    row.busbw_gbps = busbw_gbps(c.op, c.nranks, row.bytes, s.median);
    if (c.posts_blocks()) {
      // docs/method.md, "sendrecv patterns": busbw is the busiest rank's link.
      const PatternLoad load = pattern_load(c.sendrecv_pattern, c.peer_group, c.nranks);
      row.busbw_gbps = row.algbw_gbps * pattern_bus_factor(load);
      row.extra["sendrecv_pattern"] = {
          {"pattern", name(c.sendrecv_pattern)},
          {"peer_group", c.peer_group},
          {"block_bytes", block_elements_of(c.layout.count, c.block_elements) * info(c.dtype).size_bytes},
          {"aggregate_gbps", pattern_aggregate_gbps(load, row.bytes, s.median)},
          {"per_receiver_gbps", pattern_per_receiver_gbps(load, row.bytes, s.median)},
      };
    }
    if (c.matrix) {
      row.busbw_gbps = matrix_busbw_gbps(c.matrix->load.mean_off_rank_send_bytes, s.median);
      row.extra["matrix"] = matrix_row_json(*c.matrix, s.median, config_.link_gbps);
    }
    row.ci_target_met = ci_met;
    if (!config_.percentiles.empty()) {
      std::vector<double> sorted = row.samples_us;
      std::ranges::sort(sorted);
      row.extra["percentiles_us"] = percentiles::to_json(sorted, config_.percentiles);
    }
    if (grouped()) {
      row.extra["groups"] = groups::row_json(*groups_.layout, groups_.nodes_per_group, c.op, row.bytes, group_samples,
                                             s.median, group_wrong);
    }
  }
  return row;
}

}  // namespace ccbench
