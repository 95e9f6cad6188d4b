// EFA traffic counters (/sys/class/infiniband/<dev>/ports/<p>/hw_counters/): a snapshot at the
// start of a run and one at the end give the bytes that crossed each EFA device, the proof that a
// run said to measure EFA did use it. Plain C++, tested on a fake sysfs tree.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace ccbench::nccl {

// "<device>/<port>" -> counter name -> value, for the counters in kEfaCounters.
using EfaCounters = std::map<std::string, std::map<std::string, std::uint64_t>>;

// tx_bytes, rx_bytes, rdma_read_bytes, rdma_write_bytes, retrans_pkts (those that exist).
extern const char* const kEfaCounterNames[5];

// Devices whose driver is efa (device/driver links to .../efa) or, when the driver link is
// missing, whose PCI vendor is Amazon (0x1d0f). Empty when the directory does not exist.
EfaCounters read_efa_counters(const std::filesystem::path& root = "/sys/class/infiniband");

// end - start per counter (0 when a counter went backwards, e.g. a driver reload).
EfaCounters counter_delta(const EfaCounters& start, const EfaCounters& end);

nlohmann::json to_json(const EfaCounters& counters);

}  // namespace ccbench::nccl
