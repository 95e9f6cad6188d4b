// The staged search against hand-built fleets: which tests, how many rounds, who is blamed, and
// the floors (hand-computed).
#include "screen/search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

namespace ccbench::screen {
namespace {

// Per-host link busbw factor (1 = healthy) and state; a pair runs at its slower host's rate.
struct Fleet {
  std::vector<double> busbw;    // pair busbw of the host's link (GB/s)
  std::vector<double> latency;  // small-message time the host adds (us)
  std::set<int> hang, unreachable;
};

Search run(const Fleet& f, Criteria c = {}, int concurrency = 0, std::vector<std::vector<TestSpec>>* rounds = nullptr) {
  Search s(static_cast<int>(f.busbw.size()), c, concurrency);
  for (auto round = s.next_round(); !round.empty(); round = s.next_round()) {
    if (rounds) rounds->push_back(round);
    for (const auto& t : round) {
      Measurement m;
      bool hang = false, away = false;
      double bw = 1e9, lat = 0;
      for (int h : t.hosts) {
        hang |= f.hang.count(h) > 0;
        away |= f.unreachable.count(h) > 0;
        bw = std::min(bw, f.busbw[static_cast<std::size_t>(h)]);
        lat = std::max(lat, f.latency[static_cast<std::size_t>(h)]);
      }
      if (away) {
        m.outcome = Outcome::unreachable;
        m.reason = "cannot reach host";
      } else if (hang) {
        m.outcome = Outcome::failed;
        m.reason = "timeout";
      } else {
        m.latency_us = lat;
        if (t.stage != Stage::solo) m.busbw_gbps = bw;  // one rank per host: solo has no busbw
      }
      s.record(t.id, m);
    }
  }
  return s;
}

Fleet healthy(int n) {
  return Fleet{std::vector<double>(static_cast<std::size_t>(n), 1.0),
               std::vector<double>(static_cast<std::size_t>(n), 10.0),
               {},
               {}};
}

std::vector<Verdict> verdicts(const Search& s) {
  std::vector<Verdict> v;
  for (const auto& h : s.hosts()) v.push_back(h.verdict);
  return v;
}

constexpr auto H = Verdict::healthy;
constexpr auto S = Verdict::slow;
constexpr auto F = Verdict::failed;
constexpr auto U = Verdict::unreachable;

TEST(ScreenSearch, AllHealthyBlamesNobodyIn6Plus6TestsAnd3Rounds) {
  std::vector<std::vector<TestSpec>> rounds;
  const Search s = run(healthy(6), {}, 0, &rounds);
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{H, H, H, H, H, H}));
  EXPECT_EQ(s.tests().size(), 12u);  // 6 alone, a ring of 6 pairs, nobody to re-test
  EXPECT_EQ(s.rounds(), 3);
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(rounds[1].size(), 3u);  // (0,1) (2,3) (4,5)
  EXPECT_EQ(rounds[1][0].hosts, (std::vector<int>{0, 1}));
  EXPECT_EQ(rounds[2][2].hosts, (std::vector<int>{5, 0}));
}

TEST(ScreenSearch, OneSlowLinkIsNamedWithItsEvidence) {
  Fleet f = healthy(6);
  f.busbw[3] = 0.55;
  const Search s = run(f);
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{H, H, H, S, H, H}));
  // Host 3's two ring tests are beside hosts the ring showed healthy (2 and 4 have a fast test with
  // their other neighbour): two tests that count, no noise, 45% below the fleet: no re-test needed.
  EXPECT_EQ(s.tests().size(), 12u);
  EXPECT_EQ(s.rounds(), 3);
  const HostResult& h = s.hosts()[3];
  EXPECT_EQ(h.reason, "network busbw below the floor");
  // Ring tests (2,3)=id 7 and (3,4)=id 10.
  EXPECT_EQ(h.implicating_tests, (std::vector<int>{7, 10}));
  bool found = false;
  for (const auto& e : h.evidence) {
    if (e.stage == Stage::ring && e.metric == Metric::busbw_gbps) {
      found = true;
      EXPECT_DOUBLE_EQ(e.measured, 0.55);
      EXPECT_DOUBLE_EQ(e.floor.value_or(0), 0.8);  // reference median 1: 1 x (1 - 0.2)
      EXPECT_EQ(e.tests, 2);
      EXPECT_NEAR(*e.ratio, 0.55, 1e-12);
      EXPECT_TRUE(e.beyond);
      EXPECT_TRUE(e.judged);
    }
  }
  EXPECT_TRUE(found);
}

