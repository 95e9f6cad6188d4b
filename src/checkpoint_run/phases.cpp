#include "checkpoint_run/phases.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "checkpoint/drain.hpp"
#include "checkpoint/step_dirs.hpp"
#include "sweep/rank_hosts.hpp"

namespace ccbench::checkpoint_run {

namespace fs = std::filesystem;
using namespace ccbench::checkpoint;

namespace {
constexpr const char* kCacheDropNames[] = {"o_direct", "remote", "drop_caches", "fadvise", "other_node", "warm"};
static_assert(std::size(kCacheDropNames) == static_cast<std::size_t>(CacheDrop::warm) + 1, "every rung has a name");
}  // namespace

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

const char* name(CacheDrop drop) { return kCacheDropNames[static_cast<int>(drop)]; }

World make_world(ControlChannel& channel) {
  World w(channel);
  w.rank = channel.rank();
  w.size = channel.size();
  w.hosts = every_rank_hostname(channel);
  std::vector<std::string> seen;
  for (const auto& h : w.hosts)
    if (std::find(seen.begin(), seen.end(), h) == seen.end()) seen.push_back(h);
  w.nodes = static_cast<int>(seen.size());
  return w;
}

const ShardData& no_shard() {
  static const ShardData none(0, 0, 0, 4096, 4096);
  return none;
}

std::string phases_json(const PhaseRun& r) {
  const RankPhases& t = r.times;
  return nlohmann::json{{"rank", t.rank},     {"host", t.host},   {"writes", t.writes},   {"start_s", t.start_s},
                        {"open_s", t.open_s}, {"io_s", t.io_s},   {"fsync_s", t.fsync_s}, {"close_s", t.close_s},
                        {"end_s", t.end_s},   {"bytes", t.bytes}, {"direct", r.direct},   {"retries", t.retries}}
      .dump();
}

RankPhases phases_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  RankPhases t;
  t.rank = j["rank"];
  t.host = j["host"];
  t.writes = j["writes"];
  t.start_s = j["start_s"];
  t.open_s = j["open_s"];
  t.io_s = j["io_s"];
  t.fsync_s = j["fsync_s"];
  t.close_s = j["close_s"];
  t.end_s = j["end_s"];
  t.bytes = j["bytes"];
  t.retries = j["retries"];
  return t;
}

std::string ShardIo::file_of(const std::string& dir, int writer_index) const {
  return (fs::path(dir) /
          (opt.layout == CheckpointLayout::shared_file ? std::string(kSharedFileName) : shard_name(writer_index)))
      .string();
}

std::uint64_t ShardIo::offset_of(int writer_index) const {
  return opt.layout == CheckpointLayout::shared_file ? plan.shard_bytes * static_cast<std::uint64_t>(writer_index) : 0;
}

// A phase of this rank, before any I/O: who it is and whether it holds a shard.
PhaseRun ShardIo::begin_phase() const {
  PhaseRun r;
  r.times.rank = w.rank;
  r.times.host = w.hosts[static_cast<std::size_t>(w.rank)];
  r.times.writes = writer >= 0;
  return r;
}

// Opens a shard file, recording the open's time and whether O_DIRECT held (or was refused).
std::unique_ptr<StorageFile> ShardIo::open_timed(const std::string& path, OpenFor mode, PhaseRun& r) {
  const auto t = Clock::now();
  auto file = storage.open(path, mode, {.direct = opt.direct});
  r.direct = file->direct();
  r.direct_refused = file->direct_refused();
  r.times.open_s = seconds_since(t);
  return file;
}

PhaseRun ShardIo::write_shard(const std::string& dir, const ShardData& data, Clock::time_point t0) {
  PhaseRun r = begin_phase();
  if (writer < 0) return r;
  const std::string path = file_of(dir, writer);
  const std::uint64_t base = offset_of(writer);
  try {
    r.times.start_s = seconds_since(t0);
    const OpenFor mode = opt.layout == CheckpointLayout::shared_file ? OpenFor::write_existing : OpenFor::create_write;
    auto file = open_timed(path, mode, r);
    auto t = Clock::now();
    for (std::uint64_t off = 0; off < plan.shard_bytes; off += opt.transfer_bytes) {
      const std::size_t n = static_cast<std::size_t>(std::min(opt.transfer_bytes, plan.shard_bytes - off));
      file->write_at(data.at(off, n).data(), n, base + off);
    }
    r.times.io_s = seconds_since(t);
    if (opt.fsync) {
      t = Clock::now();
      file->sync();
      r.times.fsync_s = seconds_since(t);
    }
    t = Clock::now();
    file->close();
    r.times.close_s = seconds_since(t);
    r.times.end_s = seconds_since(t0);
    r.times.bytes = plan.shard_bytes;
    r.times.retries = file->retries();
  } catch (const StorageError& e) {
    r.error = e.what();
  }
  return r;
}

