#include "launch/allocation.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace ccbench::launch {
namespace {

TEST(LaunchAllocation, CpusPerNode) {
  EXPECT_EQ(expand_cpus_per_node("4(x2),2", "V"), (std::vector<int>{4, 4, 2}));
  EXPECT_EQ(expand_cpus_per_node("1", "V"), (std::vector<int>{1}));
  for (const char* bad : {"", "x", "4(x)", "4(x2", "0", "4(x0)", "2,,1", "4(x200000)"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(expand_cpus_per_node(bad, "V"), UsageError);
  }
  try {
    expand_cpus_per_node("2,y", "SLURM_JOB_CPUS_PER_NODE");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "SLURM_JOB_CPUS_PER_NODE: 'y' is not N or N(xM) with N, M >= 1");
  }
}

TEST(LaunchAllocation, RanksPerHostMustFitTheNodesCpus) {
  Allocation a{{"ccb-h0", "ccb-h1", "ccb-h2"}, {4, 1, 4}, "4,1,4"};
  EXPECT_NO_THROW(check_ranks_fit(a, {"ccb-h0", "ccb-h2"}, 4));
  EXPECT_NO_THROW(check_ranks_fit(a, {"ccb-h1", "elsewhere"}, 1));
  try {
    check_ranks_fit(a, {"ccb-h0", "ccb-h1"}, 2);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--ranks-per-host 2: the allocation has 1 CPU on ccb-h1 (SLURM_JOB_CPUS_PER_NODE=4,1,4); srun cannot "
                 "start 2 ranks there (allocate more, or pass --overcommit to srun)");
  }
  EXPECT_NO_THROW(check_ranks_fit(Allocation{{"n1"}, {}, ""}, {"n1"}, 64));  // Slurm did not say
}

TEST(LaunchAllocation, FromTheEnvironment) {
  ::setenv("SLURM_JOB_NODELIST", "ccb-h[0-2]", 1);
  ::setenv("SLURM_JOB_CPUS_PER_NODE", "2(x3)", 1);
  const auto a = allocation_from_environment();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->nodes, (std::vector<std::string>{"ccb-h0", "ccb-h1", "ccb-h2"}));
  EXPECT_EQ(a->cpus_per_node, (std::vector<int>{2, 2, 2}));
  ::setenv("SLURM_JOB_CPUS_PER_NODE", "2(x2)", 1);
  try {
    allocation_from_environment();
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "SLURM_JOB_CPUS_PER_NODE 2(x2): 2 nodes, but SLURM_JOB_NODELIST has 3");
  }
  ::unsetenv("SLURM_JOB_CPUS_PER_NODE");
  ::unsetenv("SLURM_JOB_NODELIST");
  EXPECT_FALSE(allocation_from_environment());
}

}  // namespace
}  // namespace ccbench::launch
