#include "fabric/providers.hpp"

#include <fmt/format.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace ccbench::fabric {
namespace {

std::string str(const char* s) { return s != nullptr ? s : ""; }

std::string version_text(std::uint32_t v) { return fmt::format("{}.{}", FI_MAJOR(v), FI_MINOR(v)); }

}  // namespace

std::string fi_error_text(const char* call, int rc) {
  const int code = rc < 0 ? -rc : rc;
  return fmt::format("{}: {} ({})", call, fi_strerror(code), rc);
}

std::string endpoint_name(fi_ep_type type) {
  switch (type) {
    case FI_EP_MSG:
      return "msg";
    case FI_EP_DGRAM:
      return "dgram";
    case FI_EP_RDM:
      return "rdm";
    default:
      return "other";
  }
}

std::vector<std::string> cap_names(std::uint64_t caps) {
  static const std::pair<std::uint64_t, const char*> kCaps[] = {
      {FI_MSG, "msg"},
      {FI_TAGGED, "tagged"},
      {FI_RMA, "rma"},
      {FI_ATOMIC, "atomic"},
      {FI_HMEM, "hmem"},
      {FI_MULTI_RECV, "multi_recv"},
      {FI_LOCAL_COMM, "local_comm"},
      {FI_REMOTE_COMM, "remote_comm"},
  };
  std::vector<std::string> out;
  for (const auto& [bit, text] : kCaps) {
    if ((caps & bit) != 0) out.emplace_back(text);
  }
  return out;
}

std::vector<std::string> mr_mode_names(int mr_mode) {
  static const std::pair<int, const char*> kModes[] = {
      {FI_MR_LOCAL, "FI_MR_LOCAL"},         {FI_MR_RAW, "FI_MR_RAW"},           {FI_MR_VIRT_ADDR, "FI_MR_VIRT_ADDR"},
      {FI_MR_ALLOCATED, "FI_MR_ALLOCATED"}, {FI_MR_PROV_KEY, "FI_MR_PROV_KEY"}, {FI_MR_MMU_NOTIFY, "FI_MR_MMU_NOTIFY"},
      {FI_MR_RMA_EVENT, "FI_MR_RMA_EVENT"}, {FI_MR_ENDPOINT, "FI_MR_ENDPOINT"}, {FI_MR_HMEM, "FI_MR_HMEM"},
  };
  std::vector<std::string> out;
  for (const auto& [bit, text] : kModes) {
    if ((mr_mode & bit) != 0) out.emplace_back(text);
  }
  return out;
}

std::string core_provider(std::string_view provider) {
  const auto semi = provider.find(';');
  return std::string(provider.substr(0, semi));
}

std::vector<ProviderEntry> query_providers() {
  fi_info* list = nullptr;
  std::vector<ProviderEntry> out;
  if (fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), nullptr, nullptr, 0, nullptr, &list) != 0) {
    return out;
  }
  std::set<std::tuple<std::string, std::string, std::string, std::string>> seen;
  for (const fi_info* i = list; i != nullptr; i = i->next) {
    ProviderEntry e;
    e.provider = str(i->fabric_attr->prov_name);
    e.fabric = str(i->fabric_attr->name);
    e.domain = str(i->domain_attr->name);
    e.version = version_text(i->fabric_attr->prov_version);
    e.endpoint = endpoint_name(i->ep_attr->type);
    e.caps = i->caps;
    if (!seen.insert({e.provider, e.fabric, e.domain, e.endpoint}).second) continue;
    out.push_back(std::move(e));
  }
  fi_freeinfo(list);
  return out;
}

