// NCCL INFO output as NCCL 2.2x and aws-ofi-nccl 1.x print it (sample lines, host/pid prefixes kept).
// The transport lines follow NCCL 2.28.9's formats (transport/p2p.cc "Channel %02d/%01d : %d[%d] ->
// %d[%d] via P2P/%s%s%s", shm.cc "Channel %02d : ... via SHM/%s/%s", net.cc "Channel %02d/%d : ...
// [send] via NET/%s/%d%s%s%s"; the prefix "%s:%d:%d [%d] NCCL INFO " of debug.cc).
#include "backends/nccl/nccl_log_parse.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ccbench::nccl {
namespace {

constexpr const char* kEfaLog = R"(ip-10-1-2-3:12345:12345 [0] NCCL INFO Bootstrap : Using ens32:10.1.2.3<0>
ip-10-1-2-3:12345:12345 [0] NCCL INFO cudaDriverVersion 12080
ip-10-1-2-3:12345:12345 [0] NCCL INFO NCCL version 2.26.2+cuda12.8
ip-10-1-2-3:12345:12367 [0] NCCL INFO NET/Plugin: Loaded net plugin Libfabric (v9)
ip-10-1-2-3:12345:12367 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.14.0-aws
ip-10-1-2-3:12345:12367 [0] NCCL INFO NET/OFI Using Libfabric version 1.22
ip-10-1-2-3:12345:12367 [0] NCCL INFO NET/OFI Using CUDA driver version 12080 with runtime 12080
ip-10-1-2-3:12345:12367 [0] NCCL INFO NET/OFI Configuring AWS-specific options
ip-10-1-2-3:12345:12367 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 16 nics)
ip-10-1-2-3:12345:12367 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.
ip-10-1-2-3:12345:12367 [0] NCCL INFO Using network Libfabric
ip-10-1-2-3:12345:12367 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Libfabric/0/GDRDMA
ip-10-1-2-3:12345:12367 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/Libfabric/0/GDRDMA
ip-10-1-2-3:12345:12367 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Libfabric/0/GDRDMA
)";

TEST(NcclLogParse, EfaThroughAwsOfiNccl) {
  const NcclLogInfo info = parse_nccl_log(kEfaLog);
  EXPECT_EQ(info.nccl_version, "2.26.2+cuda12.8");
  EXPECT_EQ(info.cuda_driver, "12080");
  EXPECT_EQ(info.net_plugin, "Libfabric");
  EXPECT_EQ(info.net_plugin_api, "v9");
  EXPECT_EQ(info.ofi_nccl_version, "1.14.0-aws");
  EXPECT_EQ(info.libfabric_version, "1.22");
  EXPECT_EQ(info.ofi_provider, "efa");
  EXPECT_EQ(info.ofi_fabric, "efa-direct");
  EXPECT_EQ(info.ofi_nics, "16");
  EXPECT_EQ(info.network, "Libfabric");
  ASSERT_EQ(info.transports.size(), 1u);
  EXPECT_EQ(info.transports[0], "NET/Libfabric/0/GDRDMA");
  EXPECT_EQ(info.env.at("NCCL_P2P_DISABLE"), "1");
  EXPECT_EQ(fabric_provider(info), "efa");
  // Only NET transports connected: the path is the network's, whatever the environment says.
  EXPECT_EQ(fabric_path(info, PathEnv{true, true}, 2), "efa");
  EXPECT_EQ(fabric_path(info, PathEnv{}, 2), "efa");
  const auto json = to_json(info);
  EXPECT_EQ(json["ofi_nccl"], "1.14.0-aws");
  EXPECT_EQ(json["ofi_provider"], "efa");
}

TEST(NcclLogParse, OlderPluginSpellings) {
  const NcclLogInfo info = parse_nccl_log(
      "host:1:1 [3] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\r\n"
      "host:1:1 [3] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v6)\n"
      "host:1:1 [3] NCCL INFO Using network AWS Libfabric\n");
  EXPECT_EQ(info.ofi_provider, "efa");
  EXPECT_EQ(info.ofi_nics, "4");
  EXPECT_TRUE(info.ofi_fabric.empty());
  EXPECT_EQ(info.net_plugin, "AWS Libfabric");
  EXPECT_EQ(info.net_plugin_api, "v6");
  EXPECT_EQ(info.network, "AWS Libfabric");
}

