// What libfabric offers on this host (fi_getinfo), the default provider choice, and the JSON that a
// result file records about the chosen provider. No MPI.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::fabric {

// One fi_info entry, flattened for listing.
struct ProviderEntry {
  std::string provider;  // "shm", "tcp;ofi_rxm", "efa"
  std::string fabric;
  std::string domain;
  std::string version;   // provider version, "117.0"
  std::string endpoint;  // "rdm", "msg", "dgram"
  std::uint64_t caps = 0;
};

// Every provider/fabric/domain/endpoint fi_getinfo reports (no hints), duplicates removed.
std::vector<ProviderEntry> query_providers();
// The table `--list-providers` prints.
std::string format_provider_list(const std::vector<ProviderEntry>& entries);
// Provider names that offer reliable datagram endpoints (FI_EP_RDM), in fi_getinfo's order.
std::vector<std::string> rdm_provider_names(const std::vector<ProviderEntry>& entries);

// The default when -p is not given: efa if offered, else shm when every rank is on one host, else
// tcp, else the first RDM provider. Empty when nothing offers FI_EP_RDM.
std::string choose_default_provider(const std::vector<std::string>& rdm_providers, bool single_host);

// "tcp;ofi_rxm" -> "tcp": the core provider, which is also the result file's fabric.path.
std::string core_provider(std::string_view provider);

std::string endpoint_name(fi_ep_type type);
// Short capability names: "msg", "tagged", "rma", "hmem", ... in a fixed order.
std::vector<std::string> cap_names(std::uint64_t caps);
std::vector<std::string> mr_mode_names(int mr_mode);

// The result file's view of the chosen fi_info: provider, fabric, domain, versions, caps, mr_mode,
// limits, and the NIC attributes libfabric exposes (fi_info->nic: EFA device, bus, link).
nlohmann::json describe_info(const fi_info& info);

// "fi_getinfo: No data available (-61)".
std::string fi_error_text(const char* call, int rc);

}  // namespace ccbench::fabric
