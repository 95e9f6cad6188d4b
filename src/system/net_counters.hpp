// The kernel's byte counters of this host's network interfaces (/proc/net/dev, which is the reading
// process's network namespace, so an emulated host sees its own links): a snapshot before and after
// a window gives the bytes each interface carried, the MPI backend's proof that ranks on different
// hosts talked over a NIC (docs/path-proof.md). Plain C++, tested on text written by hand.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/path_proof.hpp"

namespace ccbench::system {

// Every interface but loopback ("lo"), in the file's order, with its cumulative rx and tx bytes.
// Lines that do not parse are skipped (the two header lines, a truncated line).
std::vector<proof::DeviceBytes> parse_proc_net_dev(std::string_view text);
// The file's interfaces; empty when it cannot be read.
std::vector<proof::DeviceBytes> read_net_counters(const std::filesystem::path& path = "/proc/net/dev");

// end - start per device named in both (0 for a counter that went backwards: an interface reset);
// a device that appeared during the window counts from 0.
std::vector<proof::DeviceBytes> counter_delta(const std::vector<proof::DeviceBytes>& start,
                                              const std::vector<proof::DeviceBytes>& end);

// "name rx tx;name rx tx" and back: how a host's counters travel to rank 0 over the channel.
std::string encode_devices(const std::vector<proof::DeviceBytes>& devices);
std::vector<proof::DeviceBytes> decode_devices(std::string_view text);

}  // namespace ccbench::system
