// One test of the screen (screen/screen_test.hpp): its `ccbench run` command on its hosts and the
// names of its files.
#include "screen/screen_test.hpp"

#include <gtest/gtest.h>

namespace ccbench::screen {
namespace {

using V = std::vector<std::string>;

TEST(ScreenTest, RunsCcbenchRunOnItsHosts) {
  ScreenTestConfig c;
  c.launcher = launch::Launcher::srun;
  c.ranks_per_host = 2;
  c.ccbench = "/b/ccbench";
  c.launcher_args = {"--mpi=pmix"};
  c.run_args = {"--check=0"};
  TestSpec spec;
  spec.id = 7;
  spec.stage = Stage::ring;
  spec.hosts = {2, 0};
  const ScreenTest t = make_screen_test(c, spec, {"h0", "h1", "h2"}, "/out/tests");
  EXPECT_EQ(t.result_file, "/out/tests/007-ring-h2-h0.json");
  EXPECT_EQ(t.job.log_file, "/out/tests/007-ring-h2-h0.log");
  EXPECT_EQ(t.job.argv, (V{"srun",
                           "--nodes=2",
                           "--ntasks=4",
                           "--ntasks-per-node=2",
                           "--nodelist=h2,h0",
                           "--mpi=pmix",
                           "/b/ccbench",
                           "run",
                           "--backend",
                           "mpi",
                           "--ops",
                           "allreduce",
                           "-b",
                           "8",
                           "-e",
                           "4194304",
                           "-i",
                           "4194296",
                           "--in-place",
                           "no",
                           "-w",
                           "2",
                           "-n",
                           "10",
                           "--max-time-per-size",
                           "2",
                           "-T",
                           "30",
                           "--progress",
                           "never",
                           "--label",
                           "screen-007-ring-h2-h0",
                           "-J",
                           "/out/tests/007-ring-h2-h0.json",
                           "--per-rank",
                           "--check=0"}));
  const std::string long_name(120, 'h');
  EXPECT_EQ(test_stem(spec, {long_name + "0", long_name + "1", long_name + "2"}), "007-ring-host2-host0");
}

}  // namespace
}  // namespace ccbench::screen
