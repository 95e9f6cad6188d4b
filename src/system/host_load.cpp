#include "system/host_load.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace ccbench::system {
namespace fs = std::filesystem;

namespace {

std::string read_small(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <typename T>
T to_number(std::string_view text) {
  T v{};
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

// /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
bool parse_stat(const std::string& text, ProcessTicks& out) {
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  out.name = text.substr(open + 1, close - open - 1);
  std::istringstream rest(text.substr(close + 1));
  std::vector<std::string> f;
  std::string field;
  while (rest >> field) f.push_back(field);
  // f[0] is field 3 (state); field N is f[N - 3].
  if (f.size() < 37) return false;
  out.ppid = to_number<int>(f[1]);
  out.ticks = to_number<std::uint64_t>(f[11]) + to_number<std::uint64_t>(f[12]);
  out.start_ticks = to_number<std::uint64_t>(f[19]);
  out.processor = to_number<int>(f[36]);
  return true;
}

bool have_nvidia_devices(const fs::path& root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / "dev", ec)) {
    const std::string n = e.path().filename().string();
    if (n.starts_with("nvidia") && all_digits(n.substr(6))) return true;
  }
  return false;
}

}  // namespace

std::set<int> parse_cpu_list(const std::string& text) {
  std::set<int> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.pop_back();
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front()))) part.erase(part.begin());
    if (part.empty()) continue;
    const auto dash = part.find('-');
    const std::string a = part.substr(0, dash), b = dash == std::string::npos ? a : part.substr(dash + 1);
    if (!all_digits(a) || !all_digits(b) || a.size() > 5 || b.size() > 5) return {};
    const int lo = std::stoi(a), hi = std::stoi(b);
    if (hi < lo || hi - lo > 65536) return {};
    for (int c = lo; c <= hi; ++c) out.insert(c);
  }
  return out;
}

HostLoadSnapshot sample_host_load(const std::string& root_text) {
  const fs::path root(root_text);
  HostLoadSnapshot s;
  {
    std::istringstream up(read_small(root / "proc/uptime"));
    up >> s.uptime_s;
    std::istringstream la(read_small(root / "proc/loadavg"));
    la >> s.load_avg_1m;
  }
  {
    std::istringstream stat(read_small(root / "proc/stat"));
    std::string line;
    while (std::getline(stat, line)) {
      if (line.rfind("cpu ", 0) == 0) {
        std::istringstream f(line.substr(4));
        std::uint64_t v = 0;
        for (int i = 0; f >> v; ++i) {
          if (i < 8) s.cpu_total_ticks += v;  // user nice system idle iowait irq softirq steal (guest is in user)
          if (i == 7) s.cpu_steal_ticks = v;
        }
      } else if (line.rfind("cpu", 0) == 0 && line.size() > 3 && std::isdigit(static_cast<unsigned char>(line[3]))) {
        ++s.cpus_online;
      }
    }
  }
  const bool nvidia = have_nvidia_devices(root);
  bool fd_readable = false;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / "proc", ec)) {
    const std::string name = e.path().filename().string();
    if (!all_digits(name) || name.size() > 9) continue;
    ProcessTicks p;
    if (!parse_stat(read_small(e.path() / "stat"), p)) continue;
    const int pid = std::stoi(name);
    s.processes[pid] = p;
    if (!nvidia) continue;
    std::error_code fec;
    std::vector<int> minors;
    for (const auto& fd : fs::directory_iterator(e.path() / "fd", fec)) {
      fd_readable = true;
      std::error_code lec;
      const std::string target = fs::read_symlink(fd.path(), lec).string();
      if (lec || !target.starts_with("/dev/nvidia")) continue;
      const std::string minor = target.substr(11);
      if (all_digits(minor) && minor.size() < 4) minors.push_back(std::stoi(minor));
    }
    if (!minors.empty()) {
      std::sort(minors.begin(), minors.end());
      minors.erase(std::unique(minors.begin(), minors.end()), minors.end());
      s.gpu_users[pid] = minors;
    }
  }
  s.gpu_queryable = nvidia && fd_readable;
  return s;
}

std::set<int> own_processes(const HostLoadSnapshot& snapshot, int self) {
  std::set<int> ours = {self};
  const auto me = snapshot.processes.find(self);
  if (me == snapshot.processes.end()) return ours;
  const int parent = me->second.ppid;
  // Ancestors: mpirun / prted / slurmstepd spin or wake while the ranks run; they are the run's.
  for (int p = parent, hops = 0; p > 1 && hops < 64; ++hops) {
    ours.insert(p);
    const auto it = snapshot.processes.find(p);
    if (it == snapshot.processes.end()) break;
    p = it->second.ppid;
  }
  if (parent > 1) {
    for (const auto& [pid, p] : snapshot.processes) {
      if (p.ppid == parent) ours.insert(pid);  // the other local ranks
    }
  }
  return ours;
}

