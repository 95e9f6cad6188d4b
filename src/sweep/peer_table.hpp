// The table of peer processes the watchdog consults to tell a dead peer from a slow one: every
// rank's host identity and pid, on rank 0.
#pragma once

#include <string>
#include <vector>

#include "sweep/channel.hpp"

namespace ccbench {

class PeerTable {
 public:
  // Collective: every rank sends its hostname and pid to rank 0.
  static PeerTable exchange(ControlChannel& channel);
  // Peers on rank 0's host whose process is gone or a zombie: "rank 1 (pid 4242) exited", or "".
  std::string describe_failed_peers() const;
  // Peers on rank 0's host that are stopped (SIGSTOP): "rank 1 (pid 4242) is stopped", or "".
  std::string describe_stopped_peers() const;
  // Every rank's hostname in rank order, this rank's included (rank 0 only; empty elsewhere).
  const std::vector<std::string>& hostnames() const { return hostnames_; }

 private:
  struct Peer {
    int rank;
    std::string host;
    int pid;
  };
  std::string describe(bool stopped) const;
  std::vector<Peer> peers_;
  std::string my_host_;
  std::vector<std::string> hostnames_;
};

}  // namespace ccbench
