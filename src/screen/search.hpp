// The staged search of `ccbench screen` (docs/screen.md): which tests to run, in which rounds, and
// which hosts the results blame. Pure code: no MPI, no processes, no clock. The command runs the
// tests it asks for (src/cli/screen_command.cpp); the simulation (simulate.hpp) answers them from a
// model of hosts. Both drive the same Search.
//
//   stage solo         each host alone (its local path: NVLink / shared memory), one test per host;
//                      a host beyond the provisional floor alone is tested alone once more (the
//                      best counts). A host that fails or cannot be reached alone is failed /
//                      unreachable, and stays out of the network stages.
//   stage ring         the remaining hosts in a ring, each pair of neighbours one test over the
//                      network: m tests for m hosts, in 2 rounds (3 when m is odd) when the
//                      tests may all run at once. A pair is as fast as its slower host, so a host's
//                      score is the best of its tests: a healthy host looks bad only when both
//                      neighbours are bad.
//   stage attribution  every suspect (score beyond the provisional floor, or every test failed)
//                      re-tested beside a host the ring showed healthy, so the blame lands on a host
//                      and not on a pair; a slow suspect still beyond after its re-test gets another
//                      one beside a different healthy host (Criteria::confirm), so one noisy test
//                      cannot blame a host.
//
// The floor is relative to the fleet (median and MAD of the hosts' scores for the same test) and,
// when given, absolute. Both small-message latency and bandwidth-bound busbw are judged.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::screen {

enum class Stage { solo, ring, attribution };
enum class Outcome { ok, failed, unreachable };             // of one test
enum class Verdict { healthy, slow, failed, unreachable };  // of one host
enum class Metric { latency_us, busbw_gbps };               // what a floor judges

std::string_view name(Stage stage);
std::string_view name(Outcome outcome);
std::string_view name(Verdict verdict);
std::string_view name(Metric metric);

struct TestSpec {
  int id = 0;     // 0, 1, 2, ... in the order the search asked for them
  int round = 0;  // tests of one round share no host and may run at once
  Stage stage = Stage::solo;
  std::vector<int> hosts;  // indices into the screen's host list
};

struct Measurement {
  Outcome outcome = Outcome::ok;
  // Absent when the test did not measure it (a failed test; busbw of a one-rank solo test).
  std::optional<double> latency_us;  // median time of the small message
  std::optional<double> busbw_gbps;  // busbw of the large message
  std::string reason;                // why, when not ok
};

struct Criteria {
  // Relative floor of busbw: median - max(tolerance * median, mad_k * 1.4826 * MAD) over the hosts'
  // scores; the latency ceiling likewise above the median. (Scores are a host's best test and a
  // suspect is re-tested before it is blamed, so 3 MADs keep false blame rare: docs/screen.md.)
  double busbw_tolerance = 0.2;
  double latency_tolerance = 1.0;
  double mad_k = 3.0;
  // Which metrics are judged (both by default; an emulated fabric without a latency model judges
  // busbw only: its small-message times measure CPU scheduling).
  bool judge_busbw = true;
  bool judge_latency = true;
  // Fewer hosts than this with a score: no relative floor (one bad host would move the median).
  int min_fleet = 3;
  // Re-tests beside healthy hosts a slow suspect gets at most; it is cleared by the first that
  // passes (a hang beside a healthy host is conclusive at the first).
  int confirm = 2;
  // Absolute floors of the network tests (pairs), when known.
  std::optional<double> expect_busbw_gbps;
  std::optional<double> expect_latency_us;
};

// The floor (busbw) or ceiling (latency) one metric of one stage was judged against.
struct Floor {
  Stage stage = Stage::ring;  // ring: the network floor (ring and attribution tests)
  Metric metric = Metric::busbw_gbps;
  int hosts = 0;  // hosts whose scores it was computed from
  std::optional<double> fleet_median;
  std::optional<double> fleet_mad;
  std::optional<double> relative;  // from the fleet
  std::optional<double> absolute;  // given
  std::optional<double> value;     // the one applied: the stricter of the two
};

struct Evidence {
  Stage stage = Stage::ring;
  Metric metric = Metric::busbw_gbps;
  double measured = 0;  // the host's score: its best test
  double floor = 0;     // Floor::value
  bool beyond = false;  // below the floor (busbw) or above the ceiling (latency)
};

struct HostResult {
  Verdict verdict = Verdict::healthy;
  std::string reason;  // failed / unreachable: why; slow: which metric
  std::vector<Evidence> evidence;
  std::vector<int> implicating_tests;  // failed tests, and tests beyond the floor, that include it
};

struct TestRecord {
  TestSpec spec;
  std::optional<Measurement> measurement;  // absent until recorded
};

class Search {
 public:
  // concurrency: most tests in one round (0 = no limit; tests of a round never share a host).
  Search(int hosts, Criteria criteria, int concurrency = 0);

  // The next round's tests (every test of the previous round must have been recorded); empty when
  // the search is over.
  std::vector<TestSpec> next_round();
  void record(int test_id, Measurement measurement);
  bool done() const { return stage_ == Phase::done; }

  // Valid once done().
  const std::vector<HostResult>& hosts() const { return hosts_; }
  const std::vector<Floor>& floors() const { return floors_; }
  const std::vector<TestRecord>& tests() const { return tests_; }
  int rounds() const { return rounds_; }

 private:
  enum class Phase { solo, ring, attribution, done };
  void plan_solo();
  void plan_ring();
  void plan_attribution();
  bool plan_confirmation();       // false: nothing more to test
  bool plan_solo_confirmation();  // likewise, for hosts beyond the provisional floor alone
  // Provisional floor/ceiling of a stage's scores (upper/lower quartile -/+ the tolerance, or the
  // absolute one): whom to re-test.
  std::vector<std::optional<double>> provisional_limits(bool network_stage, const std::vector<int>& hosts) const;
  bool beyond_provisional(int host, bool network_stage, const std::vector<std::optional<double>>& limits) const;
  bool beyond_limits(int host) const;
  void conclude();
  std::vector<TestSpec> take_round();
  int add_test(Stage stage, std::vector<int> hosts);
  // The host's best value of `metric` over its ok tests of the given stages (nullopt: none).
  std::optional<double> score(int host, Metric metric, bool network) const;
  Floor make_floor(Stage stage, Metric metric, const std::vector<int>& hosts) const;
  bool all_network_tests_failed(int host) const;

  int n_;
  Criteria criteria_;
  int concurrency_;
  Phase stage_ = Phase::solo;
  bool planned_ = false;
  std::vector<TestRecord> tests_;
  std::vector<int> pending_;  // test ids not yet handed out, in order
  int outstanding_ = 0;       // handed out, not yet recorded
  int rounds_ = 0;
  std::vector<bool> excluded_;  // failed or unreachable alone: out of the network stages
  std::vector<int> ring_hosts_;
  std::vector<int> suspects_;
  std::vector<int> pool_;                     // hosts the ring showed healthy, best first
  std::vector<std::optional<double>> limit_;  // provisional floor (busbw) and ceiling (latency)
  std::vector<HostResult> hosts_;
  std::vector<Floor> floors_;
};

// Median and MAD (unscaled) of values; nullopt when empty.
std::optional<double> median_of(std::vector<double> values);
std::optional<double> mad_of(const std::vector<double>& values);

}  // namespace ccbench::screen
