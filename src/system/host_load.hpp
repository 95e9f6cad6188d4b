// Is something else running on this host? Sampled at the start and the end of a run from /proc
// (no MPI, no CUDA), so a result can tell "the network got slower" from "another job shared the
// cores" (issue 15 item 16). Recorded under system.host_load (docs/host-load.md).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace ccbench::system {

struct ProcessTicks {
  std::string name;  // comm
  int ppid = 0;
  int processor = -1;       // CPU it last ran on
  std::uint64_t ticks = 0;  // utime + stime, clock ticks, all threads
  std::uint64_t start_ticks = 0;
};

struct HostLoadSnapshot {
  double uptime_s = 0;  // /proc/uptime: the clock of the tick counts
  double load_avg_1m = 0;
  int cpus_online = 0;
  std::uint64_t cpu_total_ticks = 0;  // all CPUs, all states
  std::uint64_t cpu_steal_ticks = 0;
  std::map<int, ProcessTicks> processes;
  std::map<int, std::vector<int>> gpu_users;  // pid -> /dev/nvidiaN minors it holds open
  bool gpu_queryable = false;                 // /dev/nvidia[0-9]* exists and /proc/*/fd was readable
};

// Reads /proc under `root` ("/" normally; tests point it at a fake tree). Never throws: what cannot
// be read stays zero or empty.
HostLoadSnapshot sample_host_load(const std::string& root = "/");

// Processes of this run on this host: `self`, its ancestors (mpirun, the launcher daemon) and its
// siblings (the other local ranks: same parent), from a snapshot.
std::set<int> own_processes(const HostLoadSnapshot& snapshot, int self);

// The snapshot's processes whose environment (/proc/<pid>/environ, readable for our own user or as
// root) holds exactly `entry` ("NAME=VALUE"). A program that starts several runs at once on one
// host (`ccbench screen` on the emulated fabric, where every emulated host shares this kernel) hands
// them one token in CCBENCH_LOAD_OWNER, and the processes that carry it are the program's own work,
// not another job's. Not by ancestry: Open MPI's daemons detach from the launcher (their parent is
// init), so the ranks of a test are not descendants of the program that started it.
std::set<int> processes_with_environment(const HostLoadSnapshot& snapshot, const std::string& entry,
                                         const std::string& root = "/");

// The union of the CPU affinity lists of `pids` (/proc/<pid>/status Cpus_allowed_list).
std::set<int> cores_of(const std::set<int>& pids, const std::string& root = "/");

// The JSON recorded under system.host_load, from two snapshots of one host: load average at both
// ends, stolen CPU time, and the share of the ranks' cores that other processes used in between
// (their CPU time on those cores over the window times the number of cores), the busiest of them,
// and processes other than ours holding a GPU open.
nlohmann::json host_load_json(const HostLoadSnapshot& start, const HostLoadSnapshot& end, const std::set<int>& ours,
                              const std::set<int>& cores);

// The kernel's softirq threads (ksoftirqd/N): their time is the network stack's work for the run's
// own traffic, recorded apart (softirq_core_share), never as another process's.
bool is_softirq_thread(const std::string& name);

// Parses "0-3,8,10-11" (Cpus_allowed_list); empty on malformed text.
std::set<int> parse_cpu_list(const std::string& text);

}  // namespace ccbench::system