PhaseRun ShardIo::read_shard(const std::string& dir, int shard_writer, const ShardData& data, Clock::time_point t0) {
  PhaseRun r = begin_phase();
  if (writer < 0) return r;
  const std::string path = file_of(dir, shard_writer);
  const std::uint64_t base = offset_of(shard_writer);
  double verify_s = 0;
  try {
    AlignedBuffer buffer = AlignedBuffer::allocate(static_cast<std::size_t>(opt.transfer_bytes));
    r.times.start_s = seconds_since(t0);
    auto file = open_timed(path, OpenFor::read, r);
    auto t = Clock::now();
    for (std::uint64_t off = 0; off < plan.shard_bytes; off += opt.transfer_bytes) {
      const std::size_t n = static_cast<std::size_t>(std::min(opt.transfer_bytes, plan.shard_bytes - off));
      file->read_at(buffer.get(), n, base + off);
      // Verification is not storage time: it is measured and taken out of the phase.
      const auto v = Clock::now();
      if (r.mismatch.empty()) {
        if (const auto bad = data.first_mismatch(off, {buffer.get(), n})) {
          r.mismatch = fmt::format("rank {}: {} at offset {}: the shard read back wrong (shard of rank {})", w.rank,
                                   path, base + *bad, shard_writer);
        }
      }
      verify_s += seconds_since(v);
    }
    r.times.io_s = seconds_since(t) - verify_s;
    t = Clock::now();
    file->close();
    r.times.close_s = seconds_since(t);
    r.times.end_s = seconds_since(t0) - verify_s;
    r.times.bytes = plan.shard_bytes;
    r.times.retries = file->retries();
  } catch (const StorageError& e) {
    r.error = e.what();
  }
  return r;
}

PhaseRun tiered_write(ShardIo& target, ShardIo& local, const std::string& tier_dir, const std::string& partial,
                      const ShardData& data, Clock::time_point t0, double& local_end_s) {
  PhaseRun r = local.write_shard(tier_dir, data, t0);
  local_end_s = r.times.end_s;
  if (target.writer < 0) return r;
  const std::string local_file = local.file_of(tier_dir, target.writer);
  if (!r.error.empty()) {
    std::error_code ec;
    fs::remove(local_file, ec);  // the failed local copy (the trial fails; the tier is left clean)
    return r;
  }
  const DrainTimes d = drain({&local.storage, local_file, &target.storage, target.file_of(partial, target.writer),
                              target.plan.shard_bytes, target.opt.transfer_bytes, target.opt.direct, target.opt.fsync},
                             t0);
  r.error = d.error;
  r.direct = r.direct && d.direct;
  r.times.open_s = d.open_s;
  r.times.io_s = d.io_s;
  r.times.fsync_s = d.fsync_s;
  r.times.close_s = d.close_s;
  r.times.end_s = d.end_s;
  try {
    local.storage.remove_tree(local_file);  // drained: the local tier keeps no copy past the trial
  } catch (const StorageError& e) {
    if (r.error.empty()) r.error = e.what();
  }
  return r;
}

double memory_gbps(ControlChannel& ch, std::size_t copy_bytes) {
  AlignedBuffer a = AlignedBuffer::allocate(copy_bytes), b = AlignedBuffer::allocate(copy_bytes);
  std::memset(a.get(), 1, copy_bytes);
  std::memset(b.get(), 2, copy_bytes);
  ch.barrier();
  const auto t0 = Clock::now();
  for (int i = 0; i < 4; ++i) std::memcpy(b.get(), a.get(), copy_bytes);
  const double slowest = ch.max_all(seconds_since(t0));
  return slowest > 0 ? 4.0 * static_cast<double>(copy_bytes) * ch.size() / slowest / 1e9 : 0.0;
}

CacheDrop drop_cache(World& w, Storage& storage, const std::string& file, bool reads_direct, bool& other_node) {
  int mine = static_cast<int>(CacheDrop::warm);
  other_node = false;
  if (reads_direct) {
    mine = static_cast<int>(CacheDrop::o_direct);
  } else {
    bool dropped = false;
    if (w.ch.local_rank() == 0 && ::geteuid() == 0) {
      ::sync();
      std::ofstream out("/proc/sys/vm/drop_caches");
      out << "1\n";
      out.flush();
      dropped = static_cast<bool>(out);
    }
    dropped = w.ch.max_all(dropped ? 1.0 : 0.0) > 0;
    w.ch.barrier();
    const Eviction e = file.empty() ? Eviction{true, "fadvise", ""} : storage.evict(file);
    if (e.evicted)
      mine = static_cast<int>(dropped ? CacheDrop::drop_caches : CacheDrop::fadvise);
    else if (w.nodes > 1 && !w.node_local) {
      other_node = true;  // IOR's -C: read a shard this node's cache never held
      mine = static_cast<int>(CacheDrop::other_node);
    }
  }
  return static_cast<CacheDrop>(static_cast<int>(w.ch.max_all(mine)));
}

}  // namespace ccbench::checkpoint_run
