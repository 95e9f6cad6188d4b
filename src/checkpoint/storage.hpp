// The storage interface `ccbench checkpoint` times, in the style of IOR's aiori and fio's ioengines:
// one narrow set of calls (create/open, transfer at an offset, sync, close, make/remove/rename a
// directory, sync a directory, evict a file's cache) so the timing code above it does not change
// when another engine (S3) arrives. docs/checkpoint.md, "Storage interface".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ccbench::checkpoint {

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

class Storage {
 public:
  virtual ~Storage() = default;
  virtual std::string name() const = 0;  // "posix"
  virtual std::unique_ptr<StorageFile> open(const std::string& path, OpenFor mode, const OpenOptions& options) = 0;
  virtual void make_dir(const std::string& path) = 0;
  // Removes a directory and what is in it; a missing directory is no error.
  virtual void remove_tree(const std::string& path) = 0;
  // Atomic rename (the commit of a step directory).
  virtual void rename(const std::string& from, const std::string& to) = 0;
  // Makes the entries of a directory durable (fsync of the directory).
  virtual void sync_dir(const std::string& path) = 0;
  virtual Eviction evict(const std::string& path) = 0;

  // Added for S3 (docs/checkpoint.md, "S3 engine"), POSIX defaults here:
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
};

// What an engine that is not POSIX needs from the flags (S3's multipart upload and endpoint).
struct RemoteOptions {
  std::uint64_t part_bytes = 64ULL << 20;  // --part-size
  int concurrency = 4;                     // --concurrency: parts (and ranged GETs) in flight per rank
  std::string endpoint;                    // --s3-endpoint ("" : AWS_ENDPOINT_URL, else the region's)
  double request_deadline_s = 0;           // one request, all its tries: -T / 4 (0: -T 0, none)
};

// The engine for a --target: s3://BUCKET/PREFIX the S3 engine, a path POSIX. Throws UsageError
// naming --target for a scheme that has no engine, or for S3 without credentials.
std::unique_ptr<Storage> make_storage(const std::string& target, const RemoteOptions& remote = {});
std::unique_ptr<Storage> make_s3_storage(const std::string& target, const RemoteOptions& remote);

}  // namespace ccbench::checkpoint