TEST(ScreenSearch, TheFloorIsTheMarginBelowTheReferenceMedianWithItsMeasuredNoise) {
  Fleet f = healthy(5);
  f.busbw = {1.0, 0.9, 1.1, 0.8, 1.2};  // a pair runs at the slower host's busbw
  Criteria c;
  c.max_tests = 2;  // the ring's two tests per host: no re-tests, so the reference is the ring
  const Search s = run(f, c);
  bool found = false;
  for (const Floor& fl : s.floors()) {
    if (fl.stage != Stage::ring || fl.metric != Metric::busbw_gbps) continue;
    found = true;
    // Ring (0,1)=0.9 (2,3)=0.8 (4,0)=1.0 (1,2)=0.9 (3,4)=0.8; every host's best is within the
    // provisional floor (0.8 x the upper quartile 1.0), so all five tests are the reference.
    EXPECT_EQ(fl.reference_tests, 5);
    EXPECT_EQ(fl.hosts, 5);
    EXPECT_NEAR(*fl.fleet_median, 0.9, 1e-12);
    EXPECT_NEAR(*fl.value, 0.72, 1e-12);  // 0.9 x (1 - 0.2)
    const double l[] = {std::log(0.9), std::log(0.8), std::log(1.0), std::log(0.9), std::log(0.8)};
    double mean = 0, ss = 0;
    for (double x : l) mean += x / 5;
    for (double x : l) ss += (x - mean) * (x - mean);
    EXPECT_NEAR(*fl.noise, std::sqrt(ss / 4), 1e-12);
    EXPECT_DOUBLE_EQ(*fl.noise_df, 4.0);
    EXPECT_TRUE(fl.judged);
  }
  EXPECT_TRUE(found);
  // Hosts 2, 3 and 4 (best tests 0.9, 0.8, 0.8 of a 0.9 fleet at 9% noise) are neither cleared nor
  // blamed in the 2 tests max_tests allows: unjudged, not healthy.
  constexpr auto J = Verdict::unjudged;
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{H, H, J, J, J}));
}

TEST(ScreenSearch, BadHostsInflateNeitherMedianNorSpread) {
  Fleet f = healthy(8);
  f.busbw = {0.55, 0.55, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99};  // two slow neighbours in the ring
  const Search s = run(f);
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{S, S, H, H, H, H, H, H}));
}

TEST(ScreenSearch, TwoSlowHostsAroundAHealthyOneAreBothNamedAndItIsCleared) {
  Fleet f = healthy(6);
  f.busbw[1] = 0.55;
  f.busbw[3] = 0.55;  // host 2's two ring neighbours are both slow
  const Search s = run(f);
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{H, S, H, S, H, H}));
  int retests_of_2 = 0;
  for (const auto& t : s.tests())
    if (t.spec.stage == Stage::attribution && t.spec.hosts[0] == 2) ++retests_of_2;
  EXPECT_EQ(retests_of_2, 1);
}

TEST(ScreenSearch, AHangingHostIsFailedWithTheReasonOfItsRetestBesideAHealthyHost) {
  // It hangs only over the network: alone it passes (the data link is down).
  Search s(6, {}, 0);
  for (auto round = s.next_round(); !round.empty(); round = s.next_round())
    for (const auto& t : round) {
      Measurement m;
      if (t.stage != Stage::solo && (t.hosts[0] == 4 || t.hosts[1] == 4)) {
        m.outcome = Outcome::failed;
        m.reason = "timeout: allreduce did not finish within 5 s";
      } else {
        m.latency_us = 10;
        if (t.stage != Stage::solo) m.busbw_gbps = 1;
      }
      s.record(t.id, m);
    }
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{H, H, H, H, F, H}));
  EXPECT_EQ(s.hosts()[4].reason, "timeout: allreduce did not finish within 5 s");
  EXPECT_EQ(s.hosts()[4].implicating_tests.size(), 3u);  // two ring tests and the re-test
}

