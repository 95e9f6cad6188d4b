// The stop signal of `ccbench congestion` (ControlChannel::start_barrier) on the one-rank channel
// and on the threaded test channel of tests/unit/sweep; MpiChannel's is exercised by
// tests/integration/congestion under mpirun.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "../sweep/thread_channel.hpp"
#include "sweep/channel.hpp"

namespace ccbench {
namespace {

TEST(Channel, LocalPendingBarrierIsCompleteAtOnce) {
  LocalChannel channel;
  auto pending = channel.start_barrier();
  EXPECT_TRUE(pending->test());
  pending->wait();
  EXPECT_EQ(channel.barriers(), 1u);
}

// Ranks 0 and 1 begin the barrier and poll it; it completes only once rank 2 begins it, and a
// second barrier is independent of the first.
TEST(Channel, ThreadPendingBarrierCompletesWhenEveryRankHasBegun) {
  auto world = std::make_shared<testing::ThreadWorld>(3);
  std::atomic<bool> third_started{false};
  std::atomic<int> early_completions{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.emplace_back([&, r] {
      testing::ThreadChannel channel(world, r);
      if (r == 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (r == 2) third_started = true;
      auto pending = channel.start_barrier();
      while (!pending->test()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!third_started) ++early_completions;
      auto second = channel.start_barrier();
      second->wait();
      EXPECT_TRUE(second->test());
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(early_completions, 0);
}

}  // namespace
}  // namespace ccbench
