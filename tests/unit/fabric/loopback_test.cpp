// Both ends of `ccbench fabric` in one process: rank 0's and rank 1's backends on real providers,
// each driven by its own thread, exactly as two MPI ranks would drive them.
#include <gtest/gtest.h>

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "fabric/fabric_backend.hpp"

namespace ccbench::fabric {
namespace {

// A one-shot rendezvous standing in for MPI's address/key exchange.
class Swap {
 public:
  std::string swap(int side, const std::string& mine) {
    std::unique_lock lock(mutex_);
    slot_[side] = mine;
    have_[side] = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return have_[1 - side]; });
    return slot_[1 - side];
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string slot_[2];
  bool have_[2] = {false, false};
};

// Runs f(rank 0) here and f(rank 1) on a thread; rethrows the first exception.
void both(const std::function<void(int)>& f) {
  std::exception_ptr error;
  std::thread peer([&] {
    try {
      f(1);
    } catch (...) {
      error = std::current_exception();
    }
  });
  try {
    f(0);
  } catch (...) {
    if (!error) error = std::current_exception();
  }
  peer.join();
  if (error) std::rethrow_exception(error);
}

CaseSpec make_case(Op op, std::uint64_t bytes, int rank) {
  CaseSpec c;
  c.op = op;
  c.dtype = DType::uint8;
  c.redop = RedOp::none;
  c.nranks = 2;
  c.rank = rank;
  c.layout = layout_for(op, DType::uint8, bytes, 2);
  return c;
}

pattern::Params params() {
  pattern::Params p;
  p.nranks = 2;
  p.seed = 42;
  p.is_signed = false;
  p.exact_limit = 255;
  return p;
}

class Loopback : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    EndpointOptions o;
    o.provider = GetParam();
    o.want_rma = true;
    o.window = 8;
    for (int r = 0; r < 2; ++r) {
      o.rank = r;
      ends_[r] = std::make_unique<FabricBackend>(o);
    }
    ends_[0]->connect(ends_[1]->local_address());
    ends_[1]->connect(ends_[0]->local_address());
    for (int r = 0; r < 2; ++r) {
      ends_[r]->set_exchange([this, r](const std::string& mine) { return swap_.swap(r, mine); });
    }
    std::string why[2];
    both([&](int r) { why[r] = ends_[r]->probe(10); });
    ASSERT_EQ(why[0], "");
    ASSERT_EQ(why[1], "");
    both([&](int r) { ends_[r]->allocate(kMax, kMax); });
  }

  static constexpr std::uint64_t kMax = 1 << 20;
  std::unique_ptr<FabricBackend> ends_[2];
  Swap swap_;
};

TEST_P(Loopback, EveryTestDeliversTheSendersPattern) {
  ASSERT_TRUE(ends_[0]->rma()) << "shm and tcp;ofi_rxm offer FI_RMA";
  ASSERT_TRUE(ends_[0]->tagged());
  for (Op op : {Op::fabric_pingpong, Op::fabric_bw, Op::fabric_bibw, Op::fabric_write, Op::fabric_read}) {
    for (std::uint64_t bytes : {std::uint64_t{1}, std::uint64_t{8}, std::uint64_t{4096}, std::uint64_t{65539}, kMax}) {
      SCOPED_TRACE(std::string(name(op)) + " " + std::to_string(bytes));
      std::uint64_t wrong[2] = {99, 99};
      double us[2] = {0, 0};
      both([&](int r) {
        const CaseSpec c = make_case(op, bytes, r);
        ASSERT_FALSE(ends_[r]->unsupported(c).has_value());
        ends_[r]->fill(c, params());
        ends_[r]->launch(c);
        wrong[r] = ends_[r]->verify(c, params());
        us[r] = ends_[r]->time_batch_us(c, 3);
      });
      EXPECT_EQ(wrong[0], 0u);
      EXPECT_EQ(wrong[1], 0u);
      EXPECT_GT(us[0], 0.0);
      EXPECT_GT(us[1], 0.0);
    }
  }
}

TEST_P(Loopback, ACorruptedPayloadIsCounted) {
  std::uint64_t wrong[2] = {0, 0};
  both([&](int r) {
    const CaseSpec c = make_case(Op::fabric_bw, 4096, r);
    ends_[r]->fill(c, params());
    ends_[r]->launch(c);
    ends_[r]->corrupt_output_for_test(c);
    wrong[r] = ends_[r]->verify(c, params());
  });
  EXPECT_EQ(wrong[0], 0u);  // rank 0 only sends in bw
  EXPECT_EQ(wrong[1], 1u);
}

TEST_P(Loopback, NothingArrivesBeforeTheTest) {
  // fill() poisons the receive buffer: without the op every byte counts as wrong.
  const CaseSpec c = make_case(Op::fabric_pingpong, 64, 0);
  ends_[0]->fill(c, params());
  EXPECT_EQ(ends_[0]->verify(c, params()), 64u);
}

TEST_P(Loopback, DescribesTheProvider) {
  const nlohmann::json d = ends_[0]->describe();
  EXPECT_EQ(d["path"], GetParam());
  EXPECT_TRUE(d["caps"]["tagged"].get<bool>());
  EXPECT_TRUE(d["caps"]["rma"].get<bool>());
  EXPECT_EQ(d["messages"], "tagged");
  EXPECT_GT(d["max_msg_size"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(d.contains("inject_size"));
  EXPECT_TRUE(d.contains("mr_mode"));
  EXPECT_EQ(ends_[0]->metadata()["fabric"]["path"], GetParam());
}

INSTANTIATE_TEST_SUITE_P(Providers, Loopback, ::testing::Values("shm", "tcp"));

TEST(FabricBackendErrors, UnknownProviderIsAUsageErrorListingTheOffered) {
  EndpointOptions o;
  o.provider = "no-such-provider";
  try {
    FabricBackend backend(o);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no such provider"), std::string::npos) << what;
    EXPECT_NE(what.find("shm"), std::string::npos) << what;
    EXPECT_NE(what.find("tcp"), std::string::npos) << what;
  }
}

TEST(FabricBackendErrors, SizesAboveMaxMsgSizeAreSkippedWithAReason) {
  EndpointOptions o;
  o.provider = "shm";
  FabricBackend backend(o);
  // Without --ops write/read no FI_RMA is asked for, so RMA cases are skipped, never attempted.
  const auto rma_skip = backend.unsupported(make_case(Op::fabric_write, 8, 0));
  ASSERT_TRUE(rma_skip.has_value());
  EXPECT_NE(rma_skip->find("FI_RMA"), std::string::npos);
  CaseSpec c = make_case(Op::fabric_bw, 8, 0);
  EXPECT_FALSE(backend.unsupported(c).has_value());
  const auto limit = backend.describe()["max_msg_size"].get<std::uint64_t>();
  if (limit == UINT64_MAX) GTEST_SKIP() << "shm has no message size limit here";
  c.layout.bytes = limit + 1;
  const auto why = backend.unsupported(c);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("max_msg_size"), std::string::npos);
}

TEST(FabricBackendErrors, CudaMemoryWithoutAGpuIsAUsageError) {
  if (cuda_unavailable_reason().empty()) GTEST_SKIP() << "a CUDA device is present";
  EndpointOptions o;
  o.provider = "shm";
  o.memory = MemoryKind::cuda;
  EXPECT_THROW(FabricBackend backend(o), UsageError);
}

}  // namespace
}  // namespace ccbench::fabric