TEST(ScreenSearch, FailuresAloneKeepAHostOutOfTheNetworkStages) {
  Fleet f = healthy(6);
  f.hang.insert(2);
  f.unreachable.insert(5);
  const Search s = run(f);
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{H, H, F, H, H, U}));
  EXPECT_EQ(s.hosts()[5].reason, "cannot reach host");
  // 6 alone + a ring of the 4 others.
  EXPECT_EQ(s.tests().size(), 10u);
  for (const auto& t : s.tests()) {
    if (t.spec.stage == Stage::solo) continue;
    for (int h : t.spec.hosts) EXPECT_TRUE(h != 2 && h != 5);
  }
}

TEST(ScreenSearch, ALauncherFailureAloneIsRetriedOnceBeforeTheHostIsFailed) {
  // Host 1's first test alone fails before any rank starts (retry); host 2's fails twice.
  Search s(6, {}, 0);
  int solo_of_2 = 0;
  for (auto round = s.next_round(); !round.empty(); round = s.next_round())
    for (const auto& t : round) {
      Measurement m;
      m.latency_us = 10;
      if (t.stage != Stage::solo) m.busbw_gbps = 1;
      const bool first_of_1 = t.stage == Stage::solo && t.hosts[0] == 1 && t.id == 1;
      const bool of_2 = t.stage == Stage::solo && t.hosts[0] == 2 && ++solo_of_2 > 0;
      if (first_of_1 || of_2) {
        m = {};
        m.outcome = Outcome::failed;
        m.reason = "mkdir: File exists (launcher exit 1)";
        m.retry = true;
      }
      s.record(t.id, m);
    }
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{H, H, F, H, H, H}));
  EXPECT_EQ(solo_of_2, 2);
  EXPECT_EQ(s.hosts()[2].reason, "mkdir: File exists (launcher exit 1)");
  for (const auto& t : s.tests())
    if (t.spec.stage != Stage::solo) {
      EXPECT_FALSE(t.spec.hosts[0] == 2 || t.spec.hosts[1] == 2);
    }
}

TEST(ScreenSearch, HighLatencyIsJudgedToo) {
  Fleet f = healthy(6);
  f.latency[0] = 40;  // 4x the others; the ceiling is 2x the median
  const Search s = run(f);
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{S, H, H, H, H, H}));
  EXPECT_NE(s.hosts()[0].reason.find("alone latency above the ceiling"), std::string::npos);
  EXPECT_NE(s.hosts()[0].reason.find("network latency above the ceiling"), std::string::npos);
}

TEST(ScreenSearch, AMetricNotJudgedBlamesNobody) {
  Fleet f = healthy(6);
  f.latency[0] = 40;
  Criteria c;
  c.judge_latency = false;
  const Search s = run(f, c);
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{H, H, H, H, H, H}));
  EXPECT_EQ(s.tests().size(), 12u);  // and nobody re-tested
  for (const Floor& fl : s.floors()) EXPECT_EQ(fl.metric, Metric::busbw_gbps);
}

TEST(ScreenSearch, AnAbsoluteFloorBlamesAUniformlySlowFleet) {
  Criteria c;
  c.expect_busbw_gbps = 1.5;
  const Search s = run(healthy(4), c);
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{S, S, S, S}));
}

TEST(ScreenSearch, TwoHostsHaveNoRelativeFloorAndAFailedPairBlamesBoth) {
  Fleet f = healthy(2);
  f.busbw[1] = 0.1;
  EXPECT_EQ(verdicts(run(f)), (std::vector<Verdict>{H, H}));  // nobody to compare with
  Search s(2, {}, 0);
  for (auto round = s.next_round(); !round.empty(); round = s.next_round())
    for (const auto& t : round) {
      Measurement m;
      if (t.stage == Stage::ring) {
        m.outcome = Outcome::failed;
        m.reason = "timeout";
      }
      s.record(t.id, m);
    }
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{F, F}));
  EXPECT_EQ(s.hosts()[0].reason, "timeout (no host shown healthy to re-test beside: the pair is blamed)");
}

