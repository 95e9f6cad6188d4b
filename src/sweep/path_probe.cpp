#include "sweep/path_probe.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/sendrecv_pattern.hpp"
#include "core/types.hpp"
#include "system/net_counters.hpp"

namespace ccbench {
namespace {

std::string this_hostname() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? ~std::uint64_t{0} : out;
}

std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? ~std::uint64_t{0} : out;
}

std::string kinds_text(const std::vector<proof::PathKind>& kinds) {
  std::string out;
  for (const proof::PathKind k : kinds) out += (out.empty() ? "" : ", ") + std::string(proof::name(k));
  return out;
}

// What a rank sends to rank 0 at each check: its host and its devices' counters.
std::string encode_sample(const std::string& host, const std::vector<proof::DeviceBytes>& devices) {
  return host + "\n" + system::encode_devices(devices);
}

}  // namespace

DeviceCounterSource DeviceCounterSource::of_this_host() {
  DeviceCounterSource source;
  source.network = [] { return system::read_net_counters(); };
  // EFA devices' counters: not yet read for the counter rules (the NCCL backend proves efa itself).
  source.efa = [] { return std::vector<proof::DeviceBytes>(); };
  return source;
}

PathProbe::PathProbe(ControlChannel& channel, proof::RequiredPath required, int rails, Backend& backend,
                     std::vector<std::string> hostnames, groups::Layout layout, DeviceCounterSource source,
                     proof::CounterRule rule)
    : channel_(channel),
      required_(std::move(required)),
      rails_(rails),
      backend_(backend),
      layout_(std::move(layout)),
      source_(std::move(source)),
      rule_(rule) {
  const auto kinds = backend_.provable_paths();
  backend_proves_ = std::ranges::find(kinds, required_.kind) != kinds.end();
  if (!channel_.is_root()) return;
  for (const std::string& h : hostnames) {
    auto at = std::ranges::find(hosts_, h);
    if (at == hosts_.end()) {
      hosts_.push_back(h);
      at = hosts_.end() - 1;
    }
    host_of_rank_.push_back(static_cast<int>(at - hosts_.begin()));
  }
  off_host_rx_.assign(hosts_.size(), 0);
  peer_rx_.assign(hosts_.size(), 0);
}

void PathProbe::check_provable(const proof::RequiredPath& required, int rails, const Backend& backend) {
  const auto kinds = backend.provable_paths();
  const std::string what = proof::to_string(required);
  // Rails are EFA devices per node that carried traffic: only a backend that reads every node's EFA
  // counters can count them, and none does yet.
  if (rails > 0) {
    throw UsageError(
        fmt::format("--require-rails {}: the {} backend does not count EFA rails (docs/path-proof.md, \"Not yet\")",
                    rails, backend.name()));
  }
  if (!kinds.empty()) {
    if (std::ranges::find(kinds, required.kind) == kinds.end()) {
      throw UsageError(
          fmt::format("--require-path {}: the {} backend can prove {}", what, backend.name(), kinds_text(kinds)));
    }
    return;
  }
  // GPU bytes (NVLink, GPUDirect RDMA) never reach the kernel's interface counters: the NCCL
  // backend proves its path from its own transports, or not at all.
  if (backend.name() == "nccl") {
    throw UsageError(fmt::format(
        "--require-path {}: the nccl backend cannot prove its path yet (NCCL's transports and EFA counters are not "
        "read for it: docs/path-proof.md, \"Not yet\")",
        what));
  }
  // The hosts' counters prove what crossed (or did not cross) a NIC: not NVLink.
  if (required.kind == proof::PathKind::nvlink) {
    throw UsageError(fmt::format(
        "--require-path nvlink: the {} backend moves host memory; it can prove net, net:IFACE, tcp, shm (from the "
        "hosts' interface counters)",
        backend.name()));
  }
  if (required.kind == proof::PathKind::efa) {
    throw UsageError(fmt::format(
        "--require-path efa: the {} backend cannot prove efa yet (only --backend nccl reads NCCL's transports and the "
        "EFA counters); it can prove net, net:IFACE, tcp, shm",
        backend.name()));
  }
}

