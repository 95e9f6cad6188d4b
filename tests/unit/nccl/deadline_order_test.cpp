// Item 7: one deadline order for every backend. A backend's own set-up timeout (NCCL's init
// timeout; libfabric's reachability probe) ends strictly inside the run session's set-up watchdog,
// so its clean ending (ncclCommAbort, its own message, exit 2) is never pre-empted by the
// watchdog's _Exit(3). MPI has no set-up timeout of its own (MPI_Init runs before the session).
#include <gtest/gtest.h>

#include "backends/nccl/nccl_types.hpp"
#include "core/deadlines.hpp"
#include "core/error.hpp"
#include "sweep/run_config.hpp"
#include "sweep/session.hpp"

namespace ccbench {
namespace {

// -T values: none, shorter than the floor, the floor, the default, longer.
constexpr double kTimeouts[] = {0, 5, 60, 120, 300, 1000, 7200};
const char* const kInitEnv[] = {nullptr, "", "0", "50", "119", "300", "100000"};

TEST(DeadlineOrder, DefaultsPutNcclInitInsideTheSetUpWatchdog) {
  const double watchdog = setup_watchdog_s(RunConfig{}.timeout_s, kSetupTimeoutFloorS);
  EXPECT_EQ(watchdog, 300.0);  // -T 300 by default
  const double init = nccl::init_timeout_s(nullptr, watchdog);
  EXPECT_LT(init, watchdog);
  EXPECT_EQ(init, 270.0);  // 300 - max(10, 300/10)
}

TEST(DeadlineOrder, NcclInitTimeoutStrictlyInsideForEveryTimeoutAndSetting) {
  for (double t : kTimeouts) {
    const double watchdog = setup_watchdog_s(t, kSetupTimeoutFloorS);
    for (const char* env : kInitEnv) {
      const double init = nccl::init_timeout_s(env, watchdog);
      const std::string where = "-T " + std::to_string(t) + ", CCBENCH_NCCL_INIT_TIMEOUT=" + (env ? env : "(unset)");
      if (watchdog == 0) {  // no watchdog: the setting as given (0 = no limit)
        const double wanted = env == nullptr || env[0] == '\0' ? nccl::kDefaultInitTimeoutS : std::stod(env);
        EXPECT_EQ(init, wanted) << where;
        continue;
      }
      EXPECT_GT(init, 0) << where << ": an unlimited init under a watchdog is pre-empted by it";
      EXPECT_LE(init + setup_margin_s(watchdog), watchdog) << where;
      EXPECT_LT(init, watchdog) << where;
    }
  }
}

TEST(DeadlineOrder, ShortOwnTimeoutsAreKept) {
  EXPECT_EQ(nccl::init_timeout_s("50", 300), 50.0);
  EXPECT_EQ(inside_setup_watchdog_s(30, 120), 30.0);  // libfabric's probe under the 120 s floor
  EXPECT_EQ(inside_setup_watchdog_s(30, 0), 30.0);
  EXPECT_EQ(inside_setup_watchdog_s(0, 0), 0.0);
}

TEST(DeadlineOrder, EveryBackendsOwnSetUpTimeoutEndsFirst) {
  for (double t : kTimeouts) {
    const double watchdog = setup_watchdog_s(t, kSetupTimeoutFloorS);
    if (watchdog == 0) continue;
    // nccl: the init timeout, default or set.
    EXPECT_LT(nccl::init_timeout_s(nullptr, watchdog), watchdog) << t;
    // libfabric: the reachability probe, as ccbench fabric sizes it (-T capped at 30 s).
    const double probe = inside_setup_watchdog_s(t > 0 ? std::min(t, 30.0) : 30.0, watchdog);
    EXPECT_LT(probe, watchdog) << t;
    // Even a watchdog shorter than the margin leaves the backend half of it.
    EXPECT_LT(inside_setup_watchdog_s(0, t), t) << t;
  }
}

TEST(DeadlineOrder, BadInitTimeoutIsAUsageError) {
  try {
    nccl::init_timeout_s("5m", 300);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "CCBENCH_NCCL_INIT_TIMEOUT: expected seconds (0 = no limit), got '5m'");
  }
  EXPECT_THROW(nccl::init_timeout_s("-1", 300), UsageError);
}

}  // namespace
}  // namespace ccbench
