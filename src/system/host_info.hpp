// What one host looks like from inside: read from /proc and /sys, no MPI, no CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccbench::system {

struct EfaDevice {
  std::string name;       // /sys/class/infiniband/<name>
  std::string vendor_id;  // raw PCI ids as the kernel prints them, e.g. "0x1d0f"
  std::string device_id;
  std::string subsystem_id;
  std::string pci_address;
};

struct GpuDevice {
  std::string model;
  std::string pci_bus_id;
};

struct HostInfo {
  std::string hostname;
  std::string cpu_model;
  int cpu_count = 0;
  std::uint64_t memory_bytes = 0;
  std::uint64_t memory_available_bytes = 0;
  std::string product_name;  // DMI product name: the EC2 instance type on AWS
  std::vector<EfaDevice> efa;
  std::vector<GpuDevice> gpus;
};

// Reads everything under `sysfs_root` ("/" normally; tests point it at a fake tree).
HostInfo read_host_info(const std::string& root = "/");

// EFA devices: infiniband devices whose driver is efa (p6-b200 also lists NVLink controllers there).
std::vector<EfaDevice> read_efa_devices(const std::string& root = "/");

// MemAvailable from /proc/meminfo, in bytes (0 when unknown).
std::uint64_t memory_available_bytes(const std::string& root = "/");

nlohmann::json to_json(const HostInfo& host);

// The environment variables that change how collectives behave: NCCL_*, FI_*, OMPI_*, UCX_*, CUDA_*,
// SLURM_*, plus a few more that matter (OFI_NCCL_*, PMIX_RANK...). Sorted by name.
nlohmann::json captured_environment();
// captured_environment() as it was at the first call: commands call it before a backend sets
// variables of its own (NCCL_DEBUG_FILE, NCCL_P2P_DISABLE for --path efa; those are recorded by the
// backend), so a result file shows the environment the user ran with.
const nlohmann::json& environment_at_startup();

}  // namespace ccbench::system