TEST(NcclLogParse, OneNodeWithoutPlugin) {
  const NcclLogInfo info = parse_nccl_log(
      "gpu-box:77:77 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
      "gpu-box:77:90 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.\n"
      "gpu-box:77:90 [0] NCCL INFO Failed to open libibverbs.so[.1]\n"
      "gpu-box:77:90 [0] NCCL INFO NET/Socket : Using [0]eth0:172.17.0.2<0>\n"
      "gpu-box:77:90 [0] NCCL INFO Using network Socket\n"
      "gpu-box:77:90 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "gpu-box:77:90 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via SHM/direct/direct\n");
  EXPECT_EQ(info.nccl_version, "2.28.9+cuda13.0");
  EXPECT_EQ(info.net_plugin, "internal");
  EXPECT_EQ(info.network, "Socket");
  EXPECT_EQ(fabric_provider(info), "tcp");
  EXPECT_EQ(fabric_path(info, PathEnv{}, 1), "mixed");  // P2P and SHM both connected
  ASSERT_EQ(info.transports.size(), 2u);
  EXPECT_EQ(info.transports[0], "P2P/CUMEM/read");
  EXPECT_EQ(info.transports[1], "SHM/direct/direct");
}

TEST(NcclLogParse, NothingToSay) {
  const NcclLogInfo info = parse_nccl_log("random text\n\nNCCL WARN something\n");
  EXPECT_TRUE(info.empty());
  EXPECT_EQ(fabric_provider(info), "");
  EXPECT_EQ(fabric_path(info, PathEnv{true, true}, 2), "network");  // forced off NVLink and SHM, net unknown
  EXPECT_EQ(fabric_path(info, PathEnv{}, 2), "mixed");
  EXPECT_TRUE(to_json(info).empty());
}

TEST(NcclLogParse, MappedNetPlugin) {
  const char* maps =
      "7f1c2a000000-7f1c2a100000 r-xp 00000000 103:01 123 /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so\n"
      "7f1c2a100000-7f1c2a200000 r--p 00100000 103:01 123 /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so\n"
      "7f1c2b000000-7f1c2b100000 r-xp 00000000 103:01 456 /opt/amazon/efa/lib/libfabric.so.1.25.0\n"
      "7ffd0000-7ffd1000 rw-p 00000000 00:00 0 [stack]\n";
  const auto plugins = mapped_libraries(maps, "libnccl-net");
  ASSERT_EQ(plugins.size(), 1u);
  EXPECT_EQ(plugins[0], "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
  EXPECT_EQ(mapped_libraries(maps, "libfabric").at(0), "/opt/amazon/efa/lib/libfabric.so.1.25.0");
  EXPECT_TRUE(mapped_libraries(maps, "libnccl-tuner").empty());
}

// Item 5: the path comes from what NCCL connected, then from the environment, never from the
// preset alone. Three runs as NCCL 2.28.9 logs them on rank 0.

// One p5 node, 8 GPUs, NCCL's default: every ring edge over NVLink (CUMEM, read mode).
constexpr const char* kNvlinkOnly = R"(p5-node-01:4242:4242 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
p5-node-01:4242:4297 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
p5-node-01:4242:4297 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read
p5-node-01:4242:4297 [0] NCCL INFO Channel 00/0 : 7[7] -> 0[0] via P2P/CUMEM/read
p5-node-01:4242:4297 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1
)";

// Two p5 nodes with NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 (EFA_ONLY=1): every edge, even
// inside a node, over aws-ofi-nccl (its net is named "AWS Libfabric": a space in the transport).
constexpr const char* kEfaOnly = R"(p5-node-01:4242:4242 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1
p5-node-01:4242:4242 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.
p5-node-01:4242:4297 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 32 nics)
p5-node-01:4242:4297 [0] NCCL INFO Using network AWS Libfabric
p5-node-01:4242:4297 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/AWS Libfabric/0/GDRDMA
p5-node-01:4242:4297 [0] NCCL INFO Channel 00/0 : 15[7] -> 0[0] [receive] via NET/AWS Libfabric/0/GDRDMA
p5-node-01:4242:4297 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/1(1)/GDRDMA/Shared
)";

// Two nodes, the default: NVLink inside the node, EFA between nodes.
constexpr const char* kMixed = R"(p5-node-01:4242:4297 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
p5-node-01:4242:4297 [0] NCCL INFO Channel 00/0 : 15[7] -> 0[0] [receive] via NET/AWS Libfabric/0/GDRDMA
p5-node-01:4242:4297 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA
)";

TEST(NcclFabricPath, NvlinkOnlyRun) {
  const NcclLogInfo info = parse_nccl_log(kNvlinkOnly);
  ASSERT_EQ(info.transports, std::vector<std::string>{"P2P/CUMEM/read"});
  EXPECT_EQ(transport_kind(info.transports[0]), TransportKind::nvlink);
  EXPECT_EQ(fabric_path(info, PathEnv{}, 1), "nvlink");
}

