#include "sweep/result_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "core/output_folders.hpp"
#include "core/save_or_keep.hpp"

namespace ccbench {
ResultWriter::ResultWriter(ResultFile header, const std::filesystem::path& json_path)
    : file_(std::move(header)), path_(json_path) {
  file_.run.status = "incomplete";
  {  // Values that were not UTF-8 are recorded escaped (core/result.cpp): say so once.
    const nlohmann::json header_json = to_json(file_);
    if (const auto it = header_json["run"].find("non_utf8_escaped"); it != header_json["run"].end()) {
      std::string fields;
      for (const auto& f : *it) fields += (fields.empty() ? "" : ", ") + f.get<std::string>();
      std::fprintf(stderr, "ccbench: warning: not UTF-8, recorded with \\xNN escapes: %s\n", fields.c_str());
    }
  }
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
  create_missing_folders(dir, "-J/--json");
  // The atomic write needs a temporary file beside the target: try one.
  std::string probe = (dir / ("." + path_.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot create a file in " + dir.string());
  ::close(fd);
  ::unlink(probe.c_str());
  lock_ = StreamLock(stream);
}

// Caller holds mutex_.
void ResultWriter::start_files() {
  if (started_ || path_.empty()) return;
  started_ = true;
  write_file_atomically(path_, to_json(file_).dump(1) + "\n");
  stream_ = std::make_unique<ResultStream>(std::move(lock_));
}

// Caller holds mutex_. A folder removed during the run took the stream with it: every later line
// would go to an unlinked file. Write the stream again where it belongs, with every row so far.
void ResultWriter::keep_stream_at_path() {
  if (!stream_ || stream_->still_at_path()) return;
  const bool folder_gone = path_.has_parent_path() && !std::filesystem::exists(path_.parent_path());
  try {
    stream_->recreate(file_.results);
    std::fprintf(stderr,
                 "ccbench: warning: %s was removed during the run; wrote it again with the %zu results so far\n",
                 folder_gone ? path_.parent_path().c_str() : stream_->path().c_str(), file_.results.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "ccbench: warning: the result stream %s was removed during the run and cannot be written "
                 "again: %s (the results are kept in memory until the end)\n",
                 stream_->path().c_str(), e.what());
    stream_.reset();
  }
}

void ResultWriter::append(const ResultRow& row) {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  keep_stream_at_path();  // before this row joins the rows a re-created stream is written with
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

void ResultWriter::merge_system(const nlohmann::json& extra) {
  if (!extra.is_object()) return;
  std::lock_guard lock(mutex_);
  if (!file_.system.is_object()) file_.system = nlohmann::json::object();
  file_.system.update(extra);
}

void ResultWriter::merge_fabric(const nlohmann::json& extra) {
  if (!extra.is_object()) return;
  std::lock_guard lock(mutex_);
  if (!file_.fabric.is_object()) file_.fabric = nlohmann::json::object();
  file_.fabric.update(extra);
}

void ResultWriter::mark_rows(const std::string& key, const nlohmann::json& value) {
  std::lock_guard lock(mutex_);
  for (ResultRow& row : file_.results) row.extra[key] = value;
}

nlohmann::json ResultWriter::system() {
  std::lock_guard lock(mutex_);
  return file_.system;
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
  return write_final(durable);
}

// Caller holds mutex_.
bool ResultWriter::write_final(bool durable) {
  const SaveOutcome saved = save_or_keep(path_, to_json(file_).dump(1) + "\n", durable);
  if (saved.written == path_) {
    if (saved.folder_recreated) {
      if (stream_) stream_->recreate(file_.results);  // removed with its folder
      std::fprintf(stderr,
                   "ccbench: warning: the folder %s was removed during the run; created it again and wrote %s\n",
                   path_.parent_path().c_str(), path_.c_str());
    }
    return true;
  }
  fallback_ = saved.written;
  if (!fallback_.empty()) {
    std::fprintf(stderr, "ccbench: cannot write the result file %s: %s; the %zu results were saved to %s instead\n",
                 path_.c_str(), saved.why.c_str(), file_.results.size(), fallback_.c_str());
  } else {
    std::fprintf(stderr,
                 "ccbench: cannot write the result file %s: %s, nor a copy in the working or temporary "
                 "folder: the %zu results are lost\n",
                 path_.c_str(), saved.why.c_str(), file_.results.size());
  }
  return false;
}

std::filesystem::path ResultWriter::fallback_path() {
  std::lock_guard lock(mutex_);
  return fallback_;
}

}  // namespace ccbench