TEST(ScreenSearch, AHostNearTheMarginIsRetestedUntilItIsClear) {
  // A fleet with 5% noise; host 1's ring tests came out 20% and 14% low (noise), its re-tests
  // beside healthy hosts do not: re-tested (beside hosts it has not met) until cleared.
  Search s(7, {}, 0);
  for (auto round = s.next_round(); !round.empty(); round = s.next_round())
    for (const auto& t : round) {
      Measurement m;
      m.latency_us = 10;
      if (t.stage == Stage::ring && (t.hosts[0] == 1 || t.hosts[1] == 1)) {
        m.busbw_gbps = t.hosts[0] == 1 ? 0.80 : 0.86;
      } else if (t.stage != Stage::solo) {
        m.busbw_gbps = t.id % 2 ? 0.95 : 1.05;
      }
      s.record(t.id, m);
    }
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{H, H, H, H, H, H, H}));
  int retests = 0;
  std::set<int> partners;
  for (const auto& t : s.tests())
    if (t.spec.stage == Stage::attribution && t.spec.hosts[0] == 1) {
      ++retests;
      partners.insert(t.spec.hosts[1]);
    }
  EXPECT_GE(retests, 1);
  EXPECT_LE(retests, Criteria{}.max_tests - 2);                   // two ring tests already count
  EXPECT_EQ(partners.size(), static_cast<std::size_t>(retests));  // a different healthy host each time
  EXPECT_EQ(partners.count(0) + partners.count(2), 0u);           // not its ring neighbours
}

TEST(ScreenSearch, AMetricNoisierThanItsMarginIsNotJudgedAndBlamesNobody) {
  // Latency scatters by a factor of up to 100 from test to test (CPU scheduling on a shared
  // machine): far more than the 2x margin. Busbw is quiet, host 4's 40% slow.
  Search s(7, {}, 0);
  const double scatter[] = {1, 60, 2, 100, 1.5, 30, 1, 80, 3, 1, 50, 2, 1, 90, 1, 40, 2, 70, 1, 5, 1, 60, 2, 30};
  for (auto round = s.next_round(); !round.empty(); round = s.next_round())
    for (const auto& t : round) {
      Measurement m;
      m.latency_us = 15 * scatter[t.id % 24];
      if (t.stage != Stage::solo) m.busbw_gbps = (t.hosts[0] == 4 || t.hosts[1] == 4) ? 0.6 : (t.id % 2 ? 0.97 : 1.03);
      s.record(t.id, m);
    }
  // Latency judged for nobody: no host is shown healthy on it (unjudged), nor blamed.
  constexpr auto J = Verdict::unjudged;
  EXPECT_EQ(verdicts(s), (std::vector<Verdict>{J, J, J, J, S, J, J}));
  EXPECT_EQ(s.hosts()[4].reason, "network busbw below the floor");
  int latency_floors = 0;
  for (const Floor& fl : s.floors())
    if (fl.metric == Metric::latency_us) {
      ++latency_floors;
      EXPECT_FALSE(fl.judged);
      EXPECT_GT(*fl.noise, std::log(2.0));
    }
  EXPECT_EQ(latency_floors, 2);  // alone and network
  for (const HostResult& h : s.hosts())
    for (const Evidence& e : h.evidence)
      if (e.metric == Metric::latency_us) {
        EXPECT_FALSE(e.judged);
        EXPECT_FALSE(e.beyond);
      }
}

TEST(ScreenSearch, ConcurrencyOneRunsOneTestPerRound) {
  const Search s = run(healthy(5), {}, 1);
  EXPECT_EQ(s.rounds(), static_cast<int>(s.tests().size()));
}

TEST(ScreenSearch, OddRingNeedsThreeRounds) {
  std::vector<std::vector<TestSpec>> rounds;
  const Search s = run(healthy(5), {}, 0, &rounds);
  EXPECT_EQ(s.rounds(), 4);  // alone, then (0,1)(2,3), (4,0)(1,2), (3,4)
  EXPECT_EQ(rounds[3].size(), 1u);
}

TEST(ScreenSearch, RecordingTwiceOrAskingEarlyIsAnError) {
  Search s(3, {}, 0);
  const auto round = s.next_round();
  EXPECT_THROW(s.next_round(), std::logic_error);
  s.record(round[0].id, {});
  EXPECT_THROW(s.record(round[0].id, {}), std::logic_error);
  EXPECT_THROW(s.record(99, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ccbench::screen
