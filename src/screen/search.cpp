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
    case Verdict::unjudged:
      return "unjudged";
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

// A test that is evidence: it ran, and not on a busy host (a host-bound test measured the CPU it
// waited for, not the link: 0.018 GB/s on 400 Mbit/s links beside a build, slow and healthy alike).
bool counts(const Measurement& m) { return m.outcome == Outcome::ok && !m.host_busy; }

}  // namespace

Search::Search(int hosts, Criteria criteria, int concurrency)
    : n_(hosts), criteria_(criteria), concurrency_(concurrency), excluded_(static_cast<std::size_t>(hosts), false) {
  if (hosts < 1) throw std::invalid_argument("a screen needs at least one host");
  if (concurrency < 0) throw std::invalid_argument("concurrency must be 0 (no limit) or more");
  hosts_.resize(static_cast<std::size_t>(hosts));
  host_tests_.resize(static_cast<std::size_t>(hosts));
}

int Search::add_test(Stage stage, std::vector<int> hosts) {
  TestRecord record;
  record.spec.id = static_cast<int>(tests_.size());
  record.spec.stage = stage;
  record.spec.hosts = std::move(hosts);
  for (int h : record.spec.hosts) host_tests_[static_cast<std::size_t>(h)].push_back(record.spec.id);
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
        if (solo_pool_[0].empty()) {
          bool retried = false;
          for (int h = 0; h < n_; ++h) {
            const auto& ids = host_tests_[static_cast<std::size_t>(h)];
            const auto& m = tests_[static_cast<std::size_t>(ids.front())].measurement;
            if (ids.size() == 1 && m && m->outcome == Outcome::failed && m->retry) {
              add_test(Stage::solo, {h});
              retried = true;
            }
          }
          if (retried) continue;
          solo_pool_ = make_pools(false, stage_hosts(false));
        }
        if (plan_repeats(false)) continue;
        stage_ = Phase::ring;
        plan_ring();
        continue;
      case Phase::ring:
        if (plan_busy_ring_again()) continue;
        stage_ = Phase::attribution;
        plan_attribution();
        continue;
      case Phase::attribution:
        if (plan_repeats(true)) continue;
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
  excluded_.assign(static_cast<std::size_t>(n_), true);
  for (int h : stage_hosts(false)) excluded_[static_cast<std::size_t>(h)] = false;
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
    if (network(t.spec.stage) != network_tests || !t.measurement || !counts(*t.measurement)) continue;
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

const std::vector<bool>& Search::pool_of(bool network_stage, Metric metric) const {
  const std::size_t k = metric == Metric::busbw_gbps ? 0 : 1;
  return network_stage ? net_pool_[k] : solo_pool_[k];
}

std::array<std::vector<bool>, 2> Search::make_pools(bool network_stage, const std::vector<int>& hosts) const {
  const auto limits = provisional_limits(network_stage, hosts);
  std::array<std::vector<bool>, 2> pools;
  const Metric metrics[] = {Metric::busbw_gbps, Metric::latency_us};
  for (std::size_t k = 0; k < 2; ++k) {
    pools[k].assign(static_cast<std::size_t>(n_), false);
    for (int h : hosts) {
      if (network_stage && all_network_tests_failed(h)) continue;
      const auto s = score(h, metrics[k], network_stage);
      pools[k][static_cast<std::size_t>(h)] = s && !(limits[k] && beyond(metrics[k], *s, *limits[k]));
    }
  }
  return pools;
}

bool Search::plan_busy_ring_again() {
  const auto pools = make_pools(true, ring_hosts_);
  bool short_of_pool = false;
  for (std::size_t k = 0; k < 2; ++k) {
    const Metric metric = k == 0 ? Metric::busbw_gbps : Metric::latency_us;
    if (!judged(criteria_, metric)) continue;
    int hosts = 0;
    for (int h : ring_hosts_) hosts += pools[k][static_cast<std::size_t>(h)];
    short_of_pool |= hosts < criteria_.min_fleet;
    // A host none of whose ring tests counted: the pool is left to hosts whose only evidence may be
    // a slow partner's (its pairs the only ones that counted), so the busy pairs run again.
    for (int h : ring_hosts_) short_of_pool |= !all_network_tests_failed(h) && !score(h, metric, true);
  }
  if (!short_of_pool) return false;
  // Each host's network tests on a busy host so far: a rerun uses up its budget as a re-test would.
  std::vector<int> busy(static_cast<std::size_t>(n_), 0);
  for (const auto& t : tests_) {
    if (!network(t.spec.stage) || !t.measurement || !t.measurement->host_busy) continue;
    for (int h : t.spec.hosts) ++busy[static_cast<std::size_t>(h)];
  }
  std::vector<std::vector<int>> pairs, again;  // every ring pair; those whose latest test was busy
  for (auto it = tests_.rbegin(); it != tests_.rend(); ++it) {
    if (it->spec.stage != Stage::ring || std::ranges::find(pairs, it->spec.hosts) != pairs.end()) continue;
    pairs.push_back(it->spec.hosts);
    if (it->measurement && it->measurement->outcome == Outcome::ok && it->measurement->host_busy)
      again.push_back(it->spec.hosts);
  }
  bool added = false;
  for (auto it = again.rbegin(); it != again.rend(); ++it) {  // in the ring's order (add_test grows tests_)
    if (std::ranges::any_of(*it, [&](int h) { return busy[static_cast<std::size_t>(h)] >= criteria_.max_tests; }))
      continue;
    add_test(Stage::ring, *it);
    added = true;
  }
  return added;
}

void Search::plan_attribution() {
  net_pool_ = make_pools(true, ring_hosts_);
  const auto& partners = criteria_.judge_busbw ? net_pool_[0] : net_pool_[1];
  std::vector<std::pair<double, int>> healthy;  // (busbw score or -latency, host)
  for (int h : ring_hosts_) {
    const bool in_all = (!criteria_.judge_busbw || net_pool_[0][static_cast<std::size_t>(h)]) &&
                        (!criteria_.judge_latency || net_pool_[1][static_cast<std::size_t>(h)]);
    if (all_network_tests_failed(h) || !in_all) suspects_.push_back(h);
    if (!partners[static_cast<std::size_t>(h)]) continue;
    const auto bw = score(h, Metric::busbw_gbps, true);
    const auto lat = score(h, Metric::latency_us, true);
    healthy.emplace_back(bw ? *bw : (lat ? -*lat : 0.0), h);
  }
  std::ranges::stable_sort(healthy, [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [value, h] : healthy) pool_.push_back(h);
  if (pool_.empty()) return;
  // A host that failed every network test: once beside a healthy host (the best first).
  std::size_t next = 0;
  for (int s : suspects_)
    if (all_network_tests_failed(s)) add_test(Stage::attribution, {s, pool_[next++ % pool_.size()]});
  plan_repeats(true);
}

// Provisional floor, only to choose the pool (the reference): stricter than the margin (from the
// upper quartile of the scores, not the median), so a bad host hiding in a bad half of the fleet
// does not become a reference.
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

std::vector<int> Search::stage_hosts(bool network_stage) const {
  if (network_stage) return ring_hosts_;
  std::vector<int> ok;
  for (int h = 0; h < n_; ++h) {
    const TestRecord* last = nullptr;  // the last test alone decides (a retried one)
    for (int id : host_tests_[static_cast<std::size_t>(h)])
      if (tests_[static_cast<std::size_t>(id)].spec.stage == Stage::solo) last = &tests_[static_cast<std::size_t>(id)];
    if (!last || !last->measurement || last->measurement->outcome == Outcome::ok) ok.push_back(h);
  }
  return ok;
}

bool Search::met(int a, int b) const {
  return std::ranges::any_of(host_tests_[static_cast<std::size_t>(a)], [&](int id) {
    const auto& t = tests_[static_cast<std::size_t>(id)];
    return network(t.spec.stage) && contains(t.spec.hosts, b);
  });
}

std::vector<double> Search::evidence_logs(int host, Metric metric, bool network_stage) const {
  const auto& pool = pool_of(network_stage, metric);
  std::vector<double> logs;
  for (int id : host_tests_[static_cast<std::size_t>(host)]) {
    const auto& t = tests_[static_cast<std::size_t>(id)];
    if (network(t.spec.stage) != network_stage || !t.measurement || !counts(*t.measurement)) continue;
    const bool beside_pool = std::ranges::all_of(
        t.spec.hosts, [&](int h) { return h == host || (!pool.empty() && pool[static_cast<std::size_t>(h)]); });
    if (!beside_pool) continue;
    const auto v = value_of(*t.measurement, metric);
    if (v && *v > 0) logs.push_back(std::log(*v));
  }
  return logs;
}

std::vector<int> Search::host_busy_tests(int host, Metric metric, bool network_stage, bool beside_pool) const {
  const auto& pool = pool_of(network_stage, metric);
  std::vector<int> ids;
  for (int id : host_tests_[static_cast<std::size_t>(host)]) {
    const auto& t = tests_[static_cast<std::size_t>(id)];
    if (network(t.spec.stage) != network_stage || !t.measurement || t.measurement->outcome != Outcome::ok ||
        !t.measurement->host_busy)
      continue;
    if (const auto v = value_of(*t.measurement, metric); !v || *v <= 0) continue;
    if (beside_pool && !std::ranges::all_of(t.spec.hosts, [&](int h) {
          return h == host || (!pool.empty() && pool[static_cast<std::size_t>(h)]);
        }))
      continue;
    ids.push_back(id);
  }
  return ids;
}

double Search::margin_log(Metric metric) const {
  return higher_is_better(metric) ? -std::log1p(-criteria_.busbw_tolerance) : std::log1p(criteria_.latency_tolerance);
}

int Search::hypotheses() const {
  const int metrics = static_cast<int>(criteria_.judge_busbw) + static_cast<int>(criteria_.judge_latency);
  return std::max(1, 2 * metrics * n_);  // both stages (alone, network), as conclude's family
}

double Search::alpha_per_look() const {
  // A host is looked at after each test from min_tests to max_tests, and one blamed at a look is
  // not tested further: each look may cross, so each gets alpha / looks (Bonferroni over looks) and
  // the family-wise level over the whole screen stays alpha. At alpha per look, 7 of 100
  // all-healthy 256-host fleets blamed a healthy host (docs/screen.md, "Simulation").
  const int looks = std::max(1, criteria_.max_tests - std::max(1, criteria_.min_tests) + 1);
  return criteria_.alpha / looks;
}

namespace {
// Cleared: the one-sided 95% upper bound of how much worse than the fleet the host is stays within
// the margin. (Blame is held to the family-wise level instead; between the two the host is re-tested.)
bool cleared(const HostJudgement& j, double margin) { return j.worse_log + t_critical(0.05, j.df) * j.se_log < margin; }
}  // namespace

Search::MetricState Search::judge_metric(Stage stage, Metric metric) const {
  const bool net = network(stage);
  MetricState m;
  m.stage = stage;
  m.metric = metric;
  m.hosts.resize(static_cast<std::size_t>(n_));
  const auto& pool = pool_of(net, metric);
  const auto hosts = stage_hosts(net);
  int pool_hosts = 0;
  for (int h : hosts) pool_hosts += !pool.empty() && pool[static_cast<std::size_t>(h)];
  // The reference: tests whose hosts are all in the pool; the noise also pools the repeated tests of
  // the hosts outside it.
  std::vector<double> reference;
  std::vector<std::vector<double>> groups;
  std::vector<std::vector<double>> logs(static_cast<std::size_t>(n_));
  std::vector<bool> seen(tests_.size(), false);
  for (int h : hosts) {
    logs[static_cast<std::size_t>(h)] = evidence_logs(h, metric, net);
    const bool in_pool = !pool.empty() && pool[static_cast<std::size_t>(h)];
    if (!in_pool) {
      groups.push_back(logs[static_cast<std::size_t>(h)]);
      continue;
    }
    for (int id : host_tests_[static_cast<std::size_t>(h)]) {
      const auto& t = tests_[static_cast<std::size_t>(id)];
      if (seen[static_cast<std::size_t>(id)] || network(t.spec.stage) != net || !t.measurement ||
          !counts(*t.measurement))
        continue;
      if (!std::ranges::all_of(t.spec.hosts, [&](int x) { return pool[static_cast<std::size_t>(x)]; })) continue;
      seen[static_cast<std::size_t>(id)] = true;
      const auto v = value_of(*t.measurement, metric);
      if (v && *v > 0) reference.push_back(std::log(*v));
    }
  }
  if (pool_hosts >= criteria_.min_fleet) m.reference = make_reference(reference, groups);
  if (!m.reference) {
    m.judged = false;
    return m;
  }
  for (int h : hosts) {
    const auto& l = logs[static_cast<std::size_t>(h)];
    if (!l.empty()) m.hosts[static_cast<std::size_t>(h)] = judge_host(*m.reference, l, higher_is_better(metric));
  }
  // Not judged: even max_tests tests at the fleet's noise could not clear a host level with the
  // fleet (its one-sided 95% bound would pass the margin).
  HostJudgement level;
  level.df = m.reference->df;
  level.se_log = std::sqrt(m.reference->sigma_log * m.reference->sigma_log / criteria_.max_tests +
                           m.reference->level_se_log * m.reference->level_se_log);
  m.judged = cleared(level, margin_log(metric));
  // No healthy host beats the fleet by more than the margin: one that does, significantly, says the
  // level was set by slow tests, and nothing judged against it is a verdict.
  const double t_family = t_critical(alpha_per_look() / hypotheses(), m.reference->df);
  std::vector<bool> above(static_cast<std::size_t>(n_), false);
  for (int h : hosts)
    if (const auto& j = m.hosts[static_cast<std::size_t>(h)]) {
      const double better_log = -j->worse_log;
      above[static_cast<std::size_t>(h)] = better_log > margin_log(metric) &&
                                           better_log > t_critical(alpha_per_look() / hypotheses(), j->df) * j->se_log;
    }
  // A test on a busy host is no evidence against its hosts (load only slows a test), but one that
  // beats the level by more than the margin all the same says as much as a healthy host above it:
  // the level was set by slow tests. Two slow hosts of six put four of the six ring tests at their
  // rate; with both fast pairs' tests busy, the reference was the four slow ones and the screen
  // cleared every host (e2e.screen.two_slow).
  const double one_test_se_log = std::sqrt(m.reference->sigma_log * m.reference->sigma_log +
                                           m.reference->level_se_log * m.reference->level_se_log);
  for (const auto& t : tests_) {
    if (network(t.spec.stage) != net || !t.measurement || t.measurement->outcome != Outcome::ok ||
        !t.measurement->host_busy)
      continue;
    const auto v = value_of(*t.measurement, metric);
    if (!v || *v <= 0) continue;
    const double better_log =
        higher_is_better(metric) ? std::log(*v) - m.reference->level_log : m.reference->level_log - std::log(*v);
    if (better_log > margin_log(metric) && better_log > t_family * one_test_se_log)
      for (int h : t.spec.hosts) above[static_cast<std::size_t>(h)] = true;
  }
  m.hosts_above_level = static_cast<int>(std::ranges::count(above, true));
  // Every test that counted had one host in it: its pairs are the whole evidence, so a slow host
  // there is the fleet's level and cleared at ratio 1 (e2e.slurm.screen on a machine busy in bursts).
  std::vector<int> in_counted(static_cast<std::size_t>(n_), 0);
  int counted = 0;
  for (const auto& t : tests_) {
    if (network(t.spec.stage) != net || !t.measurement || !counts(*t.measurement)) continue;
    if (const auto v = value_of(*t.measurement, metric); !v || *v <= 0) continue;
    ++counted;
    for (int h : t.spec.hosts) ++in_counted[static_cast<std::size_t>(h)];
  }
  if (net && counted > 0 && n_ > 2)
    for (int h = 0; h < n_; ++h)
      if (in_counted[static_cast<std::size_t>(h)] == counted) m.host_in_every_test = h;
  if (m.hosts_above_level > 0 || m.host_in_every_test) m.judged = false;
  return m;
}

// Hosts neither cleared nor blamed get another test, while they have fewer than max_tests that
// count: alone (solo), or beside a pool host they have not met (network; two such pool hosts are
// paired with each other, one test serving both). A network re-test's partner is in the pool of
// every metric the host needs it for, so each re-test counts for them and the search ends (a
// partner outside one metric's pool adds nothing there: the same useless pair, picked again every
// round, never ended a 1024-host search).
bool Search::plan_repeats(bool network_stage) {
  const Stage stage = network_stage ? Stage::ring : Stage::solo;
  if (network_stage && pool_.empty()) return false;
  std::vector<bool> need(static_cast<std::size_t>(n_), false);
  std::array<std::vector<bool>, 2> need_metric;  // by metric (index: busbw 0, latency 1), by host
  for (Metric metric : {Metric::busbw_gbps, Metric::latency_us}) {
    auto& needs = need_metric[metric == Metric::busbw_gbps ? 0 : 1];
    needs.assign(static_cast<std::size_t>(n_), false);
    if (!judged(criteria_, metric)) continue;
    const MetricState m = judge_metric(stage, metric);
    // Repeats cannot help noise beyond the margin; they can give a level that is not one host's.
    if (!m.judged && !m.host_in_every_test && m.hosts_above_level == 0) continue;
    for (int h : stage_hosts(network_stage)) {
      if (network_stage && all_network_tests_failed(h)) continue;
      const auto& j = m.hosts[static_cast<std::size_t>(h)];
      const int tests = j ? j->tests : 0;
      // A test on a busy host beside the pool uses up the budget as one that counts would: a host
      // whose tests all land on a busy host is re-tested, but not forever.
      const int busy = static_cast<int>(host_busy_tests(h, metric, network_stage, true).size());
      if (tests + busy >= criteria_.max_tests) continue;
      bool needy = !j;
      if (j) {
        const double t = t_critical(alpha_per_look() / hypotheses(), j->df);
        const bool blamed =
            tests >= criteria_.min_tests && j->worse_log > margin_log(metric) && j->worse_log > t * j->se_log;
        needy = !blamed && !cleared(*j, margin_log(metric));
      }
      if (needy) need[static_cast<std::size_t>(h)] = needs[static_cast<std::size_t>(h)] = true;
    }
  }
  std::vector<bool> busy(static_cast<std::size_t>(n_), false);
  for (int id : pending_)
    for (int h : tests_[static_cast<std::size_t>(id)].spec.hosts) busy[static_cast<std::size_t>(h)] = true;
  const auto free = [&](int h) { return !busy[static_cast<std::size_t>(h)]; };
  bool added = false;
  if (!network_stage) {
    for (int h = 0; h < n_; ++h)
      if (need[static_cast<std::size_t>(h)] && free(h)) {
        add_test(Stage::solo, {h});
        added = true;
      }
    return added;
  }
  // p is in the pool of every metric h needs a re-test for.
  const auto counts_for = [&](int h, int p) {
    for (std::size_t k = 0; k < 2; ++k) {
      const auto& pool = net_pool_[k];
      if (need_metric[k][static_cast<std::size_t>(h)] && (pool.empty() || !pool[static_cast<std::size_t>(p)]))
        return false;
    }
    return true;
  };
  auto pair = [&](int h) {
    // A free partner: a needy pool host first, then one h has not met, then the pool's order.
    int best = -1, best_rank = 4;
    for (int p : pool_) {
      if (p == h || !free(p) || !counts_for(h, p)) continue;
      const int rank = (need[static_cast<std::size_t>(p)] ? 0 : 2) + (met(h, p) ? 1 : 0);
      if (rank < best_rank) best = p, best_rank = rank;
      if (rank == 0) break;
    }
    if (best < 0) return;
    add_test(Stage::attribution, {h, best});
    busy[static_cast<std::size_t>(h)] = busy[static_cast<std::size_t>(best)] = true;
    added = true;
  };
  std::vector<bool> partner(static_cast<std::size_t>(n_), false);
  for (int p : pool_) partner[static_cast<std::size_t>(p)] = true;
  for (int h : ring_hosts_)
    if (need[static_cast<std::size_t>(h)] && free(h) && !partner[static_cast<std::size_t>(h)]) pair(h);
  for (int p : pool_)
    if (need[static_cast<std::size_t>(p)] && free(p)) pair(p);
  return added;
}

void Search::conclude() {
  std::vector<MetricState> states;
  for (Stage stage : {Stage::solo, Stage::ring})
    for (Metric metric : {Metric::latency_us, Metric::busbw_gbps})
      if (judged(criteria_, metric)) states.push_back(judge_metric(stage, metric));

  // The family (Holm): every host and metric judged against a reference, also the hosts cleared
  // after one test. Only hosts with min_tests may be blamed, but every host was looked at: a family
  // of only the re-tested hosts (the suspicious few) let Holm's first step be alpha / (a few)
  // instead of alpha / (every host), and healthy hosts were blamed in 5-15% of simulated fleets.
  std::vector<double> p_values;
  std::vector<std::pair<std::size_t, int>> index;  // (state, host)
  for (std::size_t k = 0; k < states.size(); ++k)
    for (int h = 0; h < n_; ++h)
      if (const auto& j = states[k].hosts[static_cast<std::size_t>(h)]; states[k].judged && j) {
        p_values.push_back(j->p_value);
        index.emplace_back(k, h);
      }
  const auto reject = holm_reject(p_values, alpha_per_look());
  std::vector<std::vector<bool>> significant(states.size(), std::vector<bool>(static_cast<std::size_t>(n_), false));
  for (std::size_t i = 0; i < index.size(); ++i) {
    const auto [k, h] = index[i];
    significant[k][static_cast<std::size_t>(h)] =
        reject[i] && states[k].hosts[static_cast<std::size_t>(h)]->tests >= criteria_.min_tests;
  }

  for (const MetricState& m : states) {
    Floor f;
    f.stage = m.stage;
    f.metric = m.metric;
    const auto& pool = pool_of(network(m.stage), m.metric);
    for (int h : stage_hosts(network(m.stage))) f.hosts += !pool.empty() && pool[static_cast<std::size_t>(h)];
    if (m.reference) {
      const double level = std::exp(m.reference->level_log);
      f.reference_tests = m.reference->tests;
      f.fleet_median = level;
      f.noise = m.reference->sigma_log;
      f.noise_df = m.reference->df;
      f.relative = higher_is_better(m.metric) ? level * (1.0 - criteria_.busbw_tolerance)
                                              : level * (1.0 + criteria_.latency_tolerance);
    }
    f.judged = m.judged;
    f.hosts_above_level = m.hosts_above_level;
    f.host_in_every_test = m.host_in_every_test;
    if (network(m.stage))
      f.absolute = higher_is_better(m.metric) ? criteria_.expect_busbw_gbps : criteria_.expect_latency_us;
    if (f.relative && f.absolute) {
      f.value = higher_is_better(m.metric) ? std::max(*f.relative, *f.absolute) : std::min(*f.relative, *f.absolute);
    } else {
      f.value = f.relative ? f.relative : f.absolute;
    }
    if (m.reference || f.absolute) floors_.push_back(f);
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
    for (std::size_t k = 0; k < states.size(); ++k) {
      const MetricState& m = states[k];
      const Floor* f = nullptr;
      for (const Floor& x : floors_)
        if (x.stage == m.stage && x.metric == m.metric) f = &x;
      const bool net = network(m.stage);
      const auto best = score(h, m.metric, net);
      const auto busy = host_busy_tests(h, m.metric, net, false);
      const bool judgeable = f && f->value && best;
      if (!judgeable && busy.empty()) continue;  // nothing to judge against (no fleet, no absolute floor)
      Evidence e;
      e.stage = m.stage;
      e.metric = m.metric;
      if (f && f->value) e.floor = *f->value;
      if (f) e.hosts_above_level = f->hosts_above_level, e.host_in_every_test = f->host_in_every_test;
      e.judged = false;
      e.host_busy_tests = static_cast<int>(busy.size());
      if (!busy.empty()) e.host_busy = *tests_[static_cast<std::size_t>(busy.back())].measurement->host_busy;
      if (!judgeable) {
        // Every test of the stage ran on a busy host, or so many did that no floor was left: what
        // they measured, judged neither way.
        double sum_log = 0;
        for (int id : busy) sum_log += std::log(*value_of(*tests_[static_cast<std::size_t>(id)].measurement, m.metric));
        e.measured = best ? *best : std::exp(sum_log / static_cast<double>(busy.size()));
        r.evidence.push_back(e);
        continue;
      }
      e.measured = *best;
      bool relative_beyond = false;
      if (const auto& j = m.hosts[static_cast<std::size_t>(h)]; j && m.reference) {
        e.measured = std::exp(m.reference->level_log) * j->ratio;
        e.tests = j->tests;
        e.ratio = j->ratio;
        e.noise = j->se_log;
        e.p_value = j->p_value;
        relative_beyond = significant[k][static_cast<std::size_t>(h)] && j->worse_log > margin_log(m.metric);
        e.judged = m.judged && (relative_beyond || cleared(*j, margin_log(m.metric)));
      }
      // The absolute floor: the host's best test beyond it (a pair is as fast as its slower host).
      const bool absolute_beyond = net && f->absolute && beyond(m.metric, *best, *f->absolute);
      if (absolute_beyond) e.judged = true;
      e.beyond = relative_beyond || absolute_beyond;
      r.evidence.push_back(e);
      if (!e.beyond || net_failed) continue;
      r.verdict = Verdict::slow;
      if (!r.reason.empty()) r.reason += "; ";
      r.reason += std::string(net ? "network " : "alone ") +
                  (m.metric == Metric::busbw_gbps ? "busbw below the floor" : "latency above the ceiling");
      for (const auto& t : tests_) {
        if (!t.measurement || t.measurement->outcome != Outcome::ok || !contains(t.spec.hosts, h)) continue;
        if (network(t.spec.stage) != net) continue;
        const auto v = value_of(*t.measurement, m.metric);
        if (v && beyond(m.metric, *v, *e.floor) && !contains(r.implicating_tests, t.spec.id))
          r.implicating_tests.push_back(t.spec.id);
      }
    }
    // A metric not judged (noise, or tests bound by a busy host) is not a clean bill: the host was
    // neither shown healthy nor blamed on it. Its implicating tests are the ones on a busy host.
    if (r.verdict == Verdict::healthy && std::ranges::any_of(r.evidence, [](const Evidence& e) { return !e.judged; })) {
      r.verdict = Verdict::unjudged;
      r.implicating_tests.clear();
      for (const auto& t : tests_)
        if (t.measurement && t.measurement->host_busy && contains(t.spec.hosts, h))
          r.implicating_tests.push_back(t.spec.id);
    }
    if (r.verdict == Verdict::healthy) r.implicating_tests.clear();
    std::ranges::sort(r.implicating_tests);
  }
}

}  // namespace ccbench::screen
