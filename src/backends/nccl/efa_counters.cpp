#include "backends/nccl/efa_counters.hpp"

#include <fstream>
#include <system_error>

namespace ccbench::nccl {
namespace {

namespace fs = std::filesystem;

std::string read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

bool is_efa(const fs::path& device_dir) {
  std::error_code ec;
  const fs::path driver = fs::read_symlink(device_dir / "device" / "driver", ec);
  if (!ec) return driver.filename() == "efa";
  return read_line(device_dir / "device" / "vendor") == "0x1d0f";
}

}  // namespace

const char* const kEfaCounterNames[5] = {"tx_bytes", "rx_bytes", "rdma_read_bytes", "rdma_write_bytes", "retrans_pkts"};

EfaCounters read_efa_counters(const fs::path& root) {
  EfaCounters out;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  for (const auto& device : fs::directory_iterator(root, ec)) {
    if (!is_efa(device.path())) continue;
    const fs::path ports = device.path() / "ports";
    for (const auto& port : fs::directory_iterator(ports, ec)) {
      const fs::path counters = port.path() / "hw_counters";
      std::map<std::string, std::uint64_t> values;
      for (const char* name : kEfaCounterNames) {
        const std::string text = read_line(counters / name);
        if (text.empty()) continue;
        try {
          values[name] = std::stoull(text);
        } catch (const std::exception&) {
        }
      }
      if (!values.empty()) out[device.path().filename().string() + "/" + port.path().filename().string()] = values;
    }
  }
  return out;
}

EfaCounters counter_delta(const EfaCounters& start, const EfaCounters& end) {
  EfaCounters out;
  for (const auto& [port, values] : end) {
    const auto before = start.find(port);
    for (const auto& [name, value] : values) {
      std::uint64_t base = 0;
      if (before != start.end()) {
        const auto it = before->second.find(name);
        if (it != before->second.end()) base = it->second;
      }
      out[port][name] = value >= base ? value - base : 0;
    }
  }
  return out;
}

nlohmann::json to_json(const EfaCounters& counters) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [port, values] : counters) out[port] = values;
  return out;
}

}  // namespace ccbench::nccl
