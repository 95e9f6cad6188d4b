// The storage interface `ccbench checkpoint` times, in the style of IOR's aiori and fio's ioengines:
// one narrow set of calls (create/open, transfer at an offset, sync, close, make/remove/rename a
// directory, sync a directory, evict a file's cache) so the timing code above it does not change
// when another engine (S3) arrives. Everything that differs between engines (which flags they
// take, how a step is named, claimed, committed, listed, read back and removed) is a call here, so
// the code above this interface has no engine branch. docs/checkpoint.md, "Storage engines".
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ccbench::checkpoint {

// The storage engines (a closed set): which one a target gets is open_storage's decision alone.
enum class Engine { posix, s3, memory };
inline constexpr const char* kEngineNames[] = {"posix", "s3", "memory"};
static_assert(std::size(kEngineNames) == static_cast<std::size_t>(Engine::memory) + 1, "every Engine has a name");
// "posix", "s3", "memory": the result rows' `backend` and config.backend.
inline const char* engine_name(Engine e) { return kEngineNames[static_cast<std::size_t>(e)]; }

struct StepManifest;
struct CommittedStep;

// A failed storage call, with what the errno-style code says (ENOSPC, EIO, ...), the call and the
// path and offset, so a failed trial names them: "write rank-00001.shard at offset 8388608: No space
// left on device (ENOSPC)".
class StorageError : public std::runtime_error {
 public:
  StorageError(int error, std::string call, std::string path, std::uint64_t offset);
  // An engine's own message (S3: "S3 UploadPart 3 s3://b/k: HTTP 503 ... (after 5 tries)").
  StorageError(int error, const std::string& message);
  int error() const { return error_; }
  const std::string& path() const { return path_; }
  std::uint64_t offset() const { return offset_; }
  std::string errno_name() const;  // "ENOSPC", or the number

 private:
  int error_;
  std::string path_;
  std::uint64_t offset_;
};

enum class OpenFor { create_write, write_existing, read };

struct OpenOptions {
  bool direct = false;  // bypass the page cache (O_DIRECT); buffers, lengths and offsets 4 KiB aligned
};

class StorageFile {
 public:
  virtual ~StorageFile() = default;
  // The whole buffer at `offset` (short transfers are retried); throws StorageError.
  virtual void write_at(const void* data, std::size_t bytes, std::uint64_t offset) = 0;
  virtual void read_at(void* data, std::size_t bytes, std::uint64_t offset) = 0;
  // Durable: data and metadata on stable storage (fsync).
  virtual void sync() = 0;
  virtual void close() = 0;
  // Whether the cache bypass asked for is in effect, and why not when it was refused ("" if it is).
  virtual bool direct() const = 0;
  virtual const std::string& direct_refused() const = 0;
  // Requests this file's engine sent again after a transient failure (S3; 0 for POSIX).
  virtual std::uint64_t retries() const { return 0; }
};

// How a file's cached pages were evicted before a read (the first rungs of the cache-drop ladder
// that a storage engine can do for one file; docs/method.md, "Checkpoints").
struct Eviction {
  bool evicted = false;  // verified: none of the file's pages are resident any more
  std::string method;    // "fadvise" (posix_fadvise DONTNEED, verified with mincore)
  std::string why_not;   // when not evicted: "23 of 2048 pages still resident (tmpfs?)"
};

// What a run asks of its target's engine: the flags an engine may not support.
struct EngineRequest {
  bool shared_file = false;       // --layout shared-file: several writers into one file
  bool direct = false;            // --direct
  bool fsync = true;              // not --no-fsync
  bool export_to = false;         // --export-to (waits for an FSx export of a POSIX target)
  std::uint64_t shard_bytes = 0;  // the plan's shard
};

// The flags the describe line and the config name (describe_plan, checkpoint_header).
struct IoSettings {
  bool direct = false;
  bool fsync = true;
};

class Storage {
 public:
  virtual ~Storage() = default;
  virtual Engine engine() const = 0;  // its name: engine_name(engine())

  // Why this engine cannot do what the run asks ("" when it can): one line naming the flag and
  // the engine ("--direct: not for the s3 engine (no page cache to bypass)"). Checked before any I/O.
  virtual std::string refuses(const EngineRequest& asked) const = 0;
  // The run's describe line's I/O part ("O_DIRECT + fsync", "multipart parts of 64 MiB, ...").
  virtual std::string io_summary(const IoSettings& io) const = 0;
  // The engine's own settings for the result file's config.checkpoint.<engine> (null: none).
  virtual nlohmann::json settings() const { return nullptr; }
  // The target's kind for the describe line: the filesystem type for POSIX ("ext4"), else the engine.
  virtual std::string target_type(const std::string& target) const = 0;
  // Whether every rank sees one namespace by construction (an object store, one process's memory);
  // false: the command probes whether the target is node-local.
  virtual bool one_namespace() const = 0;
  // Free bytes under the target, checked against the step before anything is written (nullopt:
  // nothing to check, an object store has no free space).
  virtual std::optional<std::uint64_t> free_bytes(const std::string& target) = 0;
  // Whether reads go through a local page cache that a cold read must drop first (POSIX); false:
  // there is nothing local to drop (the rows' cache_drop is `remote`).
  virtual bool local_cache() const = 0;
  // Whether listing the target is a remote request that belongs under the watchdog (S3): the step
  // numbering is then checked as each trial claims its step, not once before the first trial.
  virtual bool remote_listing() const { return false; }
  virtual std::unique_ptr<StorageFile> open(const std::string& path, OpenFor mode, const OpenOptions& options) = 0;
  virtual void make_dir(const std::string& path) = 0;
  // Removes a directory and what is in it; a missing directory is no error.
  virtual void remove_tree(const std::string& path) = 0;
  // Atomic rename (the commit of a step directory).
  virtual void rename(const std::string& from, const std::string& to) = 0;
  // Makes the entries of a directory durable (fsync of the directory).
  virtual void sync_dir(const std::string& path) = 0;
  virtual Eviction evict(const std::string& path) = 0;

  // The target and its names (docs/checkpoint.md, "S3 engine" for what S3 does):
  // Why the target cannot be used ("" when it can): S3 checks the bucket and the credentials.
  virtual std::string unusable(const std::string& target) = 0;
  // The names directly under a directory (S3: the common prefixes and keys under PREFIX/).
  virtual std::vector<std::string> entries(const std::string& dir) = 0;
  // Whether a step is committed by renaming its partial directory (POSIX). S3 has no rename: a step
  // is written in place and committed by its manifest object, put after every shard was confirmed.
  virtual bool commits_by_rename() const { return true; }
  // The name of the new step directory under `target`, `next_step` being the step numbering's next
  // number, taken so that no other run writes into it. POSIX: step_name(next_step) (the rename
  // into place is what is exclusive there). S3: a conditional create of the step's claim object.
  virtual std::string claim_step(const std::string& target, int next_step);

  // Steps (step_store.hpp runs the listing, --keep and the run's cleanup over these):
  // The step number of an entry under the target that names a committed step, else -1.
  // Default: step-NNNNNN (six digits) only; S3 also names a step step-NNNNNN-<run token>.
  virtual int committed_step_of(const std::string& entry) const;
  // The text of `step_dir`'s manifest; nullopt when there is none (or, POSIX, when the step is not
  // a real folder: a symlink to one is not a step). Throws ParseError "<file>: <why>" when it cannot
  // be read as a manifest (unreadable, a FIFO, too large) and StorageError when the engine fails.
  virtual std::optional<std::string> read_manifest(const std::string& step_dir) = 0;
  // Whether this run may remove a committed step of ccbench's (POSIX: any; S3: only a step this
  // run claimed, since another run writing into the prefix may own it).
  virtual bool removable(const std::string& /*step_dir*/) const { return true; }
  // Removes a committed step: its manifest first (what is left no longer looks committed), then
  // only the files its manifest lists, then the step itself if nothing else is in it. "" when the
  // step is gone, else what was kept and why ("kept T/step-000002: it holds files its manifest
  // does not list"). Never throws: a step that cannot be removed is kept.
  virtual std::string remove_step(const CommittedStep& step) = 0;
};

// What an engine that is not POSIX needs from the flags (S3's multipart upload and endpoint).
struct RemoteOptions {
  std::uint64_t part_bytes = 64ULL << 20;  // --part-size
  int concurrency = 4;                     // --concurrency: parts (and ranged GETs) in flight per rank
  std::string endpoint;                    // --s3-endpoint ("" : AWS_ENDPOINT_URL, else the region's)
  double request_deadline_s = 0;           // one request, all its tries: -T / 4 (0: -T 0, none)
};

// The one place that decides a target's engine: s3://BUCKET/PREFIX the S3 engine, a path POSIX.
// Throws UsageError naming --target for a scheme that has no engine (memory:// included: the
// memory engine is only constructed by tests, memory_storage.hpp), or for S3 without credentials.
std::unique_ptr<Storage> open_storage(const std::string& target, const RemoteOptions& remote = {});
std::unique_ptr<Storage> make_posix_storage();
std::unique_ptr<Storage> make_s3_storage(const std::string& target, const RemoteOptions& remote);

}  // namespace ccbench::checkpoint
