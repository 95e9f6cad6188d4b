// --require-path's rules (core/path_proof, system/net_counters) on numbers written by hand.
#include "core/path_proof.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.hpp"
#include "system/net_counters.hpp"

namespace ccbench::proof {
namespace {

constexpr std::uint64_t MiB = 1ull << 20;

TEST(PathProof, ParsesEveryPathAndRefusesOthersNamingTheFlag) {
  EXPECT_EQ(parse_required_path("net").kind, PathKind::net);
  EXPECT_EQ(parse_required_path("efa").kind, PathKind::efa);
  EXPECT_EQ(parse_required_path("shm").kind, PathKind::shm);
  EXPECT_EQ(parse_required_path("nvlink").kind, PathKind::nvlink);
  EXPECT_EQ(parse_required_path("net:veth0").interface, "veth0");
  EXPECT_EQ(to_string(parse_required_path("tcp:eth1")), "tcp:eth1");
  try {
    parse_required_path("infiniband");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--require-path: 'infiniband' is not a path; expected one of efa, nvlink, net, net:IFACE, shm, tcp");
  }
  EXPECT_THROW(parse_required_path("shm:eth0"), UsageError);
  EXPECT_THROW(parse_required_path("net:"), UsageError);
  EXPECT_THROW(parse_required_path("net:a/b"), UsageError);
}

// Two hosts of two ranks each: ranks 0, 1 on host 0 and 2, 3 on host 1.
const std::vector<int> kTwoHosts = {0, 0, 1, 1};

TEST(PathProof, NeededBytesAreTheLowerBoundsByHand) {
  const std::uint64_t s = 8 * MiB;
  EXPECT_EQ(needed_rx_bytes({Op::allreduce, s, 4, 4, 0}, kTwoHosts, 1), s);
  EXPECT_EQ(needed_rx_bytes({Op::allgather, s, 4, 4, 0}, kTwoHosts, 0), s / 2);           // 2 remote blocks of S/4
  EXPECT_EQ(needed_rx_bytes({Op::reduce_scatter, s, 4, 4, 0}, kTwoHosts, 0), s / 2);      // 2 own outputs of S/4
  EXPECT_EQ(needed_rx_bytes({Op::alltoall, s, 4, 4, 0}, kTwoHosts, 1), 2 * 2 * (s / 4));  // 2 ranks x 2 remote x S/4
  EXPECT_EQ(needed_rx_bytes({Op::broadcast, s, 4, 4, 0}, kTwoHosts, 0), 0u);              // the root's host
  EXPECT_EQ(needed_rx_bytes({Op::broadcast, s, 4, 4, 0}, kTwoHosts, 1), s);
  EXPECT_EQ(needed_rx_bytes({Op::reduce, s, 4, 4, 3}, kTwoHosts, 1), s);
  EXPECT_EQ(needed_rx_bytes({Op::sendrecv, s, 4, 4, 0}, kTwoHosts, 1), s);  // rank 2 receives from rank 1
  // Every rank on one host: nothing has to cross.
  EXPECT_EQ(needed_rx_bytes({Op::allreduce, s, 4, 4, 0}, std::vector<int>{0, 0, 0, 0}, 0), 0u);
  // Per-peer bytes (a matrix): what the unit receives from ranks outside it.
  const std::vector<std::uint64_t> recv_from = {5, 7, 100, 200};
  EXPECT_EQ(needed_rx_bytes({Op::alltoallv, 0, 1, 4, 0}, kTwoHosts, 0, recv_from), 300u);
}

HostTraffic host(std::string name, std::uint64_t rx, std::uint64_t off_host, std::uint64_t peer) {
  return {std::move(name), {{"veth0", rx, rx}, {"mgmt0", 1000, 1000}}, off_host, peer};
}

TEST(PathProof, NetIsProvenWhenEveryHostsDevicesExplainItsOffHostBytes) {
  const std::vector<HostTraffic> hosts = {host("h0", 65 * MiB, 64 * MiB, 96 * MiB),
                                          host("h1", 60 * MiB, 64 * MiB, 96 * MiB)};
  const ProofResult r = judge_counters(parse_required_path("net"), hosts, false, "interface counters");
  EXPECT_EQ(r.verdict, Verdict::proven);
  ASSERT_TRUE(r.explained);
  EXPECT_NEAR(*r.explained, (60.0 * MiB + 1000) / (64.0 * MiB), 1e-12);
  EXPECT_EQ(r.carried_by, "net");
}

TEST(PathProof, NetFailsNamingTheHostWhoseDevicesStayedQuiet) {
  const std::vector<HostTraffic> hosts = {host("h0", 64 * MiB, 64 * MiB, 96 * MiB), host("h1", 0, 64 * MiB, 96 * MiB)};
  const ProofResult r = judge_counters(parse_required_path("net"), hosts, false, "interface counters");
  EXPECT_EQ(r.verdict, Verdict::failed);
  EXPECT_EQ(r.host, "h1");
  EXPECT_EQ(r.message,
            "--require-path net: host h1: its devices received 1000 B while the sweep needed at least 64.0 MiB to "
            "arrive from other hosts (0%): the ranks moved their bytes some other way (shared memory, loopback, or an "
            "RDMA device the kernel "
            "does not count) "
            "(counted: mgmt0 1000 B, veth0 0 B)");
}

TEST(PathProof, AnInterfaceNamedCountsAlone) {
  // The bytes went over the management link, not the data link the user named.
  std::vector<HostTraffic> hosts = {host("h0", 0, 64 * MiB, 96 * MiB), host("h1", 0, 64 * MiB, 96 * MiB)};
  for (auto& h : hosts) h.devices[1].rx_bytes = 70 * MiB;
  EXPECT_EQ(judge_counters(parse_required_path("net"), hosts, false, "x").verdict, Verdict::proven);
  EXPECT_EQ(judge_counters(parse_required_path("net:veth0"), hosts, false, "x").verdict, Verdict::failed);
}

TEST(PathProof, TooFewBytesIsUndecidedUntilTheEnd) {
  const std::vector<HostTraffic> hosts = {host("h0", 2 * MiB, 2 * MiB, 3 * MiB), host("h1", 2 * MiB, 2 * MiB, 3 * MiB)};
  EXPECT_EQ(judge_counters(parse_required_path("net"), hosts, false, "x").verdict, Verdict::undecided);
  EXPECT_EQ(judge_counters(parse_required_path("net"), hosts, true, "x").verdict, Verdict::failed);
}

TEST(PathProof, OneHostNeverProvesANetwork) {
  const std::vector<HostTraffic> hosts = {host("vm", 0, 0, 96 * MiB)};
  const ProofResult r = judge_counters(parse_required_path("tcp"), hosts, false, "interface counters");
  EXPECT_EQ(r.verdict, Verdict::failed);
  EXPECT_EQ(r.message,
            "--require-path tcp: every rank is on host vm: no byte had to cross a network, so the ranks moved them in "
            "shared memory or over loopback");
}

TEST(PathProof, ShmFailsWhenTheBytesCrossedANic) {
  const std::vector<HostTraffic> two = {host("h0", 64 * MiB, 64 * MiB, 96 * MiB),
                                        host("h1", 64 * MiB, 64 * MiB, 96 * MiB)};
  const ProofResult r = judge_counters(parse_required_path("shm"), two, false, "interface counters");
  EXPECT_EQ(r.verdict, Verdict::failed);
  EXPECT_EQ(r.host, "h0");
  EXPECT_EQ(r.carried_by, "net");
  const std::vector<HostTraffic> one = {host("vm", 0, 0, 96 * MiB)};
  EXPECT_EQ(judge_counters(parse_required_path("shm"), one, false, "interface counters").verdict, Verdict::proven);
}

TEST(NetCounters, ParsesProcNetDevSkippingLoopbackAndTakesDeltas) {
  const char* text =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier "
      "compressed\n"
      "    lo:    3267      29    0    0    0     0          0         0     3267      29    0    0    0     0       0 "
      "0\n"
      "  eth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n"
      "t1-h0d: 18446744073709551615 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n"
      "  bad: 1 2 3\n";
  const auto devices = system::parse_proc_net_dev(text);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "eth0");
  EXPECT_EQ(devices[0].rx_bytes, 1000u);
  EXPECT_EQ(devices[0].tx_bytes, 2000u);
  EXPECT_EQ(devices[1].rx_bytes, 18446744073709551615ull);
  const auto later = std::vector<DeviceBytes>{{"eth0", 5000, 2500}, {"t1-h0d", 3, 9}, {"new0", 7, 8}};
  const auto delta = system::counter_delta(devices, later);
  ASSERT_EQ(delta.size(), 3u);
  EXPECT_EQ(delta[0].rx_bytes, 4000u);
  EXPECT_EQ(delta[1].rx_bytes, 0u);  // went backwards: a reset, not 2^64 bytes
  EXPECT_EQ(delta[2].rx_bytes, 7u);
  EXPECT_EQ(system::decode_devices(system::encode_devices(later)).size(), 3u);
}

}  // namespace
}  // namespace ccbench::proof
