#include "core/path_proof.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/types.hpp"

namespace ccbench::proof {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// "1000 B", "64.0 MiB": a byte count as a person reads it in the one line.
std::string human_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? kMax : out;
}

std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? kMax : out;
}

// The bytes the host's devices received that count for `required`: every listed device, or the one
// interface it names.
std::uint64_t device_rx(const HostTraffic& host, const RequiredPath& required) {
  std::uint64_t rx = 0;
  for (const DeviceBytes& d : host.devices) {
    if (!required.interface.empty() && d.name != required.interface) continue;
    rx = add_sat(rx, d.rx_bytes);
  }
  return rx;
}

// "veth0 12.0 MiB, veth1 1.0 KiB": what carried the host's bytes, busiest first.
std::string device_list(const HostTraffic& host) {
  std::vector<DeviceBytes> devices = host.devices;
  std::ranges::sort(devices, [](const DeviceBytes& a, const DeviceBytes& b) { return a.rx_bytes > b.rx_bytes; });
  std::string out;
  for (const DeviceBytes& d : devices) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", d.name, human_bytes(d.rx_bytes));
  }
  return out.empty() ? "no device" : out;
}

std::string share_text(double share) { return fmt::format("{:.0f}%", share * 100.0); }

nlohmann::json host_json(const HostTraffic& host, const RequiredPath& required) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceBytes& d : host.devices) {
    devices.push_back({{"name", d.name}, {"rx_bytes", d.rx_bytes}, {"tx_bytes", d.tx_bytes}});
  }
  const std::uint64_t rx = device_rx(host, required);
  nlohmann::json out = {{"host", host.host},
                        {"devices", devices},
                        {"counted_rx_bytes", rx},
                        {"off_host_rx_bytes", host.off_host_rx_bytes},
                        {"peer_rx_bytes", host.peer_rx_bytes}};
  if (host.off_host_rx_bytes > 0) {
    out["explained"] = static_cast<double>(rx) / static_cast<double>(host.off_host_rx_bytes);
  }
  return out;
}

}  // namespace

std::string_view name(PathKind kind) {
  switch (kind) {
    case PathKind::efa:
      return "efa";
    case PathKind::nvlink:
      return "nvlink";
    case PathKind::net:
      return "net";
    case PathKind::shm:
      return "shm";
    case PathKind::tcp:
      return "tcp";
  }
  return "net";
}

std::string_view name(Verdict verdict) {
  switch (verdict) {
    case Verdict::proven:
      return "proven";
    case Verdict::failed:
      return "failed";
    case Verdict::undecided:
      return "undecided";
  }
  return "undecided";
}

RequiredPath parse_required_path(std::string_view text) {
  const std::size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  RequiredPath out;
  if (kind == "efa") {
    out.kind = PathKind::efa;
  } else if (kind == "nvlink") {
    out.kind = PathKind::nvlink;
  } else if (kind == "net") {
    out.kind = PathKind::net;
  } else if (kind == "shm") {
    out.kind = PathKind::shm;
  } else if (kind == "tcp") {
    out.kind = PathKind::tcp;
  } else {
    throw UsageError(fmt::format("--require-path: '{}' is not a path; expected one of {}", text, kRequirePathValues));
  }
  if (colon != std::string_view::npos) {
    const std::string_view iface = text.substr(colon + 1);
    // An interface name as the kernel takes it: 1-15 characters, no '/', no blank.
    const bool valid = !iface.empty() && iface.size() <= 15 && iface.find_first_of("/ \t:") == std::string_view::npos &&
                       iface != "." && iface != "..";
    if (out.kind != PathKind::net && out.kind != PathKind::tcp) {
      throw UsageError(fmt::format("--require-path {}: only net and tcp take an interface (net:IFACE)", text));
    }
    if (!valid) throw UsageError(fmt::format("--require-path {}: '{}' is not an interface name", text, iface));
    out.interface = std::string(iface);
  }
  return out;
}

