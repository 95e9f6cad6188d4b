// The staged search of `ccbench screen` (docs/screen.md): which tests to run, in which rounds, and
// which hosts the results blame. Pure code: no MPI, no processes, no clock. The command runs the
// tests it asks for (src/cli/screen_command.cpp); the simulation (simulate.hpp) answers them from a
// model of hosts. Both drive the same Search.
//
//   stage solo         each host alone (its local path: NVLink / shared memory), one test per host;
//                      a host not yet clearly within or beyond the margin alone is tested alone
//                      again (up to Criteria::max_tests). A host that fails or cannot be reached
//                      alone is failed / unreachable, and stays out of the network stages.
//   stage ring         the remaining hosts in a ring, each pair of neighbours one test over the
//                      network: m tests for m hosts, in 2 rounds (3 when m is odd) when the
//                      tests may all run at once. A pair is as fast as its slower host, so the hosts
//                      whose best test is within a provisional floor form the pool ("shown healthy").
//   stage attribution  every host's evidence is its tests beside pool hosts. A host that fails every
//                      network test is re-tested beside a pool host (a hang there is conclusive);
//                      a host not yet clearly within or beyond the margin, or with fewer than
//                      Criteria::min_tests tests beside pool hosts, is re-tested beside a pool host
//                      it has not met, until it is clear or has max_tests.
//
// Judging (judge.hpp, docs/screen.md): a host's tests that count against the reference (the pool's
// tests among themselves) on a log scale, with the noise measured from the tests; blamed only
// beyond the margin (--tolerance) and significant at family-wise level alpha over all hosts and
// metrics (Holm). A metric whose noise exceeds the margin is "not judged". When given, an absolute
// floor judges the network tests too.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "screen/judge.hpp"

namespace ccbench::screen {

enum class Stage { solo, ring, attribution };
enum class Outcome { ok, failed, unreachable };  // of one test
// unjudged: neither shown healthy nor blamed on some metric (its tests too noisy, or bound by a busy
// host rather than the link): never written out as healthy unless the user says so.
enum class Verdict { healthy, slow, failed, unreachable, unjudged };  // of one host
enum class Metric { latency_us, busbw_gbps };                         // what a floor judges

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
  // Failed before any rank started, and not at a deadline (a launcher's transient error, e.g. two
  // mpiruns racing for one session folder): a solo test like that is run once more before the host
  // is called failed.
  bool retry = false;
  // The run's own host-load reading said its host was busy (core/host_load_note.hpp: other
  // processes on the ranks' cores, or steal): the test measured the host, not the link, and is
  // not evidence for or against any host. The note, as the run printed it.
  std::optional<std::string> host_busy;
};

struct Criteria {
  // Margins: a host is slow only when its tests beside healthy hosts are, on (geometric) average,
  // more than busbw_tolerance below the fleet's busbw, or more than latency_tolerance above the
  // fleet's small-message time (1.0: twice it), AND that is significant against the noise the
  // tests measured, at family-wise level alpha over every host and metric judged (Holm). A metric
  // whose noise is too large to tell a host at the margin from a healthy one is "not judged".
  double busbw_tolerance = 0.2;
  double latency_tolerance = 1.0;
  double alpha = 0.05;
  // Which metrics are judged (both by default). Others are measured and recorded only.
  bool judge_busbw = true;
  bool judge_latency = true;
  // Fewer hosts than this shown healthy: no fleet to compare with (one bad host would move it).
  int min_fleet = 3;
  // Tests beside hosts shown healthy a host needs before it may be blamed, and the most it gets:
  // a host that is neither clearly within the margin nor clearly beyond it is re-tested (beside a
  // healthy host it has not met, while there are any) until it is, or until max_tests.
  int min_tests = 2;
  int max_tests = 4;
  // Absolute floors of the network tests (pairs), when known.
  std::optional<double> expect_busbw_gbps;
  std::optional<double> expect_latency_us;
};

// What one metric of one stage was judged against.
struct Floor {
  Stage stage = Stage::ring;  // ring: the network floor (ring and attribution tests)
  Metric metric = Metric::busbw_gbps;
  int hosts = 0;                       // hosts shown healthy (whose tests together are the reference)
  int reference_tests = 0;             // tests among those hosts
  std::optional<double> fleet_median;  // median of the reference tests
  std::optional<double> noise;         // per-test noise: pooled SD of ln(value) (about the CV)
  std::optional<double> noise_df;      // its degrees of freedom
  std::optional<double> relative;      // the margin: fleet_median x (1 - tolerance), or x (1 + tolerance)
  std::optional<double> absolute;      // given
  std::optional<double> value;         // the stricter of the two
  // False when even max_tests tests per host could not tell a host at the margin from a healthy
  // one (noise beyond the margin): its hosts are "not judged" unless the evidence is overwhelming.
  bool judged = true;
  // Hosts beside the pool that beat the fleet's level by more than the margin, significantly: no
  // healthy host can, so the level came from slow tests (a slow host's pairs were the pool's only
  // evidence, the others' having run on a busy host), nor can a test on a busy host, so the hosts
  // of such a test count too. Any such host: judged is false.
  int hosts_above_level = 0;
  // A host in every test of the stage that counted (the others' tests ran on a busy host): nothing
  // measured tells it from the fleet, whose level is then its own. Set: judged is false.
  std::optional<int> host_in_every_test;
};

