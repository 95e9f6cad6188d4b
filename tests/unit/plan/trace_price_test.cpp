// A trace's step priced (src/model/trace_price) on a pricing curve with known parameters, every
// figure by hand: collectives t = 10 us + S / bandwidth (profile "A" 100 GB/s, "B" 200 GB/s),
// point-to-point (fabric_pingpong, profile A only) t = 5 us + S / 10 GB/s; bands -10% / +10%.
#include "model/trace_price.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"

namespace ccbench::model {
namespace {

using trace::CallOp;

// `missing`: an op the curve has no fit for.
Pricer known_curve(std::optional<Op> missing = std::nullopt) {
  return [missing](const PredictQuery& q) {
    if (q.profile != "A" && q.profile != "B") throw UsageError("unknown profile " + q.profile);
    if (missing && q.op == *missing) throw UsageError(fmt::format("--op: the model has no fit for {}", name(*missing)));
    Prediction p;
    if (q.op == Op::fabric_pingpong) {
      if (q.profile != "A") throw UsageError("--op: the model has no fit for fabric_pingpong (fitted: allreduce)");
      p.time_us = 5 + static_cast<double>(q.bytes) / 10e3;
    } else {
      p.time_us = 10 + static_cast<double>(q.bytes) / ((q.profile == "A" ? 100 : 200) * 1e3);
    }
    p.time_lo_us = 0.9 * p.time_us;
    p.time_hi_us = 1.1 * p.time_us;
    p.profile = q.profile;
    return p;
  };
}

trace::Call call(CallOp op, std::uint64_t count, std::optional<std::int64_t> step, const std::string& group = "world") {
  trace::Call c;
  c.op = op;
  c.dtype = DType::float32;
  c.count = count;
  c.group = group;
  c.step = step;
  if (trace::info(op).takes_redop) c.redop = RedOp::sum;
  return c;
}

// 4 ranks, 2 per node (ranks 0, 1 on node 0; 2, 3 on node 1), steps 0 and 1. Every rank: one
// unmarked all-reduce before the steps; per step two all-reduces of 1e6 bytes and an all-gather of
// 1000 floats (S = 16000) on the world, a barrier; ranks 0 and 1 an all-reduce of 2e6 bytes on
// their pair (one node); rank 2 sends 1e5 bytes to rank 0 (across nodes), rank 0 receives it; in
// step 1 only, an alltoallv of counts {100, 300, 200, 400} (S = 4 x 400 x 4 = 6400).
trace::Trace hand_trace() {
  trace::Trace t;
  t.world_size = 4;
  t.groups = {{"world", {0, 1, 2, 3}, true}, {"pair", {0, 1}, true}};
  t.provenance.format = "nccl-log";
  for (int r = 0; r < 4; ++r) {
    trace::RankCalls rank;
    rank.rank = r;
    rank.calls.push_back(call(CallOp::allreduce, 1, std::nullopt));
    for (std::int64_t s : {0, 1}) {
      rank.calls.push_back(call(CallOp::allreduce, 250000, s));
      rank.calls.push_back(call(CallOp::allreduce, 250000, s));
      rank.calls.push_back(call(CallOp::allgather, 1000, s));
      if (r < 2) rank.calls.push_back(call(CallOp::allreduce, 500000, s, "pair"));
      if (r == 0 || r == 2) {
        trace::Call p2p = call(r == 0 ? CallOp::recv : CallOp::send, 25000, s);
        p2p.peer = r == 0 ? 2 : 0;
        rank.calls.push_back(p2p);
      }
      rank.calls.push_back(call(CallOp::barrier, 0, s));
      if (s == 1) {
        trace::Call v = call(CallOp::alltoallv, 1000, s);
        v.counts = {100, 300, 200, 400};
        rank.calls.push_back(v);
      }
    }
    t.ranks.push_back(std::move(rank));
  }
  return t;
}

TEST(TracePrice, SitesPoolCallsWithTheirSizesAndNodes) {
  const TraceStep step = trace_step(hand_trace(), 2, "t.json");
  EXPECT_EQ(step.steps, 2);
  EXPECT_EQ(step.calls_outside_steps, 4u);
  ASSERT_EQ(step.sites.size(), 7u);
  // In order of first appearance: rank 0's, then rank 2's send.
  const TraceSite& ar = step.sites[0];
  EXPECT_EQ(ar.op, CallOp::allreduce);
  EXPECT_EQ(ar.bytes, 1000000u);
  EXPECT_EQ(ar.nodes, 2);
  EXPECT_EQ(ar.ranks_per_node, 2);
  EXPECT_EQ(ar.calls, 16u);  // 2 a step x 2 steps x 4 ranks
  EXPECT_DOUBLE_EQ(ar.calls_per_step, 2);
  EXPECT_EQ(step.sites[1].bytes, 16000u);  // the all-gather's output: 1000 x 4 ranks x 4 bytes
  const TraceSite& pair = step.sites[2];
  EXPECT_EQ(pair.bytes, 2000000u);
  EXPECT_EQ(pair.nodes, 1);
  EXPECT_EQ(pair.group_size, 2);
  EXPECT_EQ(pair.calls_by_rank.size(), 2u);
  const TraceSite& recv = step.sites[3];
  EXPECT_EQ(recv.op, CallOp::recv);
  EXPECT_EQ(recv.nodes, 2);  // rank 2 is on the other node
  EXPECT_EQ(recv.ranks_per_node, 0);
  EXPECT_EQ(step.sites[4].op, CallOp::barrier);
  EXPECT_FALSE(step.sites[4].unpriceable.empty());
  const TraceSite& v = step.sites[5];
  EXPECT_EQ(v.op, CallOp::alltoallv);
  EXPECT_EQ(v.bytes, 6400u);
  EXPECT_DOUBLE_EQ(v.calls_per_step, 0.5);
  EXPECT_EQ(step.sites[6].op, CallOp::send);
  EXPECT_EQ(step.sites[0].first_call, "t.json: ranks[0].calls[1]");
}

TEST(TracePrice, StepIsTheSlowestRanksSumWithTheBandOfTheSum) {
  const TraceStep step = trace_step(hand_trace(), 2, "t.json");
  const TraceProfile a = price_trace(step, "A", known_curve());
  // Per call on A: all-reduce 10 + 1e6 / 1e5 = 20; all-gather 10 + 0.16 = 10.16; pair 10 + 20 = 30;
  // send/recv 5 + 1e5 / 1e4 = 15; alltoallv 10 + 0.064 = 10.064 (half a call per step).
  EXPECT_DOUBLE_EQ(a.sites[0].step_us.value, 40);
  EXPECT_DOUBLE_EQ(a.sites[0].step_us.lo, 36);
  EXPECT_DOUBLE_EQ(a.sites[1].per_call.time_us, 10.16);
  EXPECT_DOUBLE_EQ(a.sites[3].per_call.time_us, 15);
  EXPECT_DOUBLE_EQ(a.sites[5].step_us.value, 5.032);
  EXPECT_FALSE(a.sites[4].priced);
  EXPECT_EQ(a.unpriced, 1);  // the barrier
  // Rank 0: 40 + 10.16 + 30 + 15 + 5.032 = 100.192; rank 1 85.192, rank 2 70.192, rank 3 55.192.
  EXPECT_EQ(a.critical_rank, 0);
  EXPECT_NEAR(a.step_us.value, 100.192, 1e-9);
  EXPECT_NEAR(a.step_us.lo, 0.9 * 100.192, 1e-9);
  EXPECT_NEAR(a.step_us.hi, 1.1 * 100.192, 1e-9);
  EXPECT_NO_THROW(require_collectives_priced(step, a));
}

TEST(TracePrice, SendRecvWithoutAFabricCurveAreListedWithTheReason) {
  const TraceStep step = trace_step(hand_trace(), 2, "t.json");
  const TraceProfile b = price_trace(step, "B", known_curve());
  EXPECT_EQ(b.unpriced, 3);  // barrier, recv, send
  for (std::size_t i : {3u, 6u}) {
    EXPECT_FALSE(b.sites[i].priced);
    EXPECT_NE(b.sites[i].note.find("not priced: no point-to-point curve for this profile"), std::string::npos);
    EXPECT_NE(b.sites[i].note.find("the model has no fit for fabric_pingpong"), std::string::npos) << b.sites[i].note;
  }
  // Rank 0 and 1 on B: 2 x 15 + 10.08 + 20 + 0.5 x 10.032 = 65.096; no send/recv in it.
  EXPECT_NEAR(b.step_us.value, 65.096, 1e-9);
  EXPECT_EQ(b.critical_rank, 0);
  EXPECT_NO_THROW(require_collectives_priced(step, b));  // point-to-point may stay unpriced
}

TEST(TracePrice, MigrationOverTheSitesPricedOnBoth) {
  const TraceStep step = trace_step(hand_trace(), 2, "t.json");
  const std::vector<TraceProfile> priced = {price_trace(step, "A", known_curve()),
                                            price_trace(step, "B", known_curve())};
  const TraceMigration m = migrate(step, priced, {"A", "B"});
  EXPECT_EQ(m.sites_compared, 4);  // all-reduce, all-gather, pair all-reduce, alltoallv
  // A without send/recv: rank 0 and 1 both 85.192 [76.6728, 93.7112]; B: 65.096 [58.5864, 71.6056].
  EXPECT_NEAR(m.from_step_us.value, 85.192, 1e-9);
  EXPECT_NEAR(m.to_step_us.value, 65.096, 1e-9);
  EXPECT_NEAR(m.delta_us.value, -20.096, 1e-9);
  EXPECT_NEAR(m.delta_us.lo, 58.5864 - 93.7112, 1e-9);
  EXPECT_NEAR(m.delta_us.hi, 71.6056 - 76.6728, 1e-9);
  EXPECT_NEAR(m.ratio.value, 65.096 / 85.192, 1e-12);
  EXPECT_NEAR(m.ratio.lo, 58.5864 / 93.7112, 1e-12);
  EXPECT_NEAR(m.ratio.hi, 71.6056 / 76.6728, 1e-12);
  try {
    migrate(step, priced, {"A", "C"});
    FAIL() << "a profile not priced must be refused";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--migrate A:C: both profiles must be among those priced");
  }
}

TEST(TracePrice, ACollectiveTheProfileLacksIsRefusedNamingTheCall) {
  trace::Trace t = hand_trace();
  const trace::Call a2a = call(CallOp::alltoall, 2048, 0);
  for (auto& rank : t.ranks) rank.calls.insert(rank.calls.begin() + 2, a2a);
  const TraceStep step = trace_step(t, 2, "t.json");
  const TraceProfile a = price_trace(step, "A", known_curve(Op::alltoall));
  try {
    require_collectives_priced(step, a);
    FAIL() << "an unpriced alltoall must be refused";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "t.json: ranks[0].calls[2]: op 'alltoall' (8K per call, group of 4 on 2 nodes): not priced: "
                 "--op: the model has no fit for alltoall on A");
  }
}

// Without a broadcast curve a broadcast is priced at the all-reduce's bus bandwidth (plan.cpp,
// price_call): on 4 ranks it moves S, the all-reduce 2 x 3/4 x S, so 4/6 of the all-reduce's time.
TEST(TracePrice, ABroadcastWithoutACurveIsItsShareOfAnAllReduce) {
  trace::Trace t = hand_trace();
  trace::Call b = call(CallOp::broadcast, 2048, 0);
  b.root = 0;
  for (auto& rank : t.ranks) rank.calls.insert(rank.calls.begin() + 2, b);
  const TraceStep step = trace_step(t, 2, "t.json");
  const TraceProfile a = price_trace(step, "A", known_curve(Op::broadcast));
  require_collectives_priced(step, a);
  std::size_t site = step.sites.size();
  for (std::size_t i = 0; i < step.sites.size(); ++i) {
    if (step.sites[i].op == CallOp::broadcast) site = i;
  }
  ASSERT_LT(site, step.sites.size());
  ASSERT_TRUE(a.sites[site].priced);
  EXPECT_DOUBLE_EQ(a.sites[site].per_call.time_us, (10 + 8192 / 1e5) * 4 / 6);
  EXPECT_EQ(a.sites[site].note,
            "0.667 x an all-reduce of the same size (a broadcast moves S, an all-reduce 2(n-1)/n x S on n = 4 ranks, "
            "at equal bus bandwidth; no curve for this op)");
}

TEST(TracePrice, ZeroBytesAndSizesBeyond64BitsAreNotPriced) {
  trace::Trace t;
  t.world_size = 4;
  t.groups = {{"world", {0, 1, 2, 3}, true}};
  trace::RankCalls rank;
  rank.calls.push_back(call(CallOp::allreduce, 0, std::nullopt));
  rank.calls.push_back(call(CallOp::allgather, std::numeric_limits<std::uint64_t>::max() / 8, std::nullopt));
  t.ranks.push_back(rank);
  const TraceStep step = trace_step(t, 4, "t.json");
  EXPECT_EQ(step.steps, 1);  // no markers: the whole trace is one step
  EXPECT_EQ(step.sites[0].unpriceable, "not priced: 0 bytes per call");
  EXPECT_EQ(step.sites[1].unpriceable, "not priced: the call's size does not fit 64 bits");
  const TraceProfile a = price_trace(step, "A", known_curve());
  EXPECT_EQ(a.unpriced, 2);
  EXPECT_DOUBLE_EQ(a.step_us.value, 0);
  EXPECT_NO_THROW(require_collectives_priced(step, a));
  EXPECT_THROW(trace_step(t, 0, "t.json"), UsageError);
}

TEST(TracePrice, PlanBesideTheTrace) {
  const TraceStep step = trace_step(hand_trace(), 2, "t.json");
  std::vector<StepCollective> plan = {
      {"gradients", StepOp::allreduce, 1000000, 4, 2, 2, true},    // as traced
      {"pair", StepOp::allreduce, 2000000, 2, 1, 3, false},        // the trace has 1 a step
      {"weights", StepOp::allgather, 32000, 4, 2, 1, false},       // the trace's is 16000
      {"shards", StepOp::reduce_scatter, 1000000, 4, 2, 1, true},  // not in the trace
      {"pipeline", StepOp::sendrecv, 100000, 2, 2, 1, false},      // rank 0's recv + rank 2's send
  };
  const std::vector<AgainstRow> rows = against(plan, step);
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0].agreement, Agreement::same);
  EXPECT_EQ(rows[1].agreement, Agreement::calls_differ);
  EXPECT_DOUBLE_EQ(rows[1].trace->calls_per_step, 1);
  EXPECT_EQ(rows[2].agreement, Agreement::differs);
  EXPECT_EQ(rows[2].trace->bytes, 16000u);
  EXPECT_EQ(rows[3].agreement, Agreement::plan_only);
  EXPECT_FALSE(rows[3].trace);
  EXPECT_EQ(rows[4].agreement, Agreement::same);
  EXPECT_EQ(rows[4].trace->op, "send/recv");
  EXPECT_EQ(rows[5].agreement, Agreement::trace_only);
  EXPECT_EQ(rows[5].trace->op, "barrier");
  EXPECT_EQ(rows[6].agreement, Agreement::trace_only);
  EXPECT_EQ(rows[6].trace->op, "alltoallv");
  EXPECT_DOUBLE_EQ(rows[6].trace->calls_per_step, 0.5);
  EXPECT_FALSE(rows[6].plan_row);
}

}  // namespace
}  // namespace ccbench::model
