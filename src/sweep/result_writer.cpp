#include "sweep/result_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <system_error>

namespace ccbench {

ResultWriter::ResultWriter(ResultFile header, const std::filesystem::path& json_path)
    : file_(std::move(header)), path_(json_path) {
  file_.run.status = "incomplete";
  if (path_.empty()) return;
  // Check everything now, write nothing: the file (and its .jsonl stream) are first written when
  // the first result arrives, so an error before it never replaces an existing file.
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path_, ec)) throw std::runtime_error("is a directory");
  const fs::path stream = jsonl_path_for(path_);
  if (fs::is_directory(stream, ec)) {
    throw std::runtime_error("its result stream " + stream.string() + " is a directory");
  }
  const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  if (path_.has_parent_path()) fs::create_directories(dir, ec);
  // The atomic write needs a temporary file beside the target: try one.
  std::string probe = (dir / ("." + path_.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot create a file in " + dir.string());
  ::close(fd);
  ::unlink(probe.c_str());
}

// Caller holds mutex_.
void ResultWriter::start_files() {
  if (started_ || path_.empty()) return;
  started_ = true;
  write_file_atomically(path_, to_json(file_).dump(1) + "\n");
  stream_ = std::make_unique<ResultStream>(jsonl_path_for(path_));
}

void ResultWriter::append(const ResultRow& row) {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  file_.results.push_back(row);
  if (!started_) {
    try {
      start_files();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ccbench: cannot write the result file %s: %s\n", path_.c_str(), e.what());
    }
  }
  if (stream_) stream_->append(row);
}

void ResultWriter::set_peak_rss_bytes(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  file_.run.peak_rss_bytes = bytes;
}

void ResultWriter::merge_software(const nlohmann::json& extra) {
  if (!extra.is_object()) return;
  std::lock_guard lock(mutex_);
  file_.software.update(extra);
}

std::size_t ResultWriter::result_count() {
  std::lock_guard lock(mutex_);
  return file_.results.size();
}

bool ResultWriter::finish(const std::string& status, int exit_code, const std::optional<std::string>& error,
                          bool durable) {
  std::lock_guard lock(mutex_);
  if (finished_) return true;
  finished_ = true;
  file_.run.status = status;
  file_.run.exit_code = exit_code;
  file_.run.error = error;
  file_.run.finished_at = utc_timestamp_now();
  if (path_.empty()) return true;
  if (!started_ && file_.results.empty() && std::filesystem::exists(path_)) {
    std::fprintf(stderr, "ccbench: no result finished; %s left as it was\n", path_.c_str());
    return false;
  }
  try {
    write_file_atomically(path_, to_json(file_).dump(1) + "\n", durable);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccbench: cannot write the result file: %s (finished results are in %s)\n", e.what(),
                 jsonl_path_for(path_).c_str());
    return false;
  }
  return true;
}

}  // namespace ccbench
