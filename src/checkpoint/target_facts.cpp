#include "checkpoint/target_facts.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/run_program.hpp"

namespace ccbench::checkpoint {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

// The mountinfo line of the mount `dir` lives on: the one whose major:minor is the directory's
// st_dev and whose mount point is the longest prefix of its canonical path.
struct Mount {
  std::string point, source, fstype, options, super_options, dev;
};
Mount find_mount(const std::string& dir) {
  Mount best;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return best;
  const std::string dev = fmt::format("{}:{}", major(st.st_dev), minor(st.st_dev));
  std::error_code ec;
  const std::string path = fs::canonical(dir, ec).string();
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string id, parent, majmin, root, point, options;
    ss >> id >> parent >> majmin >> root >> point >> options;
    std::string field;
    while (ss >> field && field != "-") {
    }
    Mount m;
    ss >> m.fstype >> m.source >> m.super_options;
    m.point = point;
    m.options = options;
    m.dev = majmin;
    if (majmin != dev) continue;
    const bool prefix =
        path.rfind(point, 0) == 0 && (path.size() == point.size() || point == "/" || path[point.size()] == '/');
    if (prefix && point.size() >= best.point.size()) best = m;
  }
  return best;
}

json nullable(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// The queue facts of the block device behind st_dev (its whole disk for a partition), or null.
json block_queue(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || major(st.st_dev) == 0) return nullptr;
  std::string base = fmt::format("/sys/dev/block/{}:{}", major(st.st_dev), minor(st.st_dev));
  std::error_code ec;
  fs::path dev = fs::canonical(base, ec);
  if (ec) return nullptr;
  if (!fs::exists(dev / "queue") && fs::exists(dev.parent_path() / "queue")) dev = dev.parent_path();
  if (!fs::exists(dev / "queue")) return nullptr;
  json q = json::object();
  q["device"] = dev.filename().string();
  for (const char* key : {"rotational", "logical_block_size", "physical_block_size", "max_sectors_kb", "nr_requests",
                          "scheduler", "write_cache"}) {
    q[key] = nullable(read_line((dev / "queue" / key).string()));
  }
  q["model"] = nullable(read_line((dev / "device" / "model").string()));
  const std::string backing = read_line((dev / "loop" / "backing_file").string());
  if (!backing.empty()) q["loop_backing_file"] = backing;
  return q;
}

}  // namespace

// `lfs getstripe -d DIR` when lfs is on PATH (Lustre, FSx); null otherwise. By argv: the target's
// path is the user's and may hold quotes or `$(...)`; 5 s at most (a hung mount must not hang the run).
json lustre_striping(const std::string& dir) {
  if (!program_on_path("lfs")) return nullptr;
  const ProgramRun lfs = run_program({"lfs", "getstripe", "-d", dir}, {std::chrono::seconds(5), true});
  if (lfs.timed_out) return json{{"error", "lfs getstripe did not answer within 5 s"}};
  if (!lfs.ok()) return json{{"error", lfs.started ? lfs.output : lfs.error}};
  return lfs.output;
}

std::string filesystem_type(const std::string& dir) {
  struct statfs sf {};
  if (::statfs(dir.c_str(), &sf) != 0) return "";
  switch (static_cast<unsigned long>(sf.f_type)) {
    case 0xEF53UL:
      return "ext4";
    case 0x58465342UL:
      return "xfs";
    case 0x01021994UL:
      return "tmpfs";
    case 0x0BD00BD0UL:
      return "lustre";
    case 0x9123683EUL:
      return "btrfs";
    case 0x6969UL:
      return "nfs";
    case 0x794C7630UL:
      return "overlayfs";
    case 0x2FC12FC1UL:
      return "zfs";
    case 0x65735546UL:
      return "fuse";
    default:
      return fmt::format("0x{:x}", static_cast<unsigned long>(sf.f_type));
  }
}

std::uint64_t host_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemTotal:") return kb * 1024;
  }
  return 0;
}

TargetCheck check_target(const std::string& dir) {
  TargetCheck c;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    // Only ENOENT means missing: a directory above it this user may not search (EACCES) is there.
    const int error = errno;
    c.error = error == ENOENT ? std::string("does not exist (create the directory first)")
                              : fmt::format("cannot be reached: {} ({})", std::strerror(error),
                                            strerrorname_np(error) ? strerrorname_np(error) : "?");
    return c;
  }
  if (!S_ISDIR(st.st_mode)) {
    c.error = "is not a directory";
    return c;
  }
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) {
    c.error = "statvfs failed";
    return c;
  }
  if ((vfs.f_flag & ST_RDONLY) != 0) {
    c.error = "is on a read-only mount";
    return c;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    c.error = "is not writable by this user";
    return c;
  }
  c.free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  return c;
}

json describe_target(const std::string& dir) {
  json out = json::object();
  std::error_code ec;
  out["path"] = fs::absolute(dir, ec).string();
  const std::string type = filesystem_type(dir);
  out["filesystem"] = nullable(type);
  const Mount m = find_mount(dir);
  out["mount"] = m.point.empty() ? json(nullptr)
                                 : json{{"point", m.point},
                                        {"source", m.source},
                                        {"fstype", m.fstype},
                                        {"options", m.options},
                                        {"super_options", m.super_options},
                                        {"device", m.dev}};
  out["block_device"] = block_queue(dir);
  out["lustre_stripe"] = type == "lustre" ? lustre_striping(dir) : json(nullptr);
  const TargetCheck c = check_target(dir);
  out["free_bytes"] = c.free_bytes;
  return out;
}

}  // namespace ccbench::checkpoint
