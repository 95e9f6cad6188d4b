// NCCL INFO output as NCCL 2.2x and aws-ofi-nccl 1.x print it (sample lines, host/pid prefixes kept).
#include "backends/nccl/nccl_log_parse.hpp"

#include <gtest/gtest.h>

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
  EXPECT_EQ(fabric_path(info, "efa", 2), "efa");
  EXPECT_EQ(fabric_path(info, "all", 2), "mixed");
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
  EXPECT_EQ(fabric_path(info, "all", 1), "nvlink");
  EXPECT_EQ(fabric_path(info, "nvlink", 1), "nvlink");
  EXPECT_EQ(fabric_path(info, "efa", 1), "tcp");  // forced onto the network, but it was TCP
  ASSERT_EQ(info.transports.size(), 2u);
  EXPECT_EQ(info.transports[0], "P2P/CUMEM/read");
  EXPECT_EQ(info.transports[1], "SHM/direct/direct");
}

TEST(NcclLogParse, NothingToSay) {
  const NcclLogInfo info = parse_nccl_log("random text\n\nNCCL WARN something\n");
  EXPECT_TRUE(info.empty());
  EXPECT_EQ(fabric_provider(info), "");
  EXPECT_EQ(fabric_path(info, "efa", 2), "");
  EXPECT_EQ(fabric_path(info, "all", 2), "mixed");
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

}  // namespace
}  // namespace ccbench::nccl