std::set<int> processes_with_environment(const HostLoadSnapshot& snapshot, const std::string& entry,
                                         const std::string& root) {
  std::set<int> found;
  if (entry.find('=') == std::string::npos) return found;
  for (const auto& [pid, p] : snapshot.processes) {
    const std::string env = read_small(fs::path(root) / "proc" / std::to_string(pid) / "environ");
    // NUL-separated NAME=VALUE entries: a whole entry, not a prefix of a longer value.
    for (std::size_t at = 0; at < env.size();) {
      const std::size_t end = std::min(env.find('\0', at), env.size());
      if (env.compare(at, end - at, entry) == 0) {
        found.insert(pid);
        break;
      }
      at = end + 1;
    }
  }
  return found;
}

std::set<int> cores_of(const std::set<int>& pids, const std::string& root) {
  std::set<int> cores;
  for (int pid : pids) {
    std::istringstream status(read_small(fs::path(root) / "proc" / std::to_string(pid) / "status"));
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
      const auto mine = parse_cpu_list(line.substr(18));
      cores.insert(mine.begin(), mine.end());
    }
  }
  return cores;
}

bool is_softirq_thread(const std::string& name) { return name.starts_with("ksoftirqd/"); }

nlohmann::json host_load_json(const HostLoadSnapshot& start, const HostLoadSnapshot& end, const std::set<int>& ours,
                              const std::set<int>& cores) {
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK) > 0 ? ::sysconf(_SC_CLK_TCK) : 100);
  const double window_s = std::max(0.0, end.uptime_s - start.uptime_s);
  nlohmann::json j;
  j["window_s"] = std::round(window_s * 1000.0) / 1000.0;
  j["cpus_online"] = end.cpus_online;
  j["cores"] = cores;
  j["load_avg_1m"] = {{"start", start.load_avg_1m}, {"end", end.load_avg_1m}};
  const double total = static_cast<double>(end.cpu_total_ticks - std::min(end.cpu_total_ticks, start.cpu_total_ticks));
  const double steal = static_cast<double>(end.cpu_steal_ticks - std::min(end.cpu_steal_ticks, start.cpu_steal_ticks));
  j["steal_share"] = total > 0 ? std::round(steal / total * 1e4) / 1e4 : 0.0;
  // Other processes' CPU time on the ranks' cores. A process that started during the run counts
  // from zero; one that ended before the second sample is not seen (its time is lost).
  struct Other {
    int pid;
    std::string name;
    double seconds;
  };
  std::vector<Other> others;
  double other_seconds = 0;
  double softirq_seconds = 0;
  for (const auto& [pid, p] : end.processes) {
    if (ours.contains(pid)) continue;
    if (!cores.empty() && !cores.contains(p.processor)) continue;
    std::uint64_t before = 0;
    if (const auto it = start.processes.find(pid);
        it != start.processes.end() && it->second.start_ticks == p.start_ticks) {
      before = std::min(it->second.ticks, p.ticks);
    }
    const double seconds = static_cast<double>(p.ticks - before) / hz;
    if (seconds <= 0) continue;
    // ksoftirqd runs the network stack's deferred work: the packets the ranks themselves send and
    // receive (on the emulated fabric every veth and tc shaper), so it is the run's own cost, not
    // another job. Counted as other work, it marked the fastest links' tests busy (e2e.screen.two_slow).
    if (is_softirq_thread(p.name)) {
      softirq_seconds += seconds;
      continue;
    }
    other_seconds += seconds;
    others.push_back({pid, p.name, seconds});
  }
  const double capacity = window_s * static_cast<double>(cores.empty() ? std::max(1, end.cpus_online) : cores.size());
  const double share = capacity > 0 ? std::min(1.0, other_seconds / capacity) : 0.0;
  j["others_core_share"] = std::round(share * 1e4) / 1e4;
  j["softirq_core_share"] = capacity > 0 ? std::round(std::min(1.0, softirq_seconds / capacity) * 1e4) / 1e4 : 0.0;
  std::sort(others.begin(), others.end(), [](const Other& a, const Other& b) { return a.seconds > b.seconds; });
  nlohmann::json top = nlohmann::json::array();
  for (std::size_t i = 0; i < others.size() && i < 3; ++i) {
    const double s = window_s > 0 ? others[i].seconds / window_s : 0.0;  // in cores (1.0 = one core)
    if (s < 0.01) break;
    top.push_back({{"pid", others[i].pid}, {"name", others[i].name}, {"core_share", std::round(s * 1e4) / 1e4}});
  }
  j["others_top"] = top;
  if (start.gpu_queryable || end.gpu_queryable) {
    nlohmann::json gpu = nlohmann::json::array();
    std::map<int, std::vector<int>> users = start.gpu_users;
    for (const auto& [pid, minors] : end.gpu_users) users[pid] = minors;
    for (const auto& [pid, minors] : users) {
      if (ours.contains(pid)) continue;
      std::string name;
      if (const auto it = end.processes.find(pid); it != end.processes.end())
        name = it->second.name;
      else if (const auto it2 = start.processes.find(pid); it2 != start.processes.end())
        name = it2->second.name;
      gpu.push_back({{"pid", pid}, {"name", name}, {"devices", minors}});
    }
    j["gpu_other_processes"] = gpu;
  }
  return j;
}

}  // namespace ccbench::system
