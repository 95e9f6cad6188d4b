#include "sweep/peer_table.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ccbench {
namespace {

// Process state from /proc/<pid>/stat: 'R', 'S', 'T' (stopped), 'Z' (zombie); '?' when gone.
char process_state(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return '?';
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return '?';
  return line[close + 2];
}

// Identifies the process table this rank's /proc shows: the machine's boot id and the pid namespace.
// Two containers can share a hostname; only ranks with the same identity can inspect each other.
std::string process_table_identity() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::string boot_id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot_id;
  std::error_code ec;
  const std::string pidns = std::filesystem::read_symlink("/proc/self/ns/pid", ec).string();
  return std::string(name) + "|" + boot_id + "|" + pidns;
}

}  // namespace

PeerTable PeerTable::exchange(ControlChannel& channel) {
  PeerTable table;
  table.my_host_ = process_table_identity();
  const auto all = channel.gather_to_root(table.my_host_ + " " + std::to_string(::getpid()));
  for (std::size_t r = 0; r < all.size(); ++r) {
    std::istringstream in(all[r]);
    Peer peer{static_cast<int>(r), "", 0};
    in >> peer.host >> peer.pid;
    table.hostnames_.push_back(peer.host.substr(0, peer.host.find('|')));
    if (static_cast<int>(r) != channel.rank()) table.peers_.push_back(peer);
  }
  return table;
}

std::string PeerTable::describe(bool stopped) const {
  std::string out;
  for (const auto& peer : peers_) {
    if (peer.host != my_host_) continue;  // only processes in this process table can be inspected
    const char state = process_state(peer.pid);
    std::string what;
    if (!stopped && (state == '?' || state == 'Z' || state == 'X')) what = "exited";
    if (stopped && (state == 'T' || state == 't')) what = "is stopped";
    if (what.empty()) continue;
    const std::string host = peer.host.substr(0, peer.host.find('|'));
    out += (out.empty() ? "" : ", ") +
           ("rank " + std::to_string(peer.rank) + " (pid " + std::to_string(peer.pid) + " on " + host + ") " + what);
  }
  return out;
}

std::string PeerTable::describe_failed_peers() const { return describe(false); }
std::string PeerTable::describe_stopped_peers() const { return describe(true); }

}  // namespace ccbench
