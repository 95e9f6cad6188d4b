// The replay's plan and loop in one process: the four-rank hand-made trace
// (tests/data/replay/four_ranks.trace.json: the world and two halves) replayed by four threads over
// ThreadChannel, each call timed by a recording backend at a fixed 10 us, so every row's calls,
// bytes, times and fractions are known by hand.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <tuple>

#include "../measure/rank_threads.hpp"
#include "backends/point_to_point.hpp"
#include "core/error.hpp"
#include "replay/call_log.hpp"
#include "replay/plan.hpp"
#include "replay/runner.hpp"
#include "trace/trace.hpp"

namespace ccbench {
namespace {

const std::string kFourRanks = std::string(CCBENCH_SOURCE_DIR) + "/tests/data/replay/four_ranks.trace.json";

// One call as the backend saw it.
struct Seen {
  int world_rank;
  Op op;
  std::uint64_t bytes;
  int nranks;
  int rank;
  int root;
  int color;
};

class Recording {
 public:
  std::vector<Seen> calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  void add(const Seen& seen) {
    std::lock_guard lock(mutex_);
    calls_.push_back(seen);
  }
  // Sends and receives between the ranks' threads: a send's bytes queue on (communicator's color,
  // sender, receiver) in order, and the receive takes the oldest (MPI's non-overtaking order).
  void post(int color, int sender, int receiver, std::vector<char> bytes) {
    {
      std::lock_guard lock(mutex_);
      mailbox_[{color, sender, receiver}].push_back(std::move(bytes));
    }
    posted_.notify_all();
  }
  std::vector<char> take(int color, int sender, int receiver) {
    std::unique_lock lock(mutex_);
    auto& queue = mailbox_[{color, sender, receiver}];
    if (!posted_.wait_for(lock, std::chrono::seconds(20), [&] { return !queue.empty(); })) {
      throw PeerFailure("no message from rank " + std::to_string(sender) + " within 20 s");
    }
    std::vector<char> bytes = std::move(queue.front());
    queue.pop_front();
    return bytes;
  }

 private:
  std::mutex mutex_;
  std::condition_variable posted_;
  std::vector<Seen> calls_;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<char>>> mailbox_;
};

// Every op takes 10 us; every call is recorded with the rank that made it and its communicator.
class RecordingBackend final : public Backend, public PointToPoint {
 public:
  RecordingBackend(Recording& recording, int world_rank, int color)
      : recording_(recording), world_rank_(world_rank), color_(color) {}
  std::string_view name() const override { return "recording"; }
  std::string_view clock() const override { return "test"; }
  std::optional<std::string> unsupported(const CaseSpec&) const override { return std::nullopt; }
  std::uint64_t memory_budget_bytes(int) const override { return 0; }
  void allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) override {
    send_.resize(send_bytes);
    recv_.resize(recv_bytes);
  }
  void fill(const CaseSpec&, const pattern::Params&) override {}
  void launch(const CaseSpec&) override {}
  void synchronize() override {}
  double time_batch_us(const CaseSpec& c, int) override {
    if (fail_after_calls >= 0 && calls_++ == fail_after_calls) throw PeerFailure("rank lost for the test");
    recording_.add({world_rank_, c.op, c.layout.bytes, c.nranks, c.rank, c.root, color_});
    return 10.0;
  }
  std::uint64_t verify(const CaseSpec&, const pattern::Params&) override { return 0; }
  // A batch of sends and receives: 10 us, recorded as one call (op broadcast, its bytes summed).
  // Its bytes go through the recording's mailbox, every send posted before the first receive (as
  // MPI_Isend does); the peers are world ranks (the traces that send are on the world).
  double time_point_to_point_us(std::span<const PointToPointCall> batch) override {
    recording_.add({world_rank_, Op::broadcast, send_bytes(batch) + recv_bytes(batch), static_cast<int>(batch.size()),
                    -1, batch.front().peer, color_});
    std::uint64_t offset = 0;
    for (const PointToPointCall& call : batch) {
      if (!call.send) continue;
      const std::uint64_t bytes = call.count * info(call.dtype).size_bytes;
      recording_.post(color_, world_rank_, call.peer,
                      {send_.begin() + static_cast<std::ptrdiff_t>(offset),
                       send_.begin() + static_cast<std::ptrdiff_t>(offset + bytes)});
      offset += bytes;
    }
    offset = 0;
    for (const PointToPointCall& call : batch) {
      if (call.send) continue;
      const std::vector<char> bytes = recording_.take(color_, call.peer, world_rank_);
      std::copy(bytes.begin(), bytes.end(), recv_.begin() + static_cast<std::ptrdiff_t>(offset));
      if (receives_++ == corrupt_receive) {
        recv_[offset] = static_cast<char>(recv_[offset] + 1);  // one element of this receive made wrong
      }
      offset += bytes.size();
    }
    return 10.0;
  }
  void fill_point_to_point(std::span<const PointToPointCall> batch, int self, const pattern::Params& p) override {
    fill_host(batch, self, p, send_.data(), recv_.data());
  }
  std::vector<std::uint64_t> verify_point_to_point(std::span<const PointToPointCall> batch, int self,
                                                   const pattern::Params& p) override {
    return verify_host(batch, self, p, recv_.data());
  }
  void corrupt_output_for_test(const CaseSpec&) override {}
  nlohmann::json metadata() const override { return nlohmann::json::object(); }

