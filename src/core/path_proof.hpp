// The proof that a run's bytes crossed the fabric it names (--require-path, docs/path-proof.md):
// the path a user requires, the evidence of what carried the bytes (device byte counters against
// the bytes the sweep had to move, or a library's own word: NCCL's transports, the libfabric
// provider opened) and the verdict, with the one line that names the host, what carried the bytes
// and how many. Plain C++: every rule is unit-tested on numbers written by hand.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/bandwidth.hpp"
#include "core/enums.hpp"

namespace ccbench::proof {

// The paths --require-path names. net: any NIC between hosts; tcp: the kernel's sockets (MPI's
// tcp BTL, NCCL's NET/Socket); efa: EFA devices (their hw_counters, aws-ofi-nccl's efa provider);
// nvlink: NCCL's P2P and NVLS transports; shm: shared memory (no NIC carried the ranks' bytes).
enum class PathKind : std::uint8_t { efa, nvlink, net, shm, tcp };
std::string_view name(PathKind kind);

struct RequiredPath {
  PathKind kind = PathKind::net;
  std::string interface;  // net:IFACE (or tcp:IFACE): only that interface's counters count; "" = any
  bool operator==(const RequiredPath&) const = default;
};
// "efa", "nvlink", "net", "net:eth0", "shm", "tcp" (also "tcp:eth0"). Throws UsageError naming
// --require-path and the values it takes.
RequiredPath parse_required_path(std::string_view text);
std::string to_string(const RequiredPath& path);  // as parsed: "net:eth0"
inline constexpr std::string_view kRequirePathValues = "efa, nvlink, net, net:IFACE, shm, tcp";

// One device's bytes over a window: a network interface (/proc/net/dev), an EFA device's port
// (hw_counters: rx_bytes plus the RDMA bytes it read and wrote).
struct DeviceBytes {
  std::string name;
  std::uint64_t rx_bytes = 0;
  std::uint64_t tx_bytes = 0;
};

// One host's traffic over a window, beside what the sweep had to move there in that window.
struct HostTraffic {
  std::string host;
  std::vector<DeviceBytes> devices;  // what its devices carried (loopback never listed)
  // Lower bounds of the bytes the host's ranks had to receive for the ops launched in the window
  // (needed_rx_bytes below): from ranks on other hosts, and from any other rank.
  std::uint64_t off_host_rx_bytes = 0;
  std::uint64_t peer_rx_bytes = 0;
};

enum class Verdict : std::uint8_t {
  proven,     // the evidence shows the required path carried the bytes
  failed,     // the evidence shows something else carried them
  undecided,  // too few bytes yet to tell (a probe goes on; at the end of a run this is a failure)
};
std::string_view name(Verdict verdict);

struct ProofResult {
  Verdict verdict = Verdict::undecided;
  std::string source;      // "interface counters", "efa counters", "nccl transports", "libfabric provider"
  std::string carried_by;  // what the evidence says carried the bytes: "net", "shm", "efa", "socket", ...
  std::string host;        // the host the message names ("" when the verdict is the whole job's)
  std::string message;     // one line: the host, what carried the bytes and how many
  // The smallest share, over hosts, of the bytes the sweep had to move off each host that the
  // devices' counters explain (devices' rx / off_host_rx); null where the source has no counters.
  std::optional<double> explained;
  nlohmann::json evidence = nlohmann::json::object();  // per host and device, as the source saw it
};

// The counter rules' thresholds (docs/path-proof.md, "Rules").
struct CounterRule {
  // net, tcp, efa: each host's devices received at least this share of its off-host lower bound.
  double min_explained = 0.9;
  // shm: each host's NICs received less than this share of the bytes its ranks needed from peers.
  double shm_max_share = 0.1;
  // A window decides only once every host had to receive at least this many bytes (background
  // traffic on a NIC is small against it); before that the probe is undecided.
  std::uint64_t decide_after_bytes = 4ull << 20;
};

// The verdict of device counters on `required` (net, net:IFACE, tcp, efa, shm) for the hosts'
// traffic over one window. `final_window`: the whole run, where undecided becomes failed ("too
// few bytes to prove ...").
ProofResult judge_counters(const RequiredPath& required, std::span<const HostTraffic> hosts, bool final_window,
                           std::string_view source, const CounterRule& rule = {});

// What one op must bring into a unit of ranks (a host, or one rank) from ranks outside it: a lower
// bound, the same whatever algorithm the library picks (docs/path-proof.md, "Bytes the sweep had to
// move"). unit_of_rank[r] is rank r's unit; `unit` the one asked about. Reductions need S per unit
// that holds an output (every remote input reaches it in some form); allgather and alltoall the
// remote blocks themselves. Matrix ops and sendrecv patterns give their own per-peer bytes
// (`recv_from`: bytes this unit's ranks receive from each rank, length nranks; empty for the rest).
struct OpBytes {
  Op op = Op::allreduce;
  std::uint64_t bytes = 0;          // S (core/bandwidth.hpp, OpLayout::bytes)
  std::uint64_t element_bytes = 1;  // the dtype's size
  int nranks = 1;
  int root = 0;
};
std::uint64_t needed_rx_bytes(const OpBytes& op, std::span<const int> unit_of_rank, int unit,
                              std::span<const std::uint64_t> recv_from = {});

// fabric.proof in the result file (docs/result-format.md): the requirement, the verdict of the
// probe and of the whole run, and the evidence.
nlohmann::json to_json(const ProofResult& result);

}  // namespace ccbench::proof
