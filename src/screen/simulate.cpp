#include "screen/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace ccbench::screen {
namespace {

enum class Health { healthy, slow, failed };

// Log-normal factor with mean 1 and the given coefficient of variation.
double noise(std::mt19937_64& rng, double cv) {
  if (cv <= 0) return 1.0;
  const double sigma = std::sqrt(std::log1p(cv * cv));
  std::normal_distribution<double> normal(-sigma * sigma / 2.0, sigma);
  return std::exp(normal(rng));
}

}  // namespace

SimulationResult simulate(const SimulationConfig& config) {
  const int n = config.hosts;
  if (n < 1 || config.slow_hosts < 0 || config.failed_hosts < 0 || config.slow_hosts + config.failed_hosts > n)
    throw std::invalid_argument("simulation: need 0 <= slow + failed <= hosts, hosts >= 1");
  std::mt19937_64 rng(config.seed);
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::ranges::shuffle(order, rng);
  std::vector<Health> health(static_cast<std::size_t>(n), Health::healthy);
  for (int i = 0; i < config.slow_hosts; ++i)
    health[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = Health::slow;
  for (int i = 0; i < config.failed_hosts; ++i)
    health[static_cast<std::size_t>(order[static_cast<std::size_t>(config.slow_hosts + i)])] = Health::failed;

  Search search(n, config.criteria, config.concurrency);
  SimulationResult result;
  // Every re-test counts for a host that needs it, so a host has at most max_tests + 1 tests alone
  // and is the needy side of at most 2 x max_tests + 1 network tests: past this bound the search
  // does not end (a fault, reported, not a hang of the harness).
  const std::size_t most_tests =
      static_cast<std::size_t>(n) * (3 * static_cast<std::size_t>(config.criteria.max_tests) + 5);
  // With every test of a round at once: alone 1 + max_tests + 1 rounds, the ring's 3, and one round
  // per re-test; 64 is far above that.
  const int most_rounds = config.concurrency == 0 ? 64 : static_cast<int>(most_tests);
  for (auto round = search.next_round(); !round.empty(); round = search.next_round()) {
    if (search.tests().size() > most_tests || search.rounds() > most_rounds)
      throw std::logic_error("simulation: the search did not end (" + std::to_string(search.tests().size()) +
                             " tests for " + std::to_string(n) + " hosts)");
    double longest = 0;
    for (const TestSpec& t : round) {
      Measurement m;
      const auto h = [&](int host) { return health[static_cast<std::size_t>(host)]; };
      const bool failed = std::ranges::any_of(t.hosts, [&](int host) { return h(host) == Health::failed; });
      double seconds = config.launch_s + config.per_host_s * static_cast<double>(t.hosts.size());
      if (failed) {
        m.outcome = Outcome::failed;
        m.reason = "timeout (simulated hang)";
        seconds += config.watchdog_s;
      } else if (t.stage == Stage::solo) {
        m.busbw_gbps = config.solo_busbw_gbps * noise(rng, config.busbw_cv);
        m.latency_us = config.solo_latency_us * noise(rng, config.latency_cv);
        seconds += config.measure_s;
      } else {
        const bool slow = std::ranges::any_of(t.hosts, [&](int host) { return h(host) == Health::slow; });
        m.busbw_gbps = config.busbw_gbps * (slow ? config.slowdown : 1.0) * noise(rng, config.busbw_cv);
        m.latency_us = config.latency_us * noise(rng, config.latency_cv);
        seconds += config.measure_s;
      }
      longest = std::max(longest, seconds);
      search.record(t.id, std::move(m));
    }
    result.wall_s += longest;
  }
  result.rounds = search.rounds();
  result.tests = static_cast<int>(search.tests().size());
  result.bad = config.slow_hosts + config.failed_hosts;
  for (int i = 0; i < n; ++i) {
    const bool bad = health[static_cast<std::size_t>(i)] != Health::healthy;
    // Blamed: slow, failed or unreachable. An unjudged host is neither blamed nor cleared: a bad
    // one counts as missed (not found), a healthy one is counted apart.
    const Verdict v = search.hosts()[static_cast<std::size_t>(i)].verdict;
    const bool blamed = v != Verdict::healthy && v != Verdict::unjudged;
    if (v == Verdict::unjudged) ++result.unjudged;
    if (bad && !blamed) ++result.missed;
    if (!bad && blamed) ++result.false_blamed;
  }
  return result;
}

}  // namespace ccbench::screen
