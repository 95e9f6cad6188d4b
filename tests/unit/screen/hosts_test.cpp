#include "screen/hosts.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace ccbench::screen {
namespace {

using V = std::vector<std::string>;

TEST(ScreenHosts, CommaList) {
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

TEST(ScreenHosts, OpenMpiHostfile) {
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

TEST(ScreenHosts, SlurmNodelist) {
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

TEST(ScreenHosts, SlurmRangeAtTheLargestNumberDoesNotWrap) {
  // Before: the counter wrapped past 2^64 - 1 and the expansion never ended.
  EXPECT_EQ(expand_slurm_nodelist("n[18446744073709551615]", "v"), (std::vector<std::string>{"n18446744073709551615"}));
  EXPECT_EQ(expand_slurm_nodelist("n[18446744073709551614-18446744073709551615]", "v").size(), 2u);
  EXPECT_THROW(expand_slurm_nodelist("n[0-18446744073709551615]", "v"), UsageError);
}

}  // namespace
}  // namespace ccbench::screen
