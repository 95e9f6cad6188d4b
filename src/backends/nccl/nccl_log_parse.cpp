#include "backends/nccl/nccl_log_parse.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ccbench::nccl {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == '.')) {
    text.remove_suffix(1);
  }
  return text;
}

// The first whitespace-delimited word of `text`, without trailing punctuation.
std::string_view first_word(std::string_view text) {
  text = trim(text);
  const auto end = text.find_first_of(" \t,;()");
  return trim(text.substr(0, end));
}

// The text after `key` in `line`, matched case-insensitively; npos when absent.
std::size_t find_after(std::string_view line, std::string_view line_lower, std::string_view key) {
  const auto at = line_lower.find(lower(key));
  return at == std::string_view::npos ? at : std::min(line.size(), at + key.size());
}

// The message part of an NCCL debug line ("host:pid:tid [dev] NCCL INFO message"), or the whole
// line for text without the prefix (aws-ofi-nccl uses NCCL's logger, so it has the prefix too).
std::string_view message_of(std::string_view line) {
  for (std::string_view tag : {"NCCL INFO ", "NCCL WARN ", "NCCL TRACE "}) {
    const auto at = line.find(tag);
    if (at != std::string_view::npos) return line.substr(at + tag.size());
  }
  return line;
}

void parse_line(std::string_view line, NcclLogInfo& info) {
  const std::string_view message = trim(message_of(line));
  if (message.empty()) return;
  const std::string low = lower(message);
  std::size_t at = 0;

  if (info.nccl_version.empty() && low.starts_with("nccl version ")) {
    info.nccl_version = std::string(first_word(message.substr(13)));
    return;
  }
  if (low.starts_with("using network ")) {
    info.network = std::string(trim(message.substr(14)));
    return;
  }
  if ((at = find_after(message, low, "cudaDriverVersion ")) != std::string_view::npos && at < message.size()) {
    info.cuda_driver = std::string(first_word(message.substr(at)));
    return;
  }
  // "NET/Plugin: Loaded net plugin Libfabric (v8)", older "NET/Plugin: Loaded net plugin NCCL RDMA Plugin v7 (v7)".
  if ((at = find_after(message, low, "loaded net plugin ")) != std::string_view::npos) {
    std::string_view rest = trim(message.substr(at));
    const auto paren = rest.rfind('(');
    if (paren != std::string_view::npos && rest.back() == ')') {
      info.net_plugin_api = std::string(trim(rest.substr(paren + 1, rest.size() - paren - 2)));
      rest = trim(rest.substr(0, paren));
    }
    info.net_plugin = std::string(rest);
    return;
  }
  if (info.net_plugin.empty() && (low.find("using internal net plugin") != std::string::npos ||
                                  low.find("using internal network plugin") != std::string::npos)) {
    info.net_plugin = "internal";
    return;
  }
  // aws-ofi-nccl: "NET/OFI Initializing aws-ofi-nccl 1.14.0-aws".
  if ((at = find_after(message, low, "initializing aws-ofi-nccl ")) != std::string_view::npos) {
    info.ofi_nccl_version = std::string(first_word(message.substr(at)));
    return;
  }
  if ((at = find_after(message, low, "using libfabric version ")) != std::string_view::npos) {
    info.libfabric_version = std::string(first_word(message.substr(at)));
    return;
  }
  // "NET/OFI Selected provider is efa, fabric is efa-direct (found 4 nics)"; older releases say
  // "Selected Provider is efa (found 4 nics)".
  if ((at = find_after(message, low, "selected provider is ")) != std::string_view::npos) {
    info.ofi_provider = std::string(first_word(message.substr(at)));
    if (const auto f = find_after(message, low, "fabric is "); f != std::string_view::npos) {
      info.ofi_fabric = std::string(first_word(message.substr(f)));
    }
    if (const auto n = find_after(message, low, "(found "); n != std::string_view::npos) {
      info.ofi_nics = std::string(first_word(message.substr(n)));
    }
    return;
  }
  // NCCL 2.28's transport lines (transport/p2p.cc, shm.cc, net.cc): "Channel 00/0 : 0[0] -> 1[1]
  // via P2P/CUMEM/read", "Channel 00 : 0[0] -> 1[1] via SHM/direct/direct", "Channel 00/0 : 0[0] ->
  // 1[0] [send] via NET/AWS Libfabric/0/GDRDMA": the transport is the rest of the line (a net
  // plugin's name may hold a space).
  if ((at = find_after(message, low, " via ")) != std::string_view::npos && low.starts_with("channel ")) {
    const std::string transport(trim(message.substr(at)));
    if (!transport.empty() && std::ranges::find(info.transports, transport) == info.transports.end()) {
      info.transports.push_back(transport);
    }
    return;
  }
  // "NCCL_P2P_DISABLE set by environment to 1."
  if (low.starts_with("nccl_") &&
      (at = find_after(message, low, " set by environment to ")) != std::string_view::npos) {
    const auto name_end = message.find(' ');
    info.env[std::string(message.substr(0, name_end))] = std::string(trim(message.substr(at)));
  }
}

}  // namespace

bool NcclLogInfo::empty() const {
  return nccl_version.empty() && network.empty() && net_plugin.empty() && ofi_nccl_version.empty() &&
         ofi_provider.empty() && transports.empty() && env.empty();
}

NcclLogInfo parse_nccl_log(std::string_view text) {
  NcclLogInfo info;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    parse_line(line, info);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return info;
}