  int fail_after_calls = -1;  // this backend's calls before it throws PeerFailure (-1: never)
  int corrupt_receive = -1;   // the receive (counted from 0) whose first byte is changed once it arrived

 private:
  int receives_ = 0;
  std::vector<char> send_, recv_;
  int calls_ = 0;
  Recording& recording_;
  int world_rank_;
  int color_;
};

class PrintNothing final : public replay::Printer {
 public:
  void start(const replay::ReplayPlan&, const replay::ReplayOptions&, int) override {}
  void trial(const std::vector<ResultRow>&) override {}
  void finished(const std::string&, std::uint64_t, int) override {}
};

TEST(ReplayPlan, CallSitesPoolSameOpDtypeCountAndGroup) {
  const trace::Trace trace = trace::load(kFourRanks);
  const replay::ReplayPlan plan = replay::make_plan(trace, replay::identity_map(4, 4), kFourRanks);
  // allreduce 1024 world (2 calls), allgather 16 int32, allreduce 256 low (2), broadcast, alltoall,
  // reduce_scatter low, then the high half's allreduce and reduce_scatter (first seen on rank 2).
  ASSERT_EQ(plan.sites.size(), 8u);
  const auto site = [&](std::size_t i) { return plan.sites[i]; };
  EXPECT_EQ(site(0).op, Op::allreduce);
  EXPECT_EQ(site(0).group, "world");
  EXPECT_EQ(site(0).bytes, 4096u);
  EXPECT_EQ(site(0).calls_per_step, 2);
  EXPECT_EQ(site(1).op, Op::allgather);
  EXPECT_EQ(site(1).bytes, 64u);
  EXPECT_EQ(site(2).group, "low");
  EXPECT_EQ(site(2).group_size, 2);
  EXPECT_EQ(site(2).calls_per_step, 2);
  EXPECT_EQ(site(3).op, Op::broadcast);
  EXPECT_EQ(site(4).op, Op::alltoall);
  EXPECT_EQ(site(5).op, Op::reduce_scatter);
  EXPECT_EQ(site(5).group, "low");
  EXPECT_EQ(site(6).group, "high");
  EXPECT_EQ(site(7).group, "high");
  ASSERT_EQ(plan.communicators.size(), 3u);
  EXPECT_EQ(plan.communicators[1].world_ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.communicators[2].world_ranks, (std::vector<int>{2, 3}));
  for (int r = 0; r < 4; ++r) EXPECT_EQ(plan.calls_per_step(r), 8u);
  // Rank 3 issues its calls in the traced order, on its half's communicator where traced.
  const auto& calls = plan.calls[3];
  EXPECT_EQ(calls[2].communicator, 2);
  EXPECT_EQ(calls[2].comm_rank, 1);
  EXPECT_EQ(calls[3].root, 1);  // broadcast from world rank 1
  // alltoall of 64 floats over 4 ranks: 16 per peer; reduce_scatter of 32 over 2: 16 each.
  EXPECT_EQ(calls[4].layout.count, 16u);
  EXPECT_EQ(calls[6].layout.count, 16u);
  EXPECT_EQ(calls[6].layout.recv_elements, 16u);
}

TEST(ReplayPlan, RankMapReplicatesTheTraceAndTranslatesRoots) {
  const trace::Trace trace = trace::load(std::string(CCBENCH_SOURCE_DIR) + "/tests/data/replay/two_ranks.trace.json");
  // Trace rank 1 on world ranks 0 and 3, trace rank 0 on 1 and 2: copy 0 is {1, 0}, copy 1 {2, 3}.
  const replay::ReplayPlan plan = replay::make_plan(trace, replay::parse_rank_map("1,0,0,1", 2, 4), "t.json");
  ASSERT_EQ(plan.communicators.size(), 2u);
  EXPECT_EQ(plan.communicators[0].world_ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.communicators[1].world_ranks, (std::vector<int>{2, 3}));
  // The broadcast's root is trace rank 1: world rank 0 in copy 0 (its rank 0), 3 in copy 1 (rank 1).
  EXPECT_EQ(plan.calls[1][2].root, 0);
  EXPECT_EQ(plan.calls[2][2].root, 1);
  EXPECT_EQ(plan.calls[0][2].comm_rank, 0);
}

// tests/data/replay/reduce_barrier.trace.json, 3 ranks: a reduce of 256 floats (max) to trace
// rank 2 on the world, a barrier, and a reduce of 64 int32 on group "high" = trace ranks [2, 1]
// with root 0 (trace rank 2), issued by ranks 1 and 2.
TEST(ReplayPlan, ReduceKeepsItsRootAndRedopAndABarrierIsAOneFloatAllreduce) {
  const std::string path = std::string(CCBENCH_SOURCE_DIR) + "/tests/data/replay/reduce_barrier.trace.json";
  const replay::ReplayPlan plan = replay::make_plan(trace::load(path), replay::identity_map(3, 3), path);
  ASSERT_EQ(plan.sites.size(), 3u);
  EXPECT_EQ(plan.sites[0].trace_op, trace::CallOp::reduce);
  EXPECT_EQ(plan.sites[0].op, Op::reduce);
  EXPECT_EQ(plan.sites[0].bytes, 1024u);
  EXPECT_EQ(plan.sites[1].trace_op, trace::CallOp::barrier);
  EXPECT_EQ(plan.sites[1].op, Op::allreduce);
  EXPECT_EQ(plan.sites[1].bytes, 0u);  // the row says what the trace says: a barrier sends nothing
  EXPECT_EQ(plan.sites[2].group, "high");
  EXPECT_EQ(plan.sites[2].group_size, 2);
  for (int w = 0; w < 3; ++w) {
    const auto& calls = plan.calls[static_cast<std::size_t>(w)];
    ASSERT_EQ(calls.size(), w == 0 ? 2u : 3u) << w;
    EXPECT_EQ(calls[0].op, Op::reduce);
    EXPECT_EQ(calls[0].redop, RedOp::max);
    EXPECT_EQ(calls[0].root, 2);
    EXPECT_EQ(calls[0].layout.count, 256u);
    EXPECT_EQ(calls[0].layout.bytes, 1024u);
    // The barrier: an allreduce (sum) of one float on the world, whatever the traced element type.
    EXPECT_EQ(calls[1].op, Op::allreduce);
    EXPECT_EQ(calls[1].dtype, DType::float32);
    EXPECT_EQ(calls[1].redop, RedOp::sum);
    EXPECT_EQ(calls[1].comm_size, 3);
    EXPECT_EQ(calls[1].layout.count, 1u);
    EXPECT_EQ(calls[1].layout.bytes, 4u);
  }
  // The high group's communicator holds world ranks 1 and 2 (ascending): trace rank 2, its root,
  // is its rank 1.
  for (int w = 1; w < 3; ++w) {
    const replay::PlannedCall& call = plan.calls[static_cast<std::size_t>(w)][2];
    EXPECT_EQ(plan.communicators[static_cast<std::size_t>(call.communicator)].world_ranks, (std::vector<int>{1, 2}));
    EXPECT_EQ(call.comm_rank, w - 1);
    EXPECT_EQ(call.root, 1);
    EXPECT_EQ(call.redop, RedOp::sum);
    EXPECT_EQ(call.dtype, DType::int32);
  }
}

TEST(ReplayPlan, FlagErrorsNameTheFlag) {
  const auto message = [](auto&& f) {
    try {
      f();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { replay::identity_map(2, 4); }),
            "the trace has 2 ranks and the job 4: give --ranks-map (one trace rank per job rank, e.g. 0,1,0,1)");
  EXPECT_EQ(message([] { replay::parse_rank_map("0,1,1", 2, 3); }),
            "--ranks-map '0,1,1': trace rank 1 appears 2 times and rank 0 1: every trace rank must appear equally "
            "often (each set of them replays the whole trace)");
  EXPECT_EQ(message([] { replay::parse_rank_map("0,2", 2, 2); }),
            "--ranks-map '0,2': '2' is not a rank of the trace (0 to 1)");
  EXPECT_EQ(message([] { replay::parse_gaps("fast"); }),
            "--gaps 'fast': expected traced, none or a factor on the traced gaps (a number from 0 to 1e6)");
  EXPECT_EQ(replay::parse_gaps("0.5").wait_us(40.0), 20.0);
  EXPECT_EQ(replay::parse_gaps("none").wait_us(40.0), 0.0);
  EXPECT_EQ(replay::parse_gaps("traced").wait_us(-3.0), 0.0);
}

TEST(ReplayRun, SendsAndReceivesBackToBackAreOneBatchSharingItsTime) {
  const std::string path = std::string(CCBENCH_SOURCE_DIR) + "/tests/data/replay/send_recv.trace.json";
  const replay::ReplayPlan plan = replay::make_plan(trace::load(path), replay::identity_map(2, 2), path);
  ASSERT_EQ(plan.sites.size(), 5u);
  EXPECT_TRUE(plan.calls[1][0].point_to_point);
  EXPECT_TRUE(plan.calls[1][0].send);
  EXPECT_EQ(plan.calls[1][0].peer, 0);
  EXPECT_FALSE(plan.calls[1][1].send);
  testing::TempDir dir("replay_p2p");
  const std::string out = (dir.path() / "p2p.json").string();
  Recording recording;
  const std::vector<int> codes = testing::run_ranks(2, [&](measure::Frame& frame) {
    RunConfig config;
    config.json_path = frame.is_root() ? out : "";
    config.timeout_s = 30;
    replay::ReplayOptions opt;
    opt.trace_path = path;
    opt.gaps = replay::parse_gaps("none");
    opt.steps = 2;
    PrintNothing printer;
    const int rank = frame.channel().rank();
    return replay::run_replay(frame.channel(), frame.ending(), config, opt, plan, printer,
                              [&](std::string_view, const BackendOptions& o) -> std::unique_ptr<Backend> {
                                return std::make_unique<RecordingBackend>(recording, rank, o.group_color);
                              });
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
  // Per rank and step (3 with the warm-up): one batch of 2 calls, 1 MiB + 512 KiB, then the allreduce.
  int batches = 0;
  for (const Seen& s : recording.calls()) {
    if (s.op != Op::broadcast) continue;
    ++batches;
    EXPECT_EQ(s.nranks, 2);
    EXPECT_EQ(s.bytes, 1048576u + 524288u);
  }
  EXPECT_EQ(batches, 2 * 3);
  std::ifstream in(out);
  const nlohmann::json rows = nlohmann::json::parse(in)["results"];
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0]["op"], "send");
  EXPECT_EQ(rows[0]["samples_us"], (std::vector<double>{5, 5}));
  EXPECT_EQ(rows[1]["op"], "recv");
  EXPECT_EQ(rows[1]["samples_us"], (std::vector<double>{5, 5}));
  EXPECT_EQ(rows[5]["samples_us"], (std::vector<double>{20, 20}));
  EXPECT_DOUBLE_EQ(rows[0]["replay"]["fraction_of_step"].get<double>(), 0.25);
}

// tests/data/replay/send_recv.trace.json replayed by 2 threads, --gaps none, 2 steps: rank 1's
// `corrupt_receive`-th receive (counted from 0; the warm-up step's is 0) gets one wrong byte.
std::vector<int> replay_send_recv(const replay::ReplayPlan& plan, const std::string& path, const std::string& out,
                                  int corrupt_receive) {
  Recording recording;
  return testing::run_ranks(2, [&](measure::Frame& frame) {
    RunConfig config;
    config.json_path = frame.is_root() ? out : "";
    config.timeout_s = 30;
    replay::ReplayOptions opt;
    opt.trace_path = path;
    opt.gaps = replay::parse_gaps("none");
    opt.steps = 2;
    PrintNothing printer;
    const int rank = frame.channel().rank();
    return replay::run_replay(frame.channel(), frame.ending(), config, opt, plan, printer,
                              [&](std::string_view, const BackendOptions& o) -> std::unique_ptr<Backend> {
                                auto backend = std::make_unique<RecordingBackend>(recording, rank, o.group_color);
                                if (rank == 1) backend->corrupt_receive = corrupt_receive;
                                return backend;
                              });
  });
}

TEST(ReplayRun, AReceiveIsCheckedAgainstWhatItsPeerSent) {
  const std::string path = std::string(CCBENCH_SOURCE_DIR) + "/tests/data/replay/send_recv.trace.json";
  const replay::ReplayPlan plan = replay::make_plan(trace::load(path), replay::identity_map(2, 2), path);
  testing::TempDir dir("replay_p2p_check");
  const std::string clean = (dir.path() / "clean.json").string();
  EXPECT_EQ(replay_send_recv(plan, path, clean, -1), (std::vector<int>{0, 0}));
  {
    std::ifstream in(clean);
    EXPECT_EQ(nlohmann::json::parse(in)["results"][5]["wrong"], 0);
  }
  // Rank 1's receive of the first recorded step (its 2nd: the warm-up's is the 1st) arrives with
  // one element changed: exit 1 on both ranks, one wrong element in the step's row, and rank 1
  // names the call (site 4: rank 1's recv of 262144 floats from rank 0, its traced call 1).
  const std::string out = (dir.path() / "corrupt.json").string();
  ::testing::internal::CaptureStderr();
  const std::vector<int> codes = replay_send_recv(plan, path, out, 1);
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(codes, (std::vector<int>{1, 1}));
  EXPECT_EQ(stderr_text,
            "ccbench replay: rank 1: data check failed: call site 4 (recv float x262144 from comm rank 0 on group "
            "'world', ranks[1].calls[1]): 1 wrong elements in step 0 of trial 0\n");
  std::ifstream in(out);
  const nlohmann::json file = nlohmann::json::parse(in);
  EXPECT_EQ(file["run"]["exit_code"], 1);
  EXPECT_EQ(file["results"][5]["op"], "replay_step");
  EXPECT_EQ(file["results"][5]["wrong"], 1);
}

TEST(ReplayPlan, SendsAndReceivesThatDoNotPairAreRefused) {
  const std::string path = std::string(CCBENCH_SOURCE_DIR) + "/tests/data/replay/send_recv.trace.json";
  const auto message = [](const trace::Trace& trace) {
    try {
      replay::make_plan(trace, replay::identity_map(2, 2), "t.json");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  trace::Trace counts = trace::load(path);
  counts.ranks[1].calls[1].count = 131072;  // rank 1 receives half of what rank 0 sends it
  EXPECT_EQ(message(counts),
            "t.json: ranks[0].calls[0]: send 0 from trace rank 0 to trace rank 1 on group 'world' is float x262144, "
            "its matching recv ranks[1].calls[1] is float x131072: a send and its recv must match in element type "
            "and count");
  trace::Trace dtype = trace::load(path);
  dtype.ranks[0].calls[1].dtype = DType::int32;  // rank 0 receives int32 where rank 1 sends floats
  EXPECT_EQ(message(dtype),
            "t.json: ranks[1].calls[0]: send 0 from trace rank 1 to trace rank 0 on group 'world' is float x131072, "
            "its matching recv ranks[0].calls[1] is int32 x131072: a send and its recv must match in element type "
            "and count");
  trace::Trace no_recv = trace::load(path);
  no_recv.ranks[1].calls.erase(no_recv.ranks[1].calls.begin() + 1);  // rank 1 never receives rank 0's send
  EXPECT_EQ(message(no_recv),
            "t.json: ranks[0].calls[0]: send 0 from trace rank 0 to trace rank 1 on group 'world' (float x262144) has "
            "no matching recv: rank 1 posts 0 recvs from rank 0 (the n-th send from a rank to a peer pairs with the "
            "peer's n-th recv from it; replayed, it would hang)");
  trace::Trace no_send = trace::load(path);
  no_send.ranks[1].calls.erase(no_send.ranks[1].calls.begin());  // rank 0 waits for a send rank 1 never posts
  EXPECT_EQ(message(no_send),
            "t.json: ranks[0].calls[1]: recv 0 at trace rank 0 from trace rank 1 on group 'world' (float x131072) has "
            "no matching send: rank 1 posts 0 sends to rank 0 (the n-th send from a rank to a peer pairs with the "
            "peer's n-th recv from it; replayed, it would hang)");
}

// The 4-rank trace replayed in one process over ThreadChannel and recording backends, its options
// set by `configure` (the defaults: --gaps none, -T 30) and each backend adjusted by `adjust`.
using Configure = std::function<void(RunConfig&, replay::ReplayOptions&, bool root)>;
using Adjust = std::function<void(RecordingBackend&, int rank, int group_color)>;
std::vector<int> replay_four_ranks(const replay::ReplayPlan& plan, Recording& recording, const Configure& configure,
                                   const Adjust& adjust = {}) {
  return testing::run_ranks(4, [&](measure::Frame& frame) {
    RunConfig config;
    config.timeout_s = 30;
    replay::ReplayOptions opt;
    opt.trace_path = kFourRanks;
    opt.gaps = replay::parse_gaps("none");
    configure(config, opt, frame.is_root());
    PrintNothing printer;
    const int rank = frame.channel().rank();
    return replay::run_replay(frame.channel(), frame.ending(), config, opt, plan, printer,
                              [&](std::string_view, const BackendOptions& o) -> std::unique_ptr<Backend> {
                                auto backend = std::make_unique<RecordingBackend>(recording, rank, o.group_color);
                                if (adjust) adjust(*backend, rank, o.group_color);
                                return backend;
                              });
  });
}

TEST(ReplayRun, RowsHoldExactCallsBytesAndTimes) {
  testing::TempDir dir("replay_rows");
  const std::string out = (dir.path() / "four.json").string();
  const trace::Trace trace = trace::load(kFourRanks);
  const replay::ReplayPlan plan = replay::make_plan(trace, replay::identity_map(4, 4), kFourRanks);
  Recording recording;
  const std::vector<int> codes =
      replay_four_ranks(plan, recording, [&](RunConfig& config, replay::ReplayOptions& opt, bool root) {
        config.json_path = root ? out : "";
        config.trials = 2;
        opt.steps = 3;
      });
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0, 0}));
  // (1 warm-up + 2 trials x 3 steps) x 8 calls on each of 4 ranks.
  const std::vector<Seen> calls = recording.calls();
  EXPECT_EQ(calls.size(), 7u * 8u * 4u);
  std::map<int, int> on_half;  // world rank -> calls on a half's communicator
  for (const Seen& s : calls) {
    if (s.color == 0) {
      EXPECT_EQ(s.nranks, 2);
      ++on_half[s.world_rank];
    }
  }
  for (int r = 0; r < 4; ++r) EXPECT_EQ(on_half[r], 7 * 3) << r;

