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

namespace ccbench::checkpoint {

// A failed storage call, with what the errno-style code says (ENOSPC, EIO, ...), the call and the
// path and offset, so a failed trial names them: "write rank-00001.shard at offset 8388608: No space
// left on device (ENOSPC)".
class StorageError : public std::runtime_error {
 public:
  StorageError(int error, std::string call, std::string path, std::uint64_t offset);
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
};

// The engine for a --target: POSIX paths now. Throws UsageError naming --target for a scheme that
// has no engine (s3://).
std::unique_ptr<Storage> make_storage(const std::string& target);

}  // namespace ccbench::checkpoint