std::string fabric_provider(const NcclLogInfo& info) {
  if (!info.ofi_provider.empty()) return lower(info.ofi_provider);
  const std::string network = lower(info.network);
  if (network == "socket") return "tcp";
  if (network == "ib") return "ib";
  return "";
}

TransportKind transport_kind(std::string_view transport) {
  const std::string low = lower(transport);
  if (low.starts_with("p2p/")) return TransportKind::nvlink;
  if (low.starts_with("shm/")) return TransportKind::shm;
  if (low.starts_with("net/") || low.starts_with("collnet")) return TransportKind::network;
  return TransportKind::unknown;
}

namespace {

// The network a run used: aws-ofi-nccl's provider, else NCCL's own net ("Socket", "IB"), else the
// name in the NET transport ("NET/Socket/0"), else "network".
std::string network_path(const NcclLogInfo& info) {
  if (std::string provider = fabric_provider(info); !provider.empty()) return provider;
  for (const std::string& t : info.transports) {
    if (transport_kind(t) != TransportKind::network) continue;
    const std::string low = lower(t);
    if (low.starts_with("net/socket")) return "tcp";
    if (low.starts_with("net/ib")) return "ib";
  }
  return "network";
}

}  // namespace

std::string fabric_path(const NcclLogInfo& info, const PathEnv& env, int nodes) {
  // What NCCL connected, when its log says.
  bool nvlink = false;
  bool shm = false;
  bool network = false;
  for (const std::string& t : info.transports) {
    const TransportKind kind = transport_kind(t);
    nvlink = nvlink || kind == TransportKind::nvlink;
    shm = shm || kind == TransportKind::shm;
    network = network || kind == TransportKind::network;
  }
  const int kinds = int{nvlink} + int{shm} + int{network};
  if (kinds > 1) return "mixed";
  if (network) return network_path(info);
  if (shm) return "shm";
  if (nvlink) return "nvlink";
  // Else what the environment allowed NCCL (the user's NCCL_P2P_DISABLE / NCCL_SHM_DISABLE, or
  // --path efa's).
  if (env.p2p_disabled && env.shm_disabled) return network_path(info);
  if (nodes > 1) return "mixed";
  return env.p2p_disabled ? "shm" : "nvlink";
}

bool env_flag_set(const char* value) {
  // NCCL reads both with strtol and disables at exactly 1 (graph/paths.cc, transport/shm.cc).
  if (value == nullptr || value[0] == '\0') return false;
  return std::strtol(value, nullptr, 0) == 1;
}

std::string short_hostname(std::string_view host) { return std::string(host.substr(0, host.find('.'))); }

std::string expand_debug_file(std::string_view pattern, std::string_view host, int pid) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char c = pattern[++i];
    if (c == '%') {
      out += '%';
    } else if (c == 'h') {
      out += short_hostname(host);
    } else if (c == 'p') {
      out += std::to_string(pid);
    } else {  // NCCL echoes what it does not know
      out += '%';
      out += c;
    }
  }
  return out;
}

LogPlan plan_nccl_log(std::string_view user_level, std::string_view user_file, std::string_view own_path,
                      std::string_view host, int pid) {
  const std::string level = lower(trim(user_level));
  const bool info_level = level == "info" || level == "trace";
  LogPlan plan;
  if (level.empty()) {  // NCCL would say nothing: capture INFO quietly into our own file
    plan.set_level = true;
    plan.set_file = true;
    plan.read_path = std::string(own_path);
  } else if (info_level && user_file.empty()) {  // it would go to stdout: to our file, echoed there
    plan.set_file = true;
    plan.echo_to_stdout = true;
    plan.read_path = std::string(own_path);
  } else if (info_level) {  // the user's own file, named as NCCL names it
    plan.read_path = expand_debug_file(user_file, host, pid);
  }
  // Any other level (VERSION, WARN, ABORT) is the user's choice of quiet: left alone, and the path
  // comes from the environment.
  return plan;
}

nlohmann::json to_json(const NcclLogInfo& info) {
  nlohmann::json out = nlohmann::json::object();
  auto put = [&](const char* key, const std::string& value) {
    if (!value.empty()) out[key] = value;
  };
  put("nccl_version", info.nccl_version);
  put("network", info.network);
  put("net_plugin", info.net_plugin);
  put("net_plugin_api", info.net_plugin_api);
  put("ofi_nccl", info.ofi_nccl_version);
  put("ofi_provider", info.ofi_provider);
  put("ofi_fabric", info.ofi_fabric);
  put("ofi_nics", info.ofi_nics);
  put("libfabric", info.libfabric_version);
  put("cuda_driver", info.cuda_driver);
  if (!info.transports.empty()) out["transports"] = info.transports;
  if (!info.env.empty()) out["env"] = info.env;
  return out;
}

std::vector<std::string> mapped_libraries(std::string_view maps, std::string_view needle) {
  std::vector<std::string> out;
  while (!maps.empty()) {
    const auto end = maps.find('\n');
    const std::string_view line = maps.substr(0, end);
    const auto slash = line.find('/');
    if (slash != std::string_view::npos) {
      const std::string_view path = trim(line.substr(slash));
      const auto base = path.rfind('/');
      const std::string_view file = base == std::string_view::npos ? path : path.substr(base + 1);
      if (file.find(needle) != std::string_view::npos && std::ranges::find(out, path) == out.end()) {
        out.emplace_back(path);
      }
    }
    if (end == std::string_view::npos) break;
    maps.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace ccbench::nccl
