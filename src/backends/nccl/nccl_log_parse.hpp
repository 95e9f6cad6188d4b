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

// The provider to record in the result file's fabric section ("efa", "tcp", "ib" or "").
std::string fabric_provider(const NcclLogInfo& info);

enum class TransportKind { nvlink, shm, network, unknown };
// "P2P/CUMEM/read" nvlink, "SHM/direct/direct" shm, "NET/AWS Libfabric/0/GDRDMA" network.
TransportKind transport_kind(std::string_view transport);

// What the environment allows NCCL: NCCL_P2P_DISABLE / NCCL_SHM_DISABLE as NCCL reads them (the
// user's, or --path efa's), whatever the preset says.
struct PathEnv {
  bool p2p_disabled = false;
  bool shm_disabled = false;
};
// NCCL_P2P_DISABLE / NCCL_SHM_DISABLE's value as NCCL takes it: an integer (strtol), disabling at 1.
bool env_flag_set(const char* value);

// The fabric path of the run: from the transports NCCL connected (its INFO log) when known,
// "mixed" when more than one kind, the network's provider ("efa", "tcp", "ib", else "network")
// for network only; else from the environment: P2P and SHM disabled -> the network, several nodes
// -> "mixed", one node -> "shm" with P2P disabled, else "nvlink".
std::string fabric_path(const NcclLogInfo& info, const PathEnv& env, int nodes);

// NCCL_DEBUG_FILE as NCCL 2.28 expands it (debug.cc): %h the hostname cut at the first '.', %p the
// pid, %% a '%', anything else kept as written.
std::string short_hostname(std::string_view host);
std::string expand_debug_file(std::string_view pattern, std::string_view host, int pid);

// How rank 0 reads NCCL's INFO log without changing what the user sees.
struct LogPlan {
  std::string read_path;        // the log file to parse; "" = none
  bool set_level = false;       // set NCCL_DEBUG=INFO (the user set no level: NCCL would print nothing)
  bool set_file = false;        // set NCCL_DEBUG_FILE=read_path
  bool echo_to_stdout = false;  // copy the file to stdout as it grows (the user's INFO went there)
};
LogPlan plan_nccl_log(std::string_view user_level, std::string_view user_file, std::string_view own_path,
                      std::string_view host, int pid);

nlohmann::json to_json(const NcclLogInfo& info);

// Paths of the libraries mapped in /proc/<pid>/maps text whose file name contains `needle`
// ("libnccl-net" finds the net plugin NCCL loaded even when its INFO output went elsewhere).
std::vector<std::string> mapped_libraries(std::string_view maps, std::string_view needle);

}  // namespace ccbench::nccl