std::string to_string(const RequiredPath& path) {
  std::string out(name(path.kind));
  if (!path.interface.empty()) out += ":" + path.interface;
  return out;
}

std::uint64_t needed_rx_bytes(const OpBytes& op, std::span<const int> unit_of_rank, int unit,
                              std::span<const std::uint64_t> recv_from) {
  const int n = op.nranks;
  if (n < 2 || static_cast<int>(unit_of_rank.size()) < n) return 0;
  int inside = 0;  // ranks of the unit
  for (int r = 0; r < n; ++r) inside += unit_of_rank[static_cast<std::size_t>(r)] == unit ? 1 : 0;
  if (inside == 0 || inside == n) return 0;  // nothing outside, or nothing inside
  const auto in_unit = [&](int r) { return unit_of_rank[static_cast<std::size_t>(r)] == unit; };
  if (!recv_from.empty()) {
    // Matrix ops and sendrecv patterns: what the unit's ranks receive from ranks outside it.
    std::uint64_t total = 0;
    for (int r = 0; r < n && r < static_cast<int>(recv_from.size()); ++r) {
      if (!in_unit(r)) total = add_sat(total, recv_from[static_cast<std::size_t>(r)]);
    }
    return total;
  }
  const std::uint64_t s = op.bytes;
  const int root = std::clamp(op.root, 0, n - 1);
  // A block of the ops whose S is a total over the ranks: S / n.
  const std::uint64_t block = s / static_cast<std::uint64_t>(n);
  const auto outside = static_cast<std::uint64_t>(n - inside);
  switch (op.op) {
    case Op::allreduce:
      // Every output element depends on inputs outside the unit: at least one element's worth of
      // them must arrive for each, whatever the algorithm (reduced on the way or not).
      return s;
    case Op::broadcast:
      return in_unit(root) ? 0 : s;
    case Op::reduce:
      return in_unit(root) ? s : 0;
    case Op::allgather:
      return mul_sat(block, outside);
    case Op::reduce_scatter:
      // Each of the unit's output blocks depends on outside inputs (reducible on the way).
      return mul_sat(block, static_cast<std::uint64_t>(inside));
    case Op::alltoall:
      return mul_sat(mul_sat(block, outside), static_cast<std::uint64_t>(inside));
    case Op::gather:
      return in_unit(root) ? mul_sat(block, outside) : 0;
    case Op::scatter:
      return in_unit(root) ? 0 : mul_sat(block, static_cast<std::uint64_t>(inside));
    case Op::sendrecv: {
      // nccl-tests' ring: rank r receives S from r - 1.
      std::uint64_t total = 0;
      for (int r = 0; r < n; ++r) {
        if (in_unit(r) && !in_unit((r - 1 + n) % n)) total = add_sat(total, s);
      }
      return total;
    }
    default:
      return 0;  // an op whose per-peer bytes come in recv_from, or not a collective
  }
}