std::vector<proof::DeviceBytes> PathProbe::read_devices() const {
  return source_.network ? source_.network() : std::vector<proof::DeviceBytes>();
}

// Collective: every rank's counters; on rank 0 each host's, as its first rank read them.
std::vector<std::vector<proof::DeviceBytes>> PathProbe::gather_counters() const {
  const auto all = channel_.gather_to_root(encode_sample(this_hostname(), read_devices()));
  std::vector<std::vector<proof::DeviceBytes>> per_host(hosts_.size());
  std::vector<bool> seen(hosts_.size(), false);
  for (const std::string& sample : all) {
    const std::size_t nl = sample.find('\n');
    const auto at = std::ranges::find(hosts_, sample.substr(0, nl));
    if (at == hosts_.end()) continue;
    const auto h = static_cast<std::size_t>(at - hosts_.begin());
    if (seen[h]) continue;
    seen[h] = true;
    per_host[h] = system::decode_devices(nl == std::string::npos ? "" : std::string_view(sample).substr(nl + 1));
  }
  return per_host;
}

void PathProbe::start() {
  if (backend_proves_) return;  // the backend keeps its own baseline (allocate)
  baseline_ = gather_counters();
}

// The bytes one op of `c` brings into each host: from other hosts (peer_rx false) or from any
// other rank of the host's (true). With --groups each group runs the case at once over its members.
std::vector<std::uint64_t> PathProbe::needed_per_host(const CaseSpec& c, bool peer_rx) const {
  std::vector<std::uint64_t> out(hosts_.size(), 0);
  const int groups = layout_.grouped() ? layout_.count : 1;
  for (int g = 0; g < groups; ++g) {
    std::vector<int> members;
    if (layout_.grouped()) {
      members = layout_.members(g);
    } else {
      for (int r = 0; r < c.nranks; ++r) members.push_back(r);
    }
    if (static_cast<int>(members.size()) != c.nranks) continue;
    std::vector<int> unit_of_rank(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
      const int world = members[i];
      const int host =
          world < static_cast<int>(host_of_rank_.size()) ? host_of_rank_[static_cast<std::size_t>(world)] : 0;
      // peer_rx: every rank its own unit, numbered after the hosts, so "outside" is any other rank.
      unit_of_rank[i] = peer_rx ? static_cast<int>(hosts_.size()) + world : host;
    }
    const proof::OpBytes op{c.op, c.layout.bytes, info(c.dtype).size_bytes, c.nranks, c.root};
    for (std::size_t h = 0; h < hosts_.size(); ++h) {
      // The units to ask about: the host, or each of its ranks.
      std::vector<int> units;
      for (std::size_t i = 0; i < members.size(); ++i) {
        const int host = members[i] < static_cast<int>(host_of_rank_.size())
                             ? host_of_rank_[static_cast<std::size_t>(members[i])]
                             : 0;
        if (host != static_cast<int>(h)) continue;
        if (peer_rx) {
          units.push_back(unit_of_rank[i]);
        } else if (units.empty()) {
          units.push_back(static_cast<int>(h));
        }
      }
      for (const int unit : units) {
        std::vector<std::uint64_t> recv_from;
        if (c.matrix) {
          // Per-peer bytes: what the unit's ranks receive from each rank (moe_pair: dispatch, then
          // its transpose).
          recv_from.assign(static_cast<std::size_t>(c.nranks), 0);
          const TrafficMatrix& m = c.matrix->matrix;
          for (int s = 0; s < c.nranks && s < m.ranks; ++s) {
            for (int d = 0; d < c.nranks && d < m.ranks; ++d) {
              if (unit_of_rank[static_cast<std::size_t>(d)] != unit) continue;
              std::uint64_t b = m.at(s, d);
              if (c.op == Op::moe_pair) b = add_sat(b, m.at(d, s));
              recv_from[static_cast<std::size_t>(s)] = add_sat(recv_from[static_cast<std::size_t>(s)], b);
            }
          }
        } else if (c.posts_blocks()) {
          recv_from.assign(static_cast<std::size_t>(c.nranks), 0);
          for (int d = 0; d < c.nranks; ++d) {
            if (unit_of_rank[static_cast<std::size_t>(d)] != unit) continue;
            const PatternPeers peers = pattern_peers(c.sendrecv_pattern, c.peer_group, d, c.nranks);
            for (const int s : peers.receive_from) {
              recv_from[static_cast<std::size_t>(s)] = add_sat(recv_from[static_cast<std::size_t>(s)], c.layout.bytes);
            }
          }
        }
        out[h] = add_sat(out[h], proof::needed_rx_bytes(op, unit_of_rank, unit, recv_from));
      }
    }
  }
  return out;
}