  std::ifstream in(out);
  const nlohmann::json file = nlohmann::json::parse(in);
  EXPECT_EQ(file["run"]["status"], "complete");
  EXPECT_EQ(file["config"]["replay"]["steps"], 3);
  EXPECT_EQ(file["config"]["replay"]["ranks_map"], (std::vector<int>{0, 1, 2, 3}));
  const auto& rows = file["results"];
  ASSERT_EQ(rows.size(), 2u * 9u);
  // Trial 0: the world's allreduce of 1024 floats, 2 calls per step, 20 us of an 80 us step.
  EXPECT_EQ(rows[0]["op"], "allreduce");
  EXPECT_EQ(rows[0]["bytes"], 4096);
  EXPECT_EQ(rows[0]["count"], 1024);
  EXPECT_EQ(rows[0]["ranks"], 4);
  EXPECT_EQ(rows[0]["replay"]["calls"], 2);
  EXPECT_EQ(rows[0]["replay"]["group"], "world");
  EXPECT_EQ(rows[0]["samples_us"], (std::vector<double>{20, 20, 20}));
  EXPECT_DOUBLE_EQ(rows[0]["replay"]["fraction_of_step"].get<double>(), 0.25);
  EXPECT_EQ(rows[2]["replay"]["group"], "low");
  EXPECT_EQ(rows[2]["ranks"], 2);
  EXPECT_EQ(rows[2]["bytes"], 1024);
  EXPECT_DOUBLE_EQ(rows[5]["replay"]["fraction_of_step"].get<double>(), 0.125);
  // The step: 8 calls per rank, 4096*2 + 64 + 1024*2 + 64 + 256 + 128 bytes of send buffers.
  const auto& step = rows[8];
  EXPECT_EQ(step["op"], "replay_step");
  EXPECT_EQ(step["replay"]["calls"], 8);
  EXPECT_EQ(step["count"], 8);
  EXPECT_EQ(step["bytes"], 4096 * 2 + 64 + 1024 * 2 + 64 + 256 + 128);
  EXPECT_EQ(step["samples_us"], (std::vector<double>{80, 80, 80}));
  EXPECT_EQ(step["time_us"]["median"], 80);
  EXPECT_EQ(rows[9 + 8]["trial"], 1);
}

