// What a result file says about the run: hosts, fabric, software, environment, config; and the
// table of peer processes the watchdog consults to tell a dead peer from a slow one.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/result.hpp"
#include "sweep/coordinator.hpp"
#include "sweep/plan.hpp"
#include "sweep/run_config.hpp"

namespace ccbench::cli {

class PeerTable {
 public:
  // Collective: every rank sends its hostname and pid to rank 0.
  static PeerTable exchange(const Coordinator& coordinator);
  // Peers on rank 0's host whose process is gone or a zombie: "rank 1 (pid 4242) exited", or "".
  std::string describe_failed_peers() const;
  // Peers on rank 0's host that are stopped (SIGSTOP): "rank 1 (pid 4242) is stopped", or "".
  std::string describe_stopped_peers() const;

 private:
  struct Peer {
    int rank;
    std::string host;
    int pid;
  };
  std::string describe(bool stopped) const;
  std::vector<Peer> peers_;
  std::string my_host_;
};

// Collective: gathers every rank's host description; the full header is meaningful on rank 0.
ResultFile describe_run(const RunConfig& config, const Coordinator& coordinator, const Backend& backend,
                        const Plan& plan, int argc, char** argv);

}  // namespace ccbench::cli
