#include "system/host_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

extern char** environ;

namespace ccbench::system {
namespace fs = std::filesystem;
namespace {

std::string read_first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::uint64_t meminfo_field(const std::string& root, const std::string& field) {
  std::ifstream in(fs::path(root) / "proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == field + ":") return kib * 1024;
  }
  return 0;
}

}  // namespace

std::uint64_t memory_available_bytes(const std::string& root) { return meminfo_field(root, "MemAvailable"); }

std::vector<EfaDevice> read_efa_devices(const std::string& root) {
  std::vector<EfaDevice> devices;
  const fs::path base = fs::path(root) / "sys/class/infiniband";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    const fs::path dev = entry.path() / "device";
    const std::string driver = fs::read_symlink(dev / "driver", ec).filename().string();
    if (ec || driver != "efa") {
      ec.clear();
      continue;
    }
    EfaDevice d;
    d.name = entry.path().filename().string();
    d.vendor_id = read_first_line(dev / "vendor");
    d.device_id = read_first_line(dev / "device");
    d.subsystem_id = read_first_line(dev / "subsystem_device");
    d.pci_address = fs::canonical(dev, ec).filename().string();
    ec.clear();
    devices.push_back(std::move(d));
  }
  std::ranges::sort(devices, {}, &EfaDevice::name);
  return devices;
}

HostInfo read_host_info(const std::string& root) {
  HostInfo host;
  char name[256] = {};
  if (root == "/" && ::gethostname(name, sizeof name - 1) == 0) {
    host.hostname = name;
  } else {
    host.hostname = read_first_line(fs::path(root) / "etc/hostname");
  }
  std::ifstream cpuinfo(fs::path(root) / "proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0 && host.cpu_model.empty()) {
      host.cpu_model = trim(line.substr(line.find(':') + 1));
    }
    if (line.rfind("processor", 0) == 0) ++host.cpu_count;
  }
  if (host.cpu_count == 0) host.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
  host.memory_bytes = meminfo_field(root, "MemTotal");
  host.memory_available_bytes = meminfo_field(root, "MemAvailable");
  host.product_name = read_first_line(fs::path(root) / "sys/devices/virtual/dmi/id/product_name");
  host.efa = read_efa_devices(root);
  // GPUs without linking CUDA: the NVIDIA driver lists each one under /proc/driver/nvidia/gpus.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(root) / "proc/driver/nvidia/gpus", ec)) {
    GpuDevice gpu;
    gpu.pci_bus_id = entry.path().filename().string();
    std::ifstream info(entry.path() / "information");
    while (std::getline(info, line)) {
      if (line.rfind("Model:", 0) == 0) gpu.model = trim(line.substr(6));
    }
    host.gpus.push_back(std::move(gpu));
  }
  std::ranges::sort(host.gpus, {}, &GpuDevice::pci_bus_id);
  return host;
}

nlohmann::json to_json(const HostInfo& host) {
  nlohmann::json efa = nlohmann::json::array();
  for (const auto& d : host.efa) {
    efa.push_back({{"name", d.name},
                   {"vendor_id", d.vendor_id},
                   {"device_id", d.device_id},
                   {"subsystem_id", d.subsystem_id},
                   {"pci_address", d.pci_address}});
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : host.gpus) gpus.push_back({{"model", g.model}, {"pci_bus_id", g.pci_bus_id}});
  return {{"hostname", host.hostname},
          {"cpu", host.cpu_model},
          {"cpu_count", host.cpu_count},
          {"memory_bytes", host.memory_bytes},
          {"product_name", host.product_name},
          {"gpus", gpus},
          {"efa", efa}};
}

nlohmann::json captured_environment() {
  static constexpr const char* kPrefixes[] = {"NCCL_", "FI_", "OMPI_", "UCX_", "CUDA_", "SLURM_", "OFI_NCCL_", "PMIX_RANK"};
  std::map<std::string, std::string> found;
  for (char** env = environ; env != nullptr && *env != nullptr; ++env) {
    const std::string entry = *env;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = entry.substr(0, eq);
    for (const char* prefix : kPrefixes) {
      if (key.rfind(prefix, 0) == 0) {
        found[key] = entry.substr(eq + 1);
        break;
      }
    }
  }
  return nlohmann::json(found);
}

const nlohmann::json& environment_at_startup() {
  static const nlohmann::json snapshot = captured_environment();
  return snapshot;
}

}  // namespace ccbench::system
