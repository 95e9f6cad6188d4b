#include "core/result_stream.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

#include "core/utf8.hpp"

namespace ccbench {
namespace {

// Opens `path` for writing without truncating it and takes the exclusive lock. `created` says
// whether the open made the file.
int open_and_lock(const std::filesystem::path& path, bool& created) {
  // O_NONBLOCK: a FIFO in the stream's place fails (ENXIO) instead of blocking the run.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NONBLOCK, 0644);
  created = fd >= 0;
  if (fd < 0 && errno == EEXIST) fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot write " + path.string());
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      throw std::runtime_error("another run is writing " + path.string() +
                               " (it holds the stream's lock); give each run its own -J");
    }
    throw std::system_error(err, std::generic_category(), "cannot lock " + path.string());
  }
  return fd;
}

std::FILE* truncate_and_open(int fd, const std::filesystem::path& path) {
  if (::ftruncate(fd, 0) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "cannot write " + path.string());
  }
  std::FILE* f = ::fdopen(fd, "w");
  if (f == nullptr) {
    const int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "cannot write " + path.string());
  }
  return f;
}

}  // namespace

StreamLock::StreamLock(const std::filesystem::path& path) : path_(path), fd_(open_and_lock(path, created_)) {}

StreamLock::StreamLock(StreamLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), created_(other.created_) {
  other.fd_ = -1;
}

StreamLock& StreamLock::operator=(StreamLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    created_ = other.created_;
    other.fd_ = -1;
  }
  return *this;
}

StreamLock::~StreamLock() { release(); }

void StreamLock::release() {
  if (fd_ < 0) return;
  if (created_) ::unlink(path_.c_str());  // made by this run, and never written
  ::close(fd_);
  fd_ = -1;
}

ResultStream::ResultStream(const std::filesystem::path& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) throw std::system_error(errno, std::generic_category(), "cannot write " + path.string());
}

ResultStream::ResultStream(StreamLock&& lock) : path_(lock.path_) {
  const int fd = lock.fd_;
  lock.fd_ = -1;  // this stream owns the descriptor (and the lock) from here
  file_ = truncate_and_open(fd, path_);
}

ResultStream::~ResultStream() {
  if (file_ != nullptr) std::fclose(file_);
}

void ResultStream::append(const ResultRow& row) {
  if (file_ == nullptr) return;
  nlohmann::json j = to_json(row);
  escape_invalid_utf8(j);  // the header lists what was escaped; a row only carries imported text
  const std::string line = j.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), file_);
  // Flushed to the kernel per line: a crash of this process (or mpirun killing it) keeps the line.
  std::fflush(file_);
}

bool ResultStream::still_at_path() const {
  if (file_ == nullptr) return true;
  struct stat open_st {}, path_st {};
  if (::fstat(::fileno(file_), &open_st) != 0) return true;
  if (::stat(path_.c_str(), &path_st) != 0) return false;
  return open_st.st_dev == path_st.st_dev && open_st.st_ino == path_st.st_ino;
}

void ResultStream::recreate(const std::vector<ResultRow>& rows) {
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path());
  bool created = false;
  const int fd = open_and_lock(path_, created);
  std::FILE* f = truncate_and_open(fd, path_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = f;
  for (const auto& row : rows) append(row);
}

}  // namespace ccbench
