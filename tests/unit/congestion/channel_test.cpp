// The stop signal of `ccbench congestion` on the one-rank channel (MpiChannel's is exercised by
// tests/integration/congestion under mpirun).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ccbench
