#include "launch/hosts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace ccbench::launch {
namespace {

using V = std::vector<std::string>;

TEST(LaunchHosts, CommaList) {
  EXPECT_EQ(parse_host_list("a, b.c ,d-1", "--hosts"), (V{"a", "b.c", "d-1"}));
  try {
    parse_host_list("a,,b", "--hosts");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--hosts: '' is not a host name (letters, digits, '-', '.', '_')");
  }
  try {
    parse_host_list("a,b,a", "--hosts");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--hosts: host 'a' is listed twice");
  }
}

TEST(LaunchHosts, OpenMpiHostfile) {
  EXPECT_EQ(parse_hostfile_text("# fleet\nnode1 slots=8\n\nnode2 max_slots=8 slots=4  # spare\nnode3\n", "hf"),
            (V{"node1", "node2", "node3"}));
  try {
    parse_hostfile_text("node1\nnode2 slots=x\n", "hf");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "hf:2: 'slots=x' is not slots=N or max_slots=N (N >= 1)");
  }
  EXPECT_THROW(parse_hostfile_text("# nothing\n", "hf"), UsageError);
}

TEST(LaunchHosts, SlurmNodelist) {
  EXPECT_EQ(expand_slurm_nodelist("gpu[08-10,12],login1", "SLURM_JOB_NODELIST"),
            (V{"gpu08", "gpu09", "gpu10", "gpu12", "login1"}));
  EXPECT_EQ(expand_slurm_nodelist("ip-10-0-[1-2]-x", "S"), (V{"ip-10-0-1-x", "ip-10-0-2-x"}));
  EXPECT_EQ(expand_slurm_nodelist("a[9-11]", "S"), (V{"a9", "a10", "a11"}));
  try {
    expand_slurm_nodelist("n[3-1]", "SLURM_JOB_NODELIST");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "SLURM_JOB_NODELIST: 'n[3-1]': '3-1' is not N or N-M with N <= M");
  }
  EXPECT_THROW(expand_slurm_nodelist("n[1-2", "S"), UsageError);
  EXPECT_THROW(expand_slurm_nodelist("n[1-2],n2", "S"), UsageError);
}

TEST(LaunchHosts, SlurmRangeAtTheLargestNumberDoesNotWrap) {
  // Before: the counter wrapped past 2^64 - 1 and the expansion never ended.
  EXPECT_EQ(expand_slurm_nodelist("n[18446744073709551615]", "v"), (std::vector<std::string>{"n18446744073709551615"}));
  EXPECT_EQ(expand_slurm_nodelist("n[18446744073709551614-18446744073709551615]", "v").size(), 2u);
  EXPECT_THROW(expand_slurm_nodelist("n[0-18446744073709551615]", "v"), UsageError);
}

TEST(LaunchHosts, HostsFlagTakesHostlistExpressions) {
  EXPECT_EQ(parse_host_list("ccb-h[0-3,5],login", "--hosts"),
            (V{"ccb-h0", "ccb-h1", "ccb-h2", "ccb-h3", "ccb-h5", "login"}));
  try {
    parse_host_list("ccb-h[0-", "--hosts");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--hosts: 'ccb-h[0-': unbalanced '['");
  }
  try {
    parse_host_list("ccb-h[0-3],ccb-h2", "--hosts");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--hosts: host 'ccb-h2' is listed twice");
  }
}

TEST(LaunchHosts, SeveralBracketGroupsExpandFirstOutermost) {
  EXPECT_EQ(expand_slurm_nodelist("a[1-2]b[3-4]", "S"), (V{"a1b3", "a1b4", "a2b3", "a2b4"}));
  EXPECT_EQ(expand_slurm_nodelist("r[1,3]n[001-002],x", "S"), (V{"r1n001", "r1n002", "r3n001", "r3n002", "x"}));
  EXPECT_EQ(expand_slurm_nodelist("node[001-003]", "S"), (V{"node001", "node002", "node003"}));
  for (const char* bad : {"n[1-2]]", "n]1[", "n[[1]]", "n[1-2", "n[]", "n[a-b]", "n[1-]", "n[-1]"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(expand_slurm_nodelist(bad, "S"), UsageError);
  }
  std::string deep = "n";
  for (int i = 0; i < 100000; ++i) deep += "[1]";
  EXPECT_THROW(expand_slurm_nodelist(deep, "S"), UsageError);  // refused, not a stack overflow
  EXPECT_EQ(expand_slurm_nodelist("a[1]b[2]c[3]", "S"), (V{"a1b2c3"}));
  try {
    expand_slurm_nodelist("a[0-999]b[0-999]", "S");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "S: 'a[0-999]b[0-999]': more than 100000 hosts");
  }
}