struct Evidence {
  Stage stage = Stage::ring;
  Metric metric = Metric::busbw_gbps;
  double measured = 0;            // geometric mean of the tests that count (the best test where none does)
  std::optional<double> floor;    // Floor::value (none: every test of the stage ran on a busy host)
  int tests = 0;                  // tests that count: beside hosts shown healthy (solo: alone)
  std::optional<double> ratio;    // measured over the fleet's median
  std::optional<double> noise;    // standard error of ln(ratio): the host's own noise and the fleet's
  std::optional<double> p_value;  // one-sided, unadjusted: no worse than the fleet
  bool beyond = false;            // blamed on this metric (beyond the margin and significant, or the absolute floor)
  bool judged = true;             // false: too few tests or noise beyond the margin ("not judged")
  int hosts_above_level = 0;      // Floor::hosts_above_level: the fleet's level came from slow tests
  std::optional<int> host_in_every_test;  // Floor::host_in_every_test
  int host_busy_tests = 0;  // the host's tests of this stage and metric that ran on a busy host (not counted)
  std::string host_busy;    // the last such test's host-load note
};

struct HostResult {
  Verdict verdict = Verdict::healthy;
  std::string reason;  // failed / unreachable: why; slow: which metric (unjudged: Evidence says)
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
  // One metric of one stage: the reference and each host's judgement (before Holm).
  struct MetricState {
    Stage stage = Stage::ring;
    Metric metric = Metric::busbw_gbps;
    std::optional<Reference> reference;
    bool judged = true;                     // see Floor::judged
    int hosts_above_level = 0;              // see Floor::hosts_above_level
    std::optional<int> host_in_every_test;  // see Floor::host_in_every_test
    std::vector<std::optional<HostJudgement>> hosts;
  };
  void plan_solo();
  void plan_ring();
  void plan_attribution();
  // The ring's tests that ran on a busy host, once more, while too few hosts are shown healthy to
  // form a pool because of them, or a ring host has no ring test that counted, and their hosts have
  // budget left (max_tests). False: none to rerun.
  bool plan_busy_ring_again();
  bool plan_repeats(bool network_stage);  // false: nothing more to test
  // Provisional floor/ceiling of a stage's scores (upper/lower quartile -/+ the tolerance, or the
  // absolute one): who is a suspect, i.e. not part of the reference.
  std::vector<std::optional<double>> provisional_limits(bool network_stage, const std::vector<int>& hosts) const;
  // The pools by metric (index: busbw 0, latency 1): the hosts within that metric's provisional
  // floor. A host noisy in one metric still serves as a reference for the other.
  std::array<std::vector<bool>, 2> make_pools(bool network_stage, const std::vector<int>& hosts) const;
  void conclude();
  std::vector<TestSpec> take_round();
  int add_test(Stage stage, std::vector<int> hosts);
  // The host's best value of `metric` over its ok tests of the given stages (nullopt: none).
  std::optional<double> score(int host, Metric metric, bool network) const;
  // ln(value) of the host's ok tests that count: solo, its own; network, those whose other hosts
  // are all in the pool.
  std::vector<double> evidence_logs(int host, Metric metric, bool network) const;
  bool met(int a, int b) const;  // a network test of both
  std::vector<int> stage_hosts(bool network) const;
  const std::vector<bool>& pool_of(bool network, Metric metric) const;
  MetricState judge_metric(Stage stage, Metric metric) const;
  double margin_log(Metric metric) const;
  int hypotheses() const;         // the most hosts x metrics the family can hold (Bonferroni level)
  double alpha_per_look() const;  // the family-wise level split over a host's looks (min_tests ... max_tests)
  bool all_network_tests_failed(int host) const;
  // The host's ok tests of the stage that measured `metric` on a busy host (Measurement::host_busy);
  // beside_pool: only those whose other hosts are all in the metric's pool (they use up the
  // host's max_tests as a test that counts would).
  std::vector<int> host_busy_tests(int host, Metric metric, bool network, bool beside_pool) const;

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
  std::vector<int> pool_;  // partners for re-tests: the busbw pool (else latency's), best first
  std::array<std::vector<bool>, 2> net_pool_, solo_pool_;  // by metric, by host (make_pools)
  std::vector<std::vector<int>> host_tests_;               // test ids by host
  std::vector<HostResult> hosts_;
  std::vector<Floor> floors_;
};

// Median and MAD (unscaled) of values; nullopt when empty.
std::optional<double> median_of(std::vector<double> values);
std::optional<double> mad_of(const std::vector<double>& values);

}  // namespace ccbench::screen