TEST(NcclFabricPath, EfaOnlyRunIsEfaEvenOnOneNode) {
  const NcclLogInfo info = parse_nccl_log(kEfaOnly);
  ASSERT_EQ(info.transports.size(), 2u);
  EXPECT_EQ(info.transports[0], "NET/AWS Libfabric/0/GDRDMA");  // the whole name, not "NET/AWS"
  EXPECT_EQ(info.transports[1], "NET/AWS Libfabric/1(1)/GDRDMA/Shared");
  EXPECT_EQ(info.env.at("NCCL_P2P_DISABLE"), "1");
  EXPECT_EQ(info.env.at("NCCL_SHM_DISABLE"), "1");
  // The user's EFA_ONLY=1 under --path all: recorded efa, not "nvlink" or "mixed".
  EXPECT_EQ(fabric_path(info, PathEnv{true, true}, 2), "efa");
  EXPECT_EQ(fabric_path(info, PathEnv{true, true}, 1), "efa");
  EXPECT_EQ(fabric_provider(info), "efa");
}

TEST(NcclFabricPath, MixedRun) {
  const NcclLogInfo info = parse_nccl_log(kMixed);
  ASSERT_EQ(info.transports.size(), 2u);
  EXPECT_EQ(fabric_path(info, PathEnv{}, 2), "mixed");
}

TEST(NcclFabricPath, FromTheEnvironmentWhenNothingConnectedYet) {
  const NcclLogInfo none;
  // The user's NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 (not a preset): the network.
  EXPECT_EQ(fabric_path(none, PathEnv{true, true}, 1), "network");
  NcclLogInfo efa;
  efa.ofi_provider = "efa";
  EXPECT_EQ(fabric_path(efa, PathEnv{true, true}, 1), "efa");
  EXPECT_EQ(fabric_path(none, PathEnv{true, false}, 1), "shm");
  EXPECT_EQ(fabric_path(none, PathEnv{}, 1), "nvlink");
  EXPECT_EQ(fabric_path(none, PathEnv{}, 2), "mixed");
  // NCCL takes the variables as integers and disables at exactly 1.
  EXPECT_TRUE(env_flag_set("1"));
  EXPECT_FALSE(env_flag_set("0"));
  EXPECT_FALSE(env_flag_set(""));
  EXPECT_FALSE(env_flag_set(nullptr));
  EXPECT_FALSE(env_flag_set("2"));
}

// NCCL 2.28's NCCL_DEBUG_FILE expansion (debug.cc): %h is the hostname cut at the first '.'.
TEST(NcclDebugFile, HostnameCutAtTheFirstDot) {
  EXPECT_EQ(expand_debug_file("/fsx/logs/nccl.%h.%p.log", "ip-10-1-2-3.ec2.internal", 4242),
            "/fsx/logs/nccl.ip-10-1-2-3.4242.log");
  EXPECT_EQ(expand_debug_file("nccl-%h", "gpu-box", 1), "nccl-gpu-box");
  EXPECT_EQ(expand_debug_file("100%%-%x-%", "h.a", 7), "100%-%x-%");
  EXPECT_EQ(short_hostname("p5-node-01.cluster.local"), "p5-node-01");
}

// Where rank 0 reads NCCL's log from, without changing what the user sees.
TEST(NcclDebugFile, LogPlanKeepsWhatTheUserSees) {
  const std::string own = "/tmp/ccbench-nccl-42.log";
  // Nothing set: INFO into our own file, quietly (NCCL would print nothing).
  LogPlan plan = plan_nccl_log("", "", own, "h.x", 42);
  EXPECT_TRUE(plan.set_level && plan.set_file && !plan.echo_to_stdout);
  EXPECT_EQ(plan.read_path, own);
  // NCCL_DEBUG=INFO and no file (our k8s manifest and sbatch): it would go to stdout, so it goes to
  // our file and is echoed to stdout.
  plan = plan_nccl_log("INFO", "", own, "h.x", 42);
  EXPECT_TRUE(!plan.set_level && plan.set_file && plan.echo_to_stdout);
  EXPECT_EQ(plan.read_path, own);
  plan = plan_nccl_log("trace", "", own, "h.x", 42);
  EXPECT_TRUE(plan.echo_to_stdout);
  // The user's own file: read where NCCL writes it.
  plan = plan_nccl_log("INFO", "/logs/n.%h.%p", own, "node7.example.com", 42);
  EXPECT_TRUE(!plan.set_level && !plan.set_file && !plan.echo_to_stdout);
  EXPECT_EQ(plan.read_path, "/logs/n.node7.42");
  // A quieter level chosen by the user: left alone.
  plan = plan_nccl_log("WARN", "", own, "h", 42);
  EXPECT_TRUE(plan.read_path.empty() && !plan.set_level && !plan.set_file && !plan.echo_to_stdout);
}

}  // namespace
}  // namespace ccbench::nccl