TEST(LaunchHosts, CompressAsSlurmWritesIt) {
  EXPECT_EQ(compress_hostlist({"ccb-h0", "ccb-h1", "ccb-h2", "ccb-h3", "ccb-h5"}), "ccb-h[0-3,5]");
  EXPECT_EQ(compress_hostlist({"node001", "node002", "node003"}), "node[001-003]");
  EXPECT_EQ(compress_hostlist({"n8", "n9", "n10", "n08"}), "n[8-10,08]");
  EXPECT_EQ(compress_hostlist({"a1", "b1", "a2"}), "a1,b1,a2");  // order kept: only neighbours merge
  EXPECT_EQ(compress_hostlist({"login", "gpu7"}), "login,gpu7");
  EXPECT_EQ(compress_hostlist({}), "");
  for (const V& hosts : {V{"ccb-h0", "ccb-h1", "ccb-h2", "ccb-h3", "ccb-h5"}, V{"n8", "n9", "n10", "n08"},
                         V{"x", "a1b3", "a1b4", "n099", "n100", "n9", "n010"}}) {
    EXPECT_EQ(expand_slurm_nodelist(compress_hostlist(hosts), "S"), hosts);
  }
}

// Slurm's own `scontrol show hostnames` / `show hostlist` as the independent reference (both work
// offline on any slurm.conf; slurm-wlm is in scripts/packages-test.txt).
std::string scontrol(const std::string& what, const std::string& arg, const std::filesystem::path& conf) {
  const std::string command = "SLURM_CONF='" + conf.string() + "' scontrol show " + what + " '" + arg + "' 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return "popen failed";
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  ::pclose(pipe);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(LaunchHosts, AgreesWithScontrol) {
  if (std::system("command -v scontrol >/dev/null 2>&1") != 0) GTEST_SKIP() << "scontrol (slurm-wlm) not installed";
  const auto conf = std::filesystem::temp_directory_path() / ("ccbench_hosts_test_" + std::to_string(::getpid()));
  {
    std::ofstream f(conf);
    f << "ClusterName=t\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n";
  }
  for (const char* expr : {"ccb-h[0-3,5]", "node[001-003]", "a[1-2]b[3-4],c[001-003]", "gpu[08-10,12],login1",
                           "n[9-11],x,ip-10-0-[1-2]", "r[1,3]n[001-002]"}) {
    SCOPED_TRACE(expr);
    std::string names;
    for (const auto& h : expand_slurm_nodelist(expr, "S")) names += (names.empty() ? "" : "\n") + h;
    EXPECT_EQ(names, scontrol("hostnames", expr, conf));
  }
  for (const V& hosts : {V{"ccb-h0", "ccb-h1", "ccb-h2", "ccb-h3", "ccb-h5"}, V{"node001", "node002", "node003"},
                         V{"n8", "n9", "n10", "n08"}, V{"a1", "a2", "a3", "b05", "b06", "c", "a5"},
                         V{"n9", "n10", "n11", "n099", "n100"}, V{"a1", "b1", "a2"}}) {
    std::string list;
    for (const auto& h : hosts) list += (list.empty() ? "" : ",") + h;
    SCOPED_TRACE(list);
    EXPECT_EQ(compress_hostlist(hosts), scontrol("hostlist", list, conf));
  }
  std::filesystem::remove(conf);
}

}  // namespace
}  // namespace ccbench::launch
