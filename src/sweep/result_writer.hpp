// Owns the result file of a run on rank 0: rows arrive from the engine, each is appended to the
// JSON-lines stream at once, and the whole file is (re)written atomically when the first result
// arrives (status incomplete, so a killed run still leaves its metadata) and at the end. Nothing is
// written before the first result: a run that fails before it leaves an existing file untouched. Thread-safe: the
// watchdog thread calls finish() when a run is interrupted or hangs.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "core/result_stream.hpp"

namespace ccbench {

namespace exit_code {
// Measured, but a result file could not be written where asked (its folder was removed and cannot
// be made again, the disk is full): the message names where the results were kept instead. Beside
// the other codes' header (core/error.hpp) only because the writer is what decides it.
inline constexpr int not_saved = 5;
}  // namespace exit_code

class ResultWriter {
 public:
  // An empty path keeps results in memory only. Checks the path (not a directory, nor its .jsonl
  // stream; a file can be created beside it) and throws when it cannot be written. Creates missing
  // folders, one line each on stderr, but refuses one directly under / (a typo, not a CI path).
  // Locks the stream (another run on the same -J throws); writes no data.
  ResultWriter(ResultFile header, const std::filesystem::path& json_path);

  void append(const ResultRow& row);
  // Writes the final file; returns false (after printing why) when it cannot. A folder removed
  // during the run is created again (and said so); when the file still cannot be written it is
  // saved to fallback_path() instead, if that works. Idempotent: the first call wins, later calls
  // (a signal racing the normal end) do nothing.
  // `durable` = false skips the fsync (an emergency write racing the launcher's SIGKILL).
  bool finish(const std::string& status, int exit_code, const std::optional<std::string>& error, bool durable = true);

  void set_peak_rss_bytes(std::uint64_t bytes);
  // Adds what the backend learned by the end of the run (Backend::final_metadata) to "software".
  void merge_software(const nlohmann::json& extra);
  // Adds keys under "system" (host_load at the end of a run).
  void merge_system(const nlohmann::json& extra);
  // Adds keys under "fabric" (fabric.proof, docs/path-proof.md).
  void merge_fabric(const nlohmann::json& extra);
  // Sets `key` in every row written so far (a failed path proof marks the rows it invalidates).
  void mark_rows(const std::string& key, const nlohmann::json& value);
  nlohmann::json system();
  std::size_t result_count();
  const std::filesystem::path& path() const { return path_; }
  // Where finish() put the results when path() could not be written; empty otherwise.
  std::filesystem::path fallback_path();

 private:
  std::mutex mutex_;
  ResultFile file_;
  std::filesystem::path path_;
  StreamLock lock_;  // held from the check to the first result, then by stream_
  std::unique_ptr<ResultStream> stream_;
  std::filesystem::path fallback_;
  bool finished_ = false;
  bool started_ = false;  // the file and its stream have been written
  void start_files();
  void keep_stream_at_path();
  bool write_final(bool durable);
};

}  // namespace ccbench