TEST(ReplayRun, AFailedRankKeepsTheFinishedSteps) {
  testing::TempDir dir("replay_failed");
  const std::string out = (dir.path() / "failed.json").string();
  const trace::Trace trace = trace::load(kFourRanks);
  const replay::ReplayPlan plan = replay::make_plan(trace, replay::identity_map(4, 4), kFourRanks);
  Recording recording;
  const std::vector<int> codes = replay_four_ranks(
      plan, recording,
      [&](RunConfig& config, replay::ReplayOptions& opt, bool root) {
        config.json_path = root ? out : "";
        opt.steps = 10;
      },
      [](RecordingBackend& backend, int rank, int group_color) {
        // Rank 2 is lost at its 3rd call on the world in the 5th step: each step issues 5 there
        // (and 3 on its half), after the warm-up's 5.
        if (rank == 2 && group_color == -1) backend.fail_after_calls = 5 + 4 * 5 + 2;
      });
  EXPECT_EQ(codes, (std::vector<int>{4, 4, 4, 4}));
  std::ifstream in(out);
  const nlohmann::json file = nlohmann::json::parse(in);
  EXPECT_NE(file["run"]["status"], "complete");
  EXPECT_EQ(file["run"]["exit_code"], 4);
  const auto& rows = file["results"];
  ASSERT_EQ(rows.size(), 9u);
  EXPECT_EQ(rows[8]["op"], "replay_step");
  EXPECT_EQ(rows[8]["samples_us"], (std::vector<double>{80, 80, 80, 80}));
  EXPECT_EQ(rows[8]["replay"]["steps"], 4);
}

