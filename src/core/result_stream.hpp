// The JSON-lines stream written beside a result file while a run goes (out.json -> out.jsonl):
// one finished result a line, flushed at once, so a killed job keeps every finished size.
//
// The stream is held under an exclusive flock from before the first measurement to the end of the
// run: a second run given the same -J is refused (exit 2) instead of interleaving its lines with
// the first one's.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace ccbench {

// An open, exclusively locked stream path that nothing has been written to yet.
class StreamLock {
 public:
  StreamLock() = default;
  // Opens (creating it if absent, never truncating) and locks; throws std::runtime_error
  // "another run is writing <path> ..." when a live process holds the lock, std::system_error
  // naming the path when it cannot be opened.
  explicit StreamLock(const std::filesystem::path& path);
  StreamLock(StreamLock&& other) noexcept;
  StreamLock& operator=(StreamLock&& other) noexcept;
  StreamLock(const StreamLock&) = delete;
  StreamLock& operator=(const StreamLock&) = delete;
  // Releases the lock; removes the file when this lock created it and nothing was written.
  ~StreamLock();

  bool held() const { return fd_ >= 0; }
  const std::filesystem::path& path() const { return path_; }

 private:
  friend class ResultStream;
  void release();
  std::filesystem::path path_;
  int fd_ = -1;
  bool created_ = false;
};

class ResultStream {
 public:
  ResultStream() = default;
  // Truncates or creates the file; throws std::system_error naming the path when it cannot.
  explicit ResultStream(const std::filesystem::path& path);
  // Truncates the locked file and writes to it, keeping the lock until this stream closes.
  explicit ResultStream(StreamLock&& lock);
  ResultStream(const ResultStream&) = delete;
  ResultStream& operator=(const ResultStream&) = delete;
  ~ResultStream();

  bool is_open() const { return file_ != nullptr; }
  const std::filesystem::path& path() const { return path_; }
  void append(const ResultRow& row);
  // False when the file written to is no longer at path() (its folder or the file was removed or
  // replaced during the run): what is appended then is lost with the unlinked file.
  bool still_at_path() const;
  // Re-creates path() (and its folder) holding `rows`, keeping the lock on the new file. Throws
  // std::system_error naming the path when it cannot.
  void recreate(const std::vector<ResultRow>& rows);

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

}  // namespace ccbench