std::string format_provider_list(const std::vector<ProviderEntry>& entries) {
  std::size_t wp = 8, wf = 6, wd = 6;
  for (const auto& e : entries) {
    wp = std::max(wp, e.provider.size());
    wf = std::max(wf, e.fabric.size());
    wd = std::max(wd, e.domain.size());
  }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<7}  {:<8}  {}\n", "provider", wp, "fabric", wf, "domain",
                                wd, "version", "endpoint", "caps");
  for (const auto& e : entries) {
    std::string caps;
    for (const auto& c : cap_names(e.caps)) caps += (caps.empty() ? "" : ",") + c;
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<7}  {:<8}  {}\n", e.provider, wp, e.fabric, wf, e.domain, wd,
                       e.version, e.endpoint, caps);
  }
  if (entries.empty()) out += "(fi_getinfo reported no providers; check FI_PROVIDER and the libfabric install)\n";
  return out;
}

std::vector<std::string> rdm_provider_names(const std::vector<ProviderEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    if (e.endpoint == "rdm" && std::ranges::find(out, e.provider) == out.end()) out.push_back(e.provider);
  }
  return out;
}

std::string choose_default_provider(const std::vector<std::string>& rdm_providers, bool single_host) {
  auto offered = [&](std::string_view core) {
    for (const auto& p : rdm_providers) {
      if (core_provider(p) == core) return true;
    }
    return false;
  };
  if (offered("efa")) return "efa";
  if (single_host && offered("shm")) return "shm";
  if (offered("tcp")) return "tcp";
  return rdm_providers.empty() ? "" : rdm_providers.front();
}

nlohmann::json describe_info(const fi_info& info) {
  const std::string provider = str(info.fabric_attr->prov_name);
  nlohmann::json caps = {{"msg", (info.caps & FI_MSG) != 0},
                         {"tagged", (info.caps & FI_TAGGED) != 0},
                         {"rma", (info.caps & FI_RMA) != 0},
                         {"hmem", (info.caps & FI_HMEM) != 0}};
  nlohmann::json j = {
      {"path", core_provider(provider)},
      {"provider", provider},
      {"fabric_name", str(info.fabric_attr->name)},
      {"domain", str(info.domain_attr->name)},
      {"provider_version", version_text(info.fabric_attr->prov_version)},
      {"api_version", version_text(info.fabric_attr->api_version)},
      {"endpoint", endpoint_name(info.ep_attr->type)},
      {"caps", caps},
      {"cap_names", cap_names(info.caps)},
      {"mr_mode", mr_mode_names(info.domain_attr->mr_mode)},
      {"mr_key_size", info.domain_attr->mr_key_size},
      {"max_msg_size", info.ep_attr->max_msg_size},
      {"inject_size", info.tx_attr->inject_size},
      {"tx_size", info.tx_attr->size},
      {"rx_size", info.rx_attr->size},
      {"data_progress", info.domain_attr->data_progress == FI_PROGRESS_AUTO ? "auto" : "manual"},
  };
  if (info.nic != nullptr) {
    nlohmann::json nic = nlohmann::json::object();
    if (const fi_device_attr* d = info.nic->device_attr) {
      nic["device"] = {{"name", str(d->name)},
                       {"device_id", str(d->device_id)},
                       {"device_version", str(d->device_version)},
                       {"vendor_id", str(d->vendor_id)},
                       {"driver", str(d->driver)},
                       {"firmware", str(d->firmware)}};
    }
    if (const fi_bus_attr* b = info.nic->bus_attr; b != nullptr && b->bus_type == FI_BUS_PCI) {
      const fi_pci_attr& p = b->attr.pci;
      nic["pci_address"] = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", p.domain_id, p.bus_id, p.device_id, p.function_id);
    }
    if (const fi_link_attr* l = info.nic->link_attr) {
      nic["link"] = {{"address", str(l->address)},
                     {"mtu", l->mtu},
                     {"speed_bps", l->speed},
                     {"state", l->state == FI_LINK_UP     ? "up"
                               : l->state == FI_LINK_DOWN ? "down"
                                                          : "unknown"},
                     {"network_type", str(l->network_type)}};
    }
    j["nic"] = nic;
  }
  return j;
}

}  // namespace ccbench::fabric
