#include "launch/command_line.hpp"

#include <gtest/gtest.h>

namespace ccbench::launch {
namespace {

using V = std::vector<std::string>;

TEST(LaunchCommandLine, OpenMpiHostsWithSlots) {
  LaunchSpec s;
  s.hosts = {"ccb-h0", "ccb-h1", "ccb-h3"};
  s.ranks_per_host = 2;
  s.launcher_args = {"--mca", "btl", "tcp,self"};
  s.program = {"ccbench", "run", "--label", "a b"};
  EXPECT_EQ(launcher_argv(s), (V{"mpirun", "-np", "6", "--host", "ccb-h0:2,ccb-h1:2,ccb-h3:2", "--mca", "btl",
                                 "tcp,self", "ccbench", "run", "--label", "a b"}));
}

TEST(LaunchCommandLine, SlurmStepOnANodeList) {
  LaunchSpec s;
  s.launcher = Launcher::srun;
  s.hosts = {"gpu08", "gpu09"};
  s.ranks_per_host = 4;
  s.launcher_args = {"--mpi=pmix"};
  s.program = {"/opt/ccbench", "run"};
  EXPECT_EQ(launcher_argv(s), (V{"srun", "--nodes=2", "--ntasks=8", "--ntasks-per-node=4", "--nodelist=gpu08,gpu09",
                                 "--mpi=pmix", "/opt/ccbench", "run"}));
}

TEST(LaunchCommandLine, EmulatedFabricWrapperGoesFirst) {
  LaunchSpec s;
  s.hosts = {"ccb-h0"};
  s.program = {"ccbench", "run"};
  s.wrapper = {"scripts/emulate/fabric.sh", "exec", "--"};
  EXPECT_EQ(launcher_argv(s), (V{"scripts/emulate/fabric.sh", "exec", "--", "mpirun", "-np", "1", "--host", "ccb-h0:1",
                                 "ccbench", "run"}));
}

TEST(LaunchCommandLine, ParseAndNameLaunchers) {
  EXPECT_EQ(parse_launcher("srun"), Launcher::srun);
  EXPECT_EQ(parse_launcher("mpirun"), Launcher::mpirun);
  EXPECT_EQ(parse_launcher("mpiexec"), std::nullopt);
  EXPECT_EQ(name(Launcher::srun), "srun");
}

TEST(LaunchCommandLine, ShellQuoting) {
  EXPECT_EQ(shell_quote("--nodelist=a,b"), "--nodelist=a,b");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("\"x\""), "'\"x\"'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$HOME;rm"), "'$HOME;rm'");
  EXPECT_EQ(shell_join({"srun", "--label", "a 'b' c", ""}), "srun --label 'a '\\''b'\\'' c' ''");
}

TEST(LaunchCommandLine, Hostfile) {
  EXPECT_EQ(hostfile_text({"a", "b"}, 4), "a slots=4\nb slots=4\n");
  EXPECT_EQ(hostfile_text({"a"}, 1, "healthy"), "# healthy\na slots=1\n");
}

TEST(LaunchCommandLine, OnPath) {
  EXPECT_TRUE(on_path("sh"));
  EXPECT_TRUE(on_path("/bin/sh"));
  EXPECT_FALSE(on_path("ccbench-no-such-launcher"));
  EXPECT_FALSE(on_path("/nonexistent/srun"));
}

}  // namespace
}  // namespace ccbench::launch
