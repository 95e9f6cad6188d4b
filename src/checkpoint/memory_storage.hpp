// The memory engine: a Storage whose files and folders live in this process's memory, for tests
// that run the code above the Storage interface (step claim, commit, listing, manifest read,
// --keep and a run's cleanup) in one process, threads as ranks included (every call takes a lock).
// No target names it: open_storage never picks it, a test constructs it and passes it as Storage&.
// It adds no line to the timing code (docs/checkpoint.md, "Storage engines": the recipe).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/storage.hpp"

namespace ccbench::checkpoint {

class MemoryStorage final : public Storage {
 public:
  // Paths are '/'-separated names, as POSIX ones; `roots` exist from the start (a target).
  explicit MemoryStorage(std::vector<std::string> roots = {});

  Engine engine() const override { return Engine::memory; }
  // --direct (no page cache to bypass) and --export-to (not a POSIX target) are refused.
  std::string refuses(const EngineRequest& asked) const override;
  std::string io_summary(const IoSettings& io) const override;
  std::string target_type(const std::string&) const override { return "memory"; }
  bool one_namespace() const override { return true; }
  std::optional<std::uint64_t> free_bytes(const std::string&) override { return std::nullopt; }
  bool local_cache() const override { return false; }

  std::unique_ptr<StorageFile> open(const std::string& path, OpenFor mode, const OpenOptions& options) override;
  void make_dir(const std::string& path) override;
  void remove_tree(const std::string& path) override;
  void rename(const std::string& from, const std::string& to) override;
  void sync_dir(const std::string& path) override;
  Eviction evict(const std::string&) override { return {true, "memory", ""}; }
  std::string unusable(const std::string& target) override;
  std::vector<std::string> entries(const std::string& dir) override;
  std::optional<std::string> read_manifest(const std::string& step_dir) override;
  std::string remove_step(const CommittedStep& step) override;

  // What a test looks at: every path held (folders end in '/'), sorted; the syncs of a path so far.
  std::vector<std::string> paths() const;
  int syncs(const std::string& path) const;

  struct Blob;

 private:
  bool is_dir(const std::string& path) const;  // the caller holds mutex_
  void check_parent(const std::string& path, const char* call) const;

  mutable std::mutex mutex_;
  std::set<std::string> dirs_;
  std::map<std::string, std::shared_ptr<Blob>> files_;
  std::map<std::string, int> syncs_;
};

}  // namespace ccbench::checkpoint
