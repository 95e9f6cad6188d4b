#include "screen/search.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/stats.hpp"

namespace ccbench::screen {

std::string_view name(Stage stage) {
  switch (stage) {
    case Stage::solo:
      return "solo";
    case Stage::ring:
      return "ring";
    case Stage::attribution:
      return "attribution";
  }
  return "?";
}

std::string_view name(Outcome outcome) {
  switch (outcome) {
    case Outcome::ok:
      return "ok";
    case Outcome::failed:
      return "failed";
    case Outcome::unreachable:
      return "unreachable";
  }
  return "?";
}

std::string_view name(Verdict verdict) {
  switch (verdict) {
    case Verdict::healthy:
      return "healthy";
    case Verdict::slow:
      return "slow";
    case Verdict::failed:
      return "failed";
    case Verdict::unreachable:
      return "unreachable";
  }
  return "?";
}

std::string_view name(Metric metric) {
  switch (metric) {
    case Metric::latency_us:
      return "latency_us";
    case Metric::busbw_gbps:
      return "busbw_gbps";
  }
  return "?";
}

std::optional<double> median_of(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::ranges::sort(values);
  return stats::median_sorted(values);
}

std::optional<double> mad_of(const std::vector<double>& values) {
  const auto m = median_of(values);
  if (!m) return std::nullopt;
  std::vector<double> dev;
  dev.reserve(values.size());
  for (double v : values) dev.push_back(std::fabs(v - *m));
  return median_of(std::move(dev));
}

namespace {

bool higher_is_better(Metric metric) { return metric == Metric::busbw_gbps; }

std::optional<double> value_of(const Measurement& m, Metric metric) {
  return metric == Metric::busbw_gbps ? m.busbw_gbps : m.latency_us;
}

bool beyond(Metric metric, double measured, double floor) {
  return higher_is_better(metric) ? measured < floor : measured > floor;
}

bool network(Stage stage) { return stage != Stage::solo; }

bool judged(const Criteria& c, Metric metric) { return metric == Metric::busbw_gbps ? c.judge_busbw : c.judge_latency; }

bool contains(const std::vector<int>& v, int x) { return std::ranges::find(v, x) != v.end(); }

}  // namespace

Search::Search(int hosts, Criteria criteria, int concurrency)
    : n_(hosts), criteria_(criteria), concurrency_(concurrency), excluded_(static_cast<std::size_t>(hosts), false) {
  if (hosts < 1) throw std::invalid_argument("a screen needs at least one host");
  if (concurrency < 0) throw std::invalid_argument("concurrency must be 0 (no limit) or more");
  hosts_.resize(static_cast<std::size_t>(hosts));
}

int Search::add_test(Stage stage, std::vector<int> hosts) {
  TestRecord record;
  record.spec.id = static_cast<int>(tests_.size());
  record.spec.stage = stage;
  record.spec.hosts = std::move(hosts);
  tests_.push_back(std::move(record));
  pending_.push_back(tests_.back().spec.id);
  return tests_.back().spec.id;
}

std::vector<TestSpec> Search::take_round() {
  std::vector<TestSpec> round;
  std::vector<bool> busy(static_cast<std::size_t>(n_), false);
  std::vector<int> left;
  for (int id : pending_) {
    TestSpec& spec = tests_[static_cast<std::size_t>(id)].spec;
    const bool fits = concurrency_ == 0 || static_cast<int>(round.size()) < concurrency_;
    const bool free = std::ranges::none_of(spec.hosts, [&](int h) { return busy[static_cast<std::size_t>(h)]; });
    if (fits && free) {
      for (int h : spec.hosts) busy[static_cast<std::size_t>(h)] = true;
      spec.round = rounds_;
      round.push_back(spec);
    } else {
      left.push_back(id);
    }
  }
  pending_ = std::move(left);
  outstanding_ = static_cast<int>(round.size());
  ++rounds_;
  return round;
}

std::vector<TestSpec> Search::next_round() {
  if (outstanding_ > 0) throw std::logic_error("screen search: the previous round is not recorded yet");
  while (true) {
    if (!pending_.empty()) return take_round();
    switch (stage_) {
      case Phase::solo:
        if (!planned_) {
          planned_ = true;
          plan_solo();
          continue;
        }
        if (plan_solo_confirmation()) continue;
        stage_ = Phase::ring;
        plan_ring();
        continue;
      case Phase::ring:
        stage_ = Phase::attribution;
        plan_attribution();
        continue;
      case Phase::attribution:
        if (plan_confirmation()) continue;
        stage_ = Phase::done;
        conclude();
        return {};
      case Phase::done:
        return {};
    }
  }
}

void Search::record(int test_id, Measurement measurement) {
  if (test_id < 0 || test_id >= static_cast<int>(tests_.size()))
    throw std::invalid_argument("screen search: no test " + std::to_string(test_id));
  auto& record = tests_[static_cast<std::size_t>(test_id)];
  if (record.measurement) throw std::logic_error("screen search: test " + std::to_string(test_id) + " recorded twice");
  record.measurement = std::move(measurement);
  --outstanding_;
}

void Search::plan_solo() {
  for (int h = 0; h < n_; ++h) add_test(Stage::solo, {h});
}

void Search::plan_ring() {
  for (const auto& t : tests_) {
    if (t.spec.stage == Stage::solo && t.measurement && t.measurement->outcome != Outcome::ok)
      excluded_[static_cast<std::size_t>(t.spec.hosts[0])] = true;
  }
  for (int h = 0; h < n_; ++h)
    if (!excluded_[static_cast<std::size_t>(h)]) ring_hosts_.push_back(h);
  const int m = static_cast<int>(ring_hosts_.size());
  if (m < 2) return;
  if (m == 2) {
    add_test(Stage::ring, {ring_hosts_[0], ring_hosts_[1]});
    return;
  }
  // Neighbours (i, i+1): the even edges form one round, the odd ones the next (and for odd m the
  // closing edge a third).
  for (int parity = 0; parity < 2; ++parity)
    for (int i = parity; i < m; i += 2)
      add_test(Stage::ring,
               {ring_hosts_[static_cast<std::size_t>(i)], ring_hosts_[static_cast<std::size_t>((i + 1) % m)]});
}

std::optional<double> Search::score(int host, Metric metric, bool network_tests) const {
  std::optional<double> best;
  for (const auto& t : tests_) {
    if (network(t.spec.stage) != network_tests || !t.measurement || t.measurement->outcome != Outcome::ok) continue;
    if (!contains(t.spec.hosts, host)) continue;
    const auto v = value_of(*t.measurement, metric);
    if (!v) continue;
    if (!best || (higher_is_better(metric) ? *v > *best : *v < *best)) best = v;
  }
  return best;
}

bool Search::all_network_tests_failed(int host) const {
  int tests = 0;
  for (const auto& t : tests_) {
    if (!network(t.spec.stage) || !t.measurement || !contains(t.spec.hosts, host)) continue;
    ++tests;
    if (t.measurement->outcome == Outcome::ok) return false;
  }
  return tests > 0;
}

void Search::plan_attribution() {
  limit_ = provisional_limits(true, ring_hosts_);
  std::vector<std::pair<double, int>> healthy;  // (busbw score or -latency, host)
  for (int h : ring_hosts_) {
    if (all_network_tests_failed(h) || beyond_limits(h)) {
      suspects_.push_back(h);
    } else {
      const auto bw = score(h, Metric::busbw_gbps, true);
      const auto lat = score(h, Metric::latency_us, true);
      healthy.emplace_back(bw ? *bw : (lat ? -*lat : 0.0), h);
    }
  }
  std::ranges::stable_sort(healthy, [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [value, h] : healthy) pool_.push_back(h);
  if (pool_.empty()) return;
  for (std::size_t i = 0; i < suspects_.size(); ++i)
    add_test(Stage::attribution, {suspects_[i], pool_[i % pool_.size()]});
}

bool Search::beyond_limits(int host) const { return beyond_provisional(host, true, limit_); }

bool Search::beyond_provisional(int host, bool network_stage, const std::vector<std::optional<double>>& limits) const {
  const Metric metrics[] = {Metric::busbw_gbps, Metric::latency_us};
  for (std::size_t k = 0; k < 2; ++k) {
    const auto s = score(host, metrics[k], network_stage);
    if (s && limits[k] && beyond(metrics[k], *s, *limits[k])) return true;
  }
  return false;
}

// Provisional floor, only to choose whom to re-test: stricter than the final one (from the upper
// quartile of the scores, not the median), so a bad host hiding in a bad half of the fleet is
// still re-tested. Re-tests are cheap; misses are not.
std::vector<std::optional<double>> Search::provisional_limits(bool network_stage, const std::vector<int>& hosts) const {
  const Metric metrics[] = {Metric::busbw_gbps, Metric::latency_us};
  std::vector<std::optional<double>> limit(2);
  for (std::size_t k = 0; k < 2; ++k) {
    const Metric metric = metrics[k];
    if (!judged(criteria_, metric)) continue;
    std::vector<double> scores;
    for (int h : hosts)
      if (auto s = score(h, metric, network_stage)) scores.push_back(*s);
    if (static_cast<int>(scores.size()) >= criteria_.min_fleet) {
      std::ranges::sort(scores);
      if (higher_is_better(metric)) {
        limit[k] = stats::quantile_sorted(scores, 0.75) * (1.0 - criteria_.busbw_tolerance);
      } else {
        limit[k] = stats::quantile_sorted(scores, 0.25) * (1.0 + criteria_.latency_tolerance);
      }
    }
    if (!network_stage) continue;
    const auto absolute = higher_is_better(metric) ? criteria_.expect_busbw_gbps : criteria_.expect_latency_us;
    if (absolute)
      limit[k] = limit[k] ? (higher_is_better(metric) ? std::max(*limit[k], *absolute) : std::min(*limit[k], *absolute))
                          : absolute;
  }
  return limit;
}

bool Search::plan_solo_confirmation() {
  std::vector<int> ok;
  for (int h = 0; h < n_; ++h) {
    bool failed = false;
    for (const auto& t : tests_)
      if (t.spec.stage == Stage::solo && t.spec.hosts[0] == h && t.measurement && t.measurement->outcome != Outcome::ok)
        failed = true;
    if (!failed) ok.push_back(h);
  }
  const auto limits = provisional_limits(false, ok);
  bool added = false;
  for (int h : ok) {
    int count = 0;
    for (const auto& t : tests_) count += t.spec.stage == Stage::solo && t.spec.hosts[0] == h;
    if (count < criteria_.confirm && beyond_provisional(h, false, limits)) {
      add_test(Stage::solo, {h});
      added = true;
    }
  }
  return added;
}

bool Search::plan_confirmation() {
  if (pool_.empty()) return false;
  bool added = false;
  for (int s : suspects_) {
    if (all_network_tests_failed(s) || !beyond_limits(s)) continue;
    std::vector<int> partners;
    for (const auto& t : tests_)
      if (t.spec.stage == Stage::attribution && t.spec.hosts[0] == s) partners.push_back(t.spec.hosts[1]);
    if (static_cast<int>(partners.size()) >= criteria_.confirm) continue;
    // The next healthy host it has not been tested beside.
    const auto start = std::ranges::find(pool_, partners.back()) - pool_.begin();
    for (std::size_t i = 1; i <= pool_.size(); ++i) {
      const int p = pool_[(static_cast<std::size_t>(start) + i) % pool_.size()];
      if (contains(partners, p)) continue;
      add_test(Stage::attribution, {s, p});
      added = true;
      break;
    }
  }
  return added;
}

Floor Search::make_floor(Stage stage, Metric metric, const std::vector<int>& hosts) const {
  Floor f;
  f.stage = stage;
  f.metric = metric;
  std::vector<double> scores;
  for (int h : hosts)
    if (auto s = score(h, metric, network(stage))) scores.push_back(*s);
  f.hosts = static_cast<int>(scores.size());
  if (f.hosts >= criteria_.min_fleet) {
    f.fleet_median = median_of(scores);
    // The spread is the fleet's noise, not the bad hosts' distance: the MAD of the scores within
    // the tolerance band around the median (all of them when fewer than min_fleet are).
    const double tol = higher_is_better(metric) ? criteria_.busbw_tolerance : criteria_.latency_tolerance;
    std::vector<double> band;
    for (double v : scores)
      if (std::fabs(v - *f.fleet_median) <= tol * *f.fleet_median) band.push_back(v);
    f.fleet_mad = mad_of(static_cast<int>(band.size()) >= criteria_.min_fleet ? band : scores);
    const double spread = criteria_.mad_k * 1.4826 * *f.fleet_mad;
    if (higher_is_better(metric)) {
      f.relative = *f.fleet_median - std::max(criteria_.busbw_tolerance * *f.fleet_median, spread);
    } else {
      f.relative = *f.fleet_median + std::max(criteria_.latency_tolerance * *f.fleet_median, spread);
    }
  }
  if (network(stage)) f.absolute = higher_is_better(metric) ? criteria_.expect_busbw_gbps : criteria_.expect_latency_us;
  if (f.relative && f.absolute) {
    f.value = higher_is_better(metric) ? std::max(*f.relative, *f.absolute) : std::min(*f.relative, *f.absolute);
  } else {
    f.value = f.relative ? f.relative : f.absolute;
  }
  return f;
}

void Search::conclude() {
  std::vector<int> solo_ok;
  for (int h = 0; h < n_; ++h)
    if (!excluded_[static_cast<std::size_t>(h)]) solo_ok.push_back(h);
  for (Stage stage : {Stage::solo, Stage::ring}) {
    for (Metric metric : {Metric::latency_us, Metric::busbw_gbps}) {
      if (!judged(criteria_, metric)) continue;
      Floor f = make_floor(stage, metric, stage == Stage::solo ? solo_ok : ring_hosts_);
      if (f.hosts > 0) floors_.push_back(f);
    }
  }

  for (int h = 0; h < n_; ++h) {
    HostResult& r = hosts_[static_cast<std::size_t>(h)];
    // Failures first: alone, or in every network test (the last one beside a healthy host).
    const TestRecord* solo = nullptr;
    const TestRecord* last_failed = nullptr;
    for (const auto& t : tests_) {
      if (!t.measurement || !contains(t.spec.hosts, h)) continue;
      if (t.spec.stage == Stage::solo) solo = &t;
      if (t.measurement->outcome != Outcome::ok) {
        last_failed = &t;
        r.implicating_tests.push_back(t.spec.id);
      }
    }
    if (solo && solo->measurement->outcome != Outcome::ok) {
      r.verdict = solo->measurement->outcome == Outcome::unreachable ? Verdict::unreachable : Verdict::failed;
      r.reason = solo->measurement->reason;
      continue;
    }
    const bool net_failed = all_network_tests_failed(h);
    if (net_failed) {
      r.verdict = last_failed->measurement->outcome == Outcome::unreachable ? Verdict::unreachable : Verdict::failed;
      r.reason = last_failed->measurement->reason;
      if (last_failed->spec.stage != Stage::attribution)
        r.reason += " (no host shown healthy to re-test beside: the pair is blamed)";
    }
    for (const Floor& f : floors_) {
      if (!f.value) continue;
      const auto s = score(h, f.metric, network(f.stage));
      if (!s) continue;
      Evidence e{f.stage, f.metric, *s, *f.value, beyond(f.metric, *s, *f.value)};
      r.evidence.push_back(e);
      if (!e.beyond || net_failed) continue;
      r.verdict = Verdict::slow;
      if (!r.reason.empty()) r.reason += "; ";
      r.reason += std::string(network(f.stage) ? "network " : "alone ") +
                  (f.metric == Metric::busbw_gbps ? "busbw below the floor" : "latency above the ceiling");
      for (const auto& t : tests_) {
        if (!t.measurement || t.measurement->outcome != Outcome::ok || !contains(t.spec.hosts, h)) continue;
        if (network(t.spec.stage) != network(f.stage)) continue;
        const auto v = value_of(*t.measurement, f.metric);
        if (v && beyond(f.metric, *v, *f.value) && !contains(r.implicating_tests, t.spec.id))
          r.implicating_tests.push_back(t.spec.id);
      }
    }
    if (r.verdict == Verdict::healthy) r.implicating_tests.clear();
    std::ranges::sort(r.implicating_tests);
  }
}

}  // namespace ccbench::screen