void PathProbe::count(const CaseSpec& c, std::uint64_t ops) {
  if (!channel_.is_root() || backend_proves_ || ops == 0) return;
  const CaseKey key{static_cast<int>(c.op),
                    c.layout.bytes,
                    static_cast<int>(c.dtype),
                    c.root,
                    c.nranks,
                    c.matrix.get(),
                    c.posts_blocks() ? static_cast<int>(c.sendrecv_pattern) : -1,
                    c.peer_group};
  auto at = per_case_.find(key);
  if (at == per_case_.end()) {
    at = per_case_.emplace(key, std::make_pair(needed_per_host(c, false), needed_per_host(c, true))).first;
  }
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    off_host_rx_[h] = add_sat(off_host_rx_[h], mul_sat(at->second.first[h], ops));
    peer_rx_[h] = add_sat(peer_rx_[h], mul_sat(at->second.second[h], ops));
  }
}

proof::ProofResult PathProbe::check_counters(bool final_window) {
  const auto now = gather_counters();
  proof::ProofResult result;
  if (channel_.is_root()) {
    std::vector<proof::HostTraffic> traffic(hosts_.size());
    for (std::size_t h = 0; h < hosts_.size(); ++h) {
      traffic[h].host = hosts_[h];
      traffic[h].devices = system::counter_delta(h < baseline_.size() ? baseline_[h] : now[h], now[h]);
      traffic[h].off_host_rx_bytes = off_host_rx_[h];
      traffic[h].peer_rx_bytes = peer_rx_[h];
    }
    result = proof::judge_counters(required_, traffic, final_window, "interface counters", rule_);
  }
  // Every rank learns the verdict (the sweep stops on all of them or none).
  const int verdict = channel_.broadcast(static_cast<int>(result.verdict));
  result.verdict = static_cast<proof::Verdict>(verdict);
  return result;
}

proof::ProofResult PathProbe::check(bool final_window) {
  if (decided_ && !final_window) return *probe_;
  proof::ProofResult result =
      backend_proves_ ? backend_.prove_path(required_, rails_, final_window) : check_counters(final_window);
  if (result.verdict != proof::Verdict::undecided && !decided_) {
    decided_ = true;
    probe_ = result;
  }
  if (final_window) {
    // A run proven at the probe and failed over the whole run (the path changed mid-run) fails.
    run_ = result;
  }
  return result;
}

nlohmann::json PathProbe::to_json() const {
  nlohmann::json out = {{"required", proof::to_string(required_)}};
  if (rails_ > 0) out["rails_required"] = rails_;
  const proof::ProofResult* last = run_ ? &*run_ : (probe_ ? &*probe_ : nullptr);
  out["verdict"] = last ? std::string(proof::name(last->verdict)) : std::string("undecided");
  if (probe_) out["probe"] = proof::to_json(*probe_);
  if (run_) out["run"] = proof::to_json(*run_);
  return out;
}

}  // namespace ccbench

namespace ccbench {

std::optional<SweepStop> PathProofCheck::after_size(int /*trial*/, Op /*op*/, std::span<const ResultRow> /*rows*/) {
  if (probe_.decided()) return std::nullopt;
  const proof::ProofResult result = probe_.check(false);
  if (result.verdict == proof::Verdict::failed) return SweepStop{exit_code::path_not_proven, result.message};
  return std::nullopt;
}

}  // namespace ccbench