TEST(ReplayPlan, GroupsWhoseRanksDoNotIssueItsCollectivesAlikeAreRefused) {
  const auto message = [](const trace::Trace& trace) {
    try {
      replay::make_plan(trace, replay::identity_map(4, 4), "t.json");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string why =
      " (replayed, they would not match; the source may not name the group the calls were on: see the trace's "
      "not_in_source)";
  trace::Trace skipped = trace::load(kFourRanks);
  // Rank 3 leaves out its second allreduce on the high half: its next collective there is the
  // reduce_scatter, where rank 2 issues the allreduce.
  auto& rank3 = skipped.ranks[3].calls;
  rank3.erase(rank3.begin() + 5);
  EXPECT_EQ(message(skipped),
            "t.json: group 'high': its ranks do not issue its collectives alike: collective 1 on it: ranks[2].calls[5] "
            "is allreduce float x256, ranks[3].calls[5] is reduce_scatter float x32" +
                why);
  rank3.erase(rank3.begin() + 5);  // and the reduce_scatter: rank 3 ends first
  rank3.insert(rank3.begin() + 5, skipped.ranks[2].calls[5]);
  EXPECT_EQ(message(skipped),
            "t.json: group 'high': its ranks do not issue its collectives alike: collective 2 on it: ranks[2].calls[6] "
            "is reduce_scatter float x32, rank 3 issues no more (2 in all)" +
                why);
  trace::Trace rooted = trace::load(kFourRanks);
  rooted.ranks[1].calls[3].root = 0;  // the world's broadcast from another root on rank 1
  EXPECT_EQ(message(rooted),
            "t.json: group 'world': its ranks do not issue its collectives alike: collective 2 on it: "
            "ranks[0].calls[3] is broadcast double x8 root 1, ranks[1].calls[3] is broadcast double x8 root 0" +
                why);
}

TEST(ReplayRun, CallLogHoldsEachRanksCallsAsIssued) {
  testing::TempDir dir("replay_call_log");
  const std::string prefix = (dir.path() / "calls").string();
  const trace::Trace trace = trace::load(kFourRanks);
  const replay::ReplayPlan plan = replay::make_plan(trace, replay::identity_map(4, 4), kFourRanks);
  Recording recording;
  const std::vector<int> codes =
      replay_four_ranks(plan, recording, [&](RunConfig& config, replay::ReplayOptions& opt, bool) {
        config.trials = 2;
        opt.steps = 3;
        opt.log_calls = prefix;
      });
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0, 0}));
  std::map<int, std::uint64_t> seen;  // world rank -> calls the backend saw
  for (const Seen& s : recording.calls()) ++seen[s.world_rank];
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(rank);
    std::ifstream in(replay::call_log_path(prefix, rank));
    ASSERT_TRUE(in) << replay::call_log_path(prefix, rank);
    const nlohmann::json log = nlohmann::json::parse(in);
    EXPECT_EQ(log["rank"], rank);
    EXPECT_EQ(log["trace_rank"], rank);
    EXPECT_EQ(log["copy"], 0);
    EXPECT_EQ(log["passes"], 1 + 2 * 3);  // the warm-up step and 2 trials of 3
    // The step's send buffers: 4096 * 2 + 64 + 1024 * 2 + 64 + 256 + 128 bytes on every rank.
    EXPECT_EQ(log["bytes_per_pass"], 4096 * 2 + 64 + 1024 * 2 + 64 + 256 + 128);
    const auto& calls = log["calls"];
    const auto& traced = trace.ranks[static_cast<std::size_t>(rank)].calls;
    ASSERT_EQ(calls.size(), traced.size());
    std::uint64_t issued = 0;
    for (std::size_t i = 0; i < traced.size(); ++i) {
      EXPECT_EQ(calls[i]["order"], i);
      EXPECT_EQ(calls[i]["op"], trace::name(traced[i].op));
      EXPECT_EQ(calls[i]["dtype"], info(traced[i].dtype).name);
      EXPECT_EQ(calls[i]["count"], traced[i].count);
      EXPECT_EQ(calls[i]["bytes"], trace::send_bytes(traced[i]));
      EXPECT_EQ(calls[i]["group"], traced[i].group);
      EXPECT_EQ(calls[i]["issued"], 7);
      issued += calls[i]["issued"].get<std::uint64_t>();
    }
    EXPECT_EQ(issued, seen[rank]);
    // Call 2 is on the rank's half; the broadcast (call 3) is from world rank 1 on the world.
    const std::vector<int> half = rank < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
    EXPECT_EQ(calls[2]["members"], half);
    EXPECT_EQ(calls[2]["comm_rank"], rank % 2);
    EXPECT_EQ(calls[3]["members"], (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(calls[3]["root"], 1);
    EXPECT_EQ(calls[0]["redop"], "sum");
    EXPECT_FALSE(calls[1].contains("redop"));
    EXPECT_FALSE(calls[0].contains("root"));
  }
}

}  // namespace
}  // namespace ccbench
