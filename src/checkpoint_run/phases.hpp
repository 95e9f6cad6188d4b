// One rank's side of a checkpoint trial's phases (docs/checkpoint.md): its shard written (open, every
// transfer, fsync, close, each timed) or read back and verified, the --tiered write (local tier, then
// the drain), the memory-copy bandwidth and the cache-drop ladder before a read. Every call here
// that talks to other ranks says so; the rest is this rank's own I/O through `Storage`.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/durable_time.hpp"
#include "checkpoint/shard_data.hpp"
#include "checkpoint/shard_plan.hpp"
#include "checkpoint/storage.hpp"
#include "checkpoint_run/options.hpp"
#include "sweep/channel.hpp"

namespace ccbench::checkpoint_run {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0);

// Who this rank is among the run's ranks, and who commits.
struct World {
  explicit World(ControlChannel& channel) : ch(channel) {}
  ControlChannel& ch;
  int rank = 0;
  int size = 1;
  std::vector<std::string> hosts;  // every rank's host, on every rank
  int nodes = 1;
  bool leader = false;      // commits on this rank's host (rank 0, or the first rank of a host when node-local)
  bool node_local = false;  // the target is not one directory seen by every rank
};

// Collective: every rank's host and the number of hosts.
World make_world(ControlChannel& channel);

// The rungs of the cache-drop ladder, weakest last: the phase's method is the weakest any rank got.
// `remote`: an object store, read over the network with no local cache to drop.
enum class CacheDrop : int { o_direct, remote, drop_caches, fadvise, other_node, warm };
const char* name(CacheDrop drop);

// One rank's phase of a trial (write or read) and what went wrong in it.
struct PhaseRun {
  checkpoint::RankPhases times;
  std::string error;     // a storage error: the trial failed
  std::string mismatch;  // a shard read back wrong
  std::string direct_refused;
  bool direct = false;
};

// A rank's phase times as rank 0 gathers them (JSON text) and back.
std::string phases_json(const PhaseRun& r);
checkpoint::RankPhases phases_from_json(const std::string& text);

// The data of a rank that holds no shard (never read: it writes nothing).
const checkpoint::ShardData& no_shard();

// This rank's shard I/O on one engine.
struct ShardIo {
  const World& w;
  const CheckpointOptions& opt;
  const checkpoint::ShardPlan& plan;
  checkpoint::Storage& storage;
  int writer = -1;  // this rank's writer index (-1: it holds no shard)

  std::string file_of(const std::string& dir, int writer_index) const;
  std::uint64_t offset_of(int writer_index) const;
  // Writes this rank's shard into `dir` (reads and verifies writer `shard_writer`'s); times since `t0`.
  PhaseRun write_shard(const std::string& dir, const checkpoint::ShardData& data, Clock::time_point t0);
  PhaseRun read_shard(const std::string& dir, int shard_writer, const checkpoint::ShardData& data,
                      Clock::time_point t0);

 private:
  PhaseRun begin_phase() const;
  std::unique_ptr<checkpoint::StorageFile> open_timed(const std::string& path, checkpoint::OpenFor mode, PhaseRun& r);
};

// --tiered: the shard goes to the local tier first (what training waits for), then drains to the
// target right after (docs/checkpoint.md, "Tiered checkpoints"). The phase's start is the local
// write's, its I/O times and end the drain's; `local_end_s` when the local copy was done.
PhaseRun tiered_write(ShardIo& target, ShardIo& local, const std::string& tier_dir, const std::string& partial,
                      const checkpoint::ShardData& data, Clock::time_point t0, double& local_end_s);

// Collective: the hosts' memory-copy bandwidth, GB/s summed over ranks copying `copy_bytes` at once
// (the plausibility bound for a tier that is really the page cache). Outside any timing.
double memory_gbps(ControlChannel& ch, std::size_t copy_bytes);

// Collective: the first rung of the cache-drop ladder that works for this rank's shard `file`;
// the weakest over ranks. `other_node`: this rank is to read another host's shard (IOR's -C).
CacheDrop drop_cache(World& w, checkpoint::Storage& storage, const std::string& file, bool reads_direct,
                     bool& other_node);

}  // namespace ccbench::checkpoint_run
