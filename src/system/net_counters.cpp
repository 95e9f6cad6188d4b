#include "system/net_counters.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

namespace ccbench::system {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The whitespace-separated unsigned fields of `s`; false when one is not a number.
bool fields(std::string_view s, std::vector<std::uint64_t>& out) {
  out.clear();
  while (true) {
    s = trim(s);
    if (s.empty()) return true;
    std::size_t end = s.find_first_of(" \t");
    if (end == std::string_view::npos) end = s.size();
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + end, v);
    if (ec != std::errc() || ptr != s.data() + end) return false;
    out.push_back(v);
    s.remove_prefix(end);
  }
}

}  // namespace

std::vector<proof::DeviceBytes> parse_proc_net_dev(std::string_view text) {
  std::vector<proof::DeviceBytes> out;
  std::vector<std::uint64_t> values;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = trim(line.substr(0, colon));
    // 8 receive fields then 8 transmit fields: bytes are the first of each.
    if (name.empty() || name == "lo" || !fields(line.substr(colon + 1), values) || values.size() < 16) continue;
    out.push_back({std::string(name), values[0], values[8]});
  }
  return out;
}

std::vector<proof::DeviceBytes> read_net_counters(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_proc_net_dev(text.str());
}

std::vector<proof::DeviceBytes> counter_delta(const std::vector<proof::DeviceBytes>& start,
                                              const std::vector<proof::DeviceBytes>& end) {
  std::vector<proof::DeviceBytes> out;
  for (const proof::DeviceBytes& e : end) {
    proof::DeviceBytes d{e.name, e.rx_bytes, e.tx_bytes};
    for (const proof::DeviceBytes& s : start) {
      if (s.name != e.name) continue;
      d.rx_bytes = e.rx_bytes >= s.rx_bytes ? e.rx_bytes - s.rx_bytes : 0;
      d.tx_bytes = e.tx_bytes >= s.tx_bytes ? e.tx_bytes - s.tx_bytes : 0;
      break;
    }
    out.push_back(d);
  }
  return out;
}

std::string encode_devices(const std::vector<proof::DeviceBytes>& devices) {
  std::string out;
  for (const proof::DeviceBytes& d : devices) {
    if (!out.empty()) out += ';';
    out += d.name + ' ' + std::to_string(d.rx_bytes) + ' ' + std::to_string(d.tx_bytes);
  }
  return out;
}

std::vector<proof::DeviceBytes> decode_devices(std::string_view text) {
  std::vector<proof::DeviceBytes> out;
  std::vector<std::uint64_t> values;
  while (!text.empty()) {
    const std::size_t semi = text.find(';');
    const std::string_view item = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
    const std::size_t space = item.find(' ');
    if (space == std::string_view::npos || !fields(item.substr(space + 1), values) || values.size() != 2) continue;
    out.push_back({std::string(item.substr(0, space)), values[0], values[1]});
  }
  return out;
}

}  // namespace ccbench::system