ProofResult judge_counters(const RequiredPath& required, std::span<const HostTraffic> hosts, bool final_window,
                           std::string_view source, const CounterRule& rule) {
  ProofResult out;
  out.source = std::string(source);
  nlohmann::json evidence_hosts = nlohmann::json::array();
  for (const HostTraffic& h : hosts) evidence_hosts.push_back(host_json(h, required));
  out.evidence = {{"hosts", evidence_hosts}};
  const std::string what = to_string(required);
  const std::string device_word = required.interface.empty() ? "its devices" : "interface " + required.interface;

  if (required.kind == PathKind::shm) {
    // Shared memory: the ranks exchanged bytes, and no NIC received a tenth of them.
    bool decided = true;
    for (const HostTraffic& h : hosts) {
      const std::uint64_t rx = device_rx(h, required);
      if (h.peer_rx_bytes < rule.decide_after_bytes) {
        decided = false;
        continue;
      }
      const double share = static_cast<double>(rx) / static_cast<double>(h.peer_rx_bytes);
      if (share >= rule.shm_max_share) {
        out.verdict = Verdict::failed;
        out.carried_by = "net";
        out.host = h.host;
        out.message = fmt::format(
            "--require-path shm: host {}: its network interfaces received {} while its ranks needed {} from other "
            "ranks ({}): the bytes crossed a NIC ({})",
            h.host, human_bytes(rx), human_bytes(h.peer_rx_bytes), share_text(share), device_list(h));
        return out;
      }
    }
    if (decided && !hosts.empty()) {
      out.verdict = Verdict::proven;
      out.carried_by = "shm";
      out.message = fmt::format("shm proven: no host's network interfaces received {} of its ranks' bytes",
                                share_text(rule.shm_max_share));
      return out;
    }
    out.verdict = final_window ? Verdict::failed : Verdict::undecided;
    out.message = fmt::format("--require-path shm: too few bytes between ranks to prove it (under {} on some host)",
                              human_bytes(rule.decide_after_bytes));
    return out;
  }

  // net, net:IFACE, tcp, efa: every host received its off-host bytes through the counted devices.
  if (hosts.size() < 2) {
    const std::string host = hosts.empty() ? std::string("?") : hosts.front().host;
    out.verdict = Verdict::failed;
    out.carried_by = "shm";
    out.host = host;
    out.message = fmt::format(
        "--require-path {}: every rank is on host {}: no byte had to cross a network, so the ranks moved them in "
        "shared memory or over loopback",
        what, host);
    return out;
  }
  double least = std::numeric_limits<double>::infinity();
  bool decided = true;
  for (const HostTraffic& h : hosts) {
    const std::uint64_t rx = device_rx(h, required);
    if (h.off_host_rx_bytes == 0) continue;  // e.g. broadcast's root host receives nothing
    const double share = static_cast<double>(rx) / static_cast<double>(h.off_host_rx_bytes);
    least = std::min(least, share);
    if (h.off_host_rx_bytes < rule.decide_after_bytes) {
      decided = false;
      continue;
    }
    if (share < rule.min_explained) {
      out.verdict = Verdict::failed;
      out.carried_by = rx == 0 ? "shm" : "other";
      out.host = h.host;
      out.explained = share;
      out.message = fmt::format(
          "--require-path {}: host {}: {} received {} while the sweep needed at least {} to arrive from other hosts "
          "({}): the ranks moved their bytes some other way{} (counted: {})",
          what, h.host, device_word, human_bytes(rx), human_bytes(h.off_host_rx_bytes), share_text(share),
          required.kind == PathKind::efa ? " (not EFA: sockets or another NIC)"
                                         : " (shared memory, loopback, or an RDMA device the kernel does not count)",
          device_list(h));
      return out;
    }
  }
  if (std::isinf(least)) decided = false;  // no host had anything to receive yet
  if (!std::isinf(least)) out.explained = least;
  if (decided) {
    out.verdict = Verdict::proven;
    out.carried_by = std::string(name(required.kind));
    out.message =
        fmt::format("{} proven: every host's {} received at least {} of its off-host bytes", what,
                    required.interface.empty() ? "devices" : required.interface, share_text(std::min(least, 1.0)));
    return out;
  }
  out.verdict = final_window ? Verdict::failed : Verdict::undecided;
  out.message = fmt::format(
      "--require-path {}: too few bytes crossed between hosts to prove it (each host must need at least {}; run "
      "larger sizes)",
      what, human_bytes(rule.decide_after_bytes));
  return out;
}

nlohmann::json to_json(const ProofResult& result) {
  nlohmann::json out = {
      {"verdict", name(result.verdict)},
      {"source", result.source},
      {"carried_by", result.carried_by.empty() ? nlohmann::json() : nlohmann::json(result.carried_by)},
      {"message", result.message},
      {"evidence", result.evidence}};
  if (!result.host.empty()) out["host"] = result.host;
  out["explained"] = result.explained ? nlohmann::json(*result.explained) : nlohmann::json();
  return out;
}

}  // namespace ccbench::proof
