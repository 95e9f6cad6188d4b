// Reads what NCCL (and the aws-ofi-nccl plugin) say about themselves at NCCL_DEBUG=INFO: the
// version, the network and net plugin actually used, the libfabric provider. Plain C++ so it is
// unit-tested on sample text without a GPU.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::nccl {

struct NcclLogInfo {
  std::string nccl_version;                // "2.28.9+cuda13.0" from "NCCL version 2.28.9+cuda13.0"
  std::string network;                     // "AWS Libfabric", "Libfabric", "Socket", "IB" from "Using network X"
  std::string net_plugin;                  // "Libfabric", "internal", or the plugin's own name
  std::string net_plugin_api;              // "v8" from "Loaded net plugin X (v8)"
  std::string ofi_nccl_version;            // "1.14.0-aws" from "NET/OFI Initializing aws-ofi-nccl 1.14.0-aws"
  std::string ofi_provider;                // "efa" from "NET/OFI Selected provider is efa"
  std::string ofi_fabric;                  // "efa-direct" from "..., fabric is efa-direct"
  std::string ofi_nics;                    // "4" from "(found 4 nics)"
  std::string libfabric_version;           // "1.22" from "NET/OFI Using Libfabric version 1.22"
  std::string cuda_driver;                 // "13000" from "cudaDriverVersion 13000"
  std::vector<std::string> transports;     // "P2P/CUMEM/read", "NET/Libfabric/0/GDRDMA" from "via" lines
  std::map<std::string, std::string> env;  // "NCCL_P2P_DISABLE set by environment to 1."

  bool empty() const;
};

// Parses NCCL's debug output (whole lines; other text is ignored).
NcclLogInfo parse_nccl_log(std::string_view text);

// The fabric path the log shows, given the preset and node count: "efa" when aws-ofi-nccl chose
// the efa provider, "tcp" for NCCL's Socket transport, "ib" for verbs; on one node without a
// forced network, "nvlink"; across nodes with the default mix, "mixed"; "" when unknown.
std::string fabric_path(const NcclLogInfo& info, std::string_view preset, int nodes);

// The provider to record in the result file's fabric section ("efa", "tcp", "ib" or "").
std::string fabric_provider(const NcclLogInfo& info);

nlohmann::json to_json(const NcclLogInfo& info);

// Paths of the libraries mapped in /proc/<pid>/maps text whose file name contains `needle`
// ("libnccl-net" finds the net plugin NCCL loaded even when its INFO output went elsewhere).
std::vector<std::string> mapped_libraries(std::string_view maps, std::string_view needle);

}  // namespace ccbench::nccl
