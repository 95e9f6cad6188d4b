#include "core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace ccbench {
namespace {

std::string errno_reason(int err) {
  switch (err) {
    case ENOENT:
      return "no such file";
    case ENOTDIR:
      return "no such file (a part of the path is not a folder)";
    case ELOOP:
      return "symlink loop (too many levels of symbolic links)";
    case ENAMETOOLONG:
      return "path too long";
    case EACCES:
      return "permission denied";
    default:
      return std::strerror(err);
  }
}

std::string mode_reason(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "is a folder, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe), not a regular file";
  if (S_ISCHR(mode)) return "is a character device, not a regular file";
  if (S_ISBLK(mode)) return "is a block device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

// Opens without blocking (a FIFO with no writer would block a plain open) and checks the descriptor.
int open_regular(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw ParseError(path.string() + ": " + errno_reason(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw ParseError(path.string() + ": " + errno_reason(err));
  }
  if (const std::string why = mode_reason(st.st_mode); !why.empty()) {
    ::close(fd);
    throw ParseError(path.string() + ": " + why);
  }
  return fd;
}

}  // namespace

std::string not_regular_file_reason(const std::filesystem::path& path) {
  if (path.empty()) return "empty path";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_reason(errno);
  return mode_reason(st.st_mode);
}

void require_regular_file(const std::filesystem::path& path) {
  if (const std::string why = not_regular_file_reason(path); !why.empty()) {
    throw ParseError(path.string() + ": " + why);
  }
}

std::string read_input_file(const std::filesystem::path& path) {
  const int fd = open_regular(path);
  std::string text;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) text.reserve(static_cast<std::size_t>(st.st_size));
  char block[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, block, sizeof block);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw ParseError(path.string() + ": cannot read (" + errno_reason(err) + ")");
    }
    if (n == 0) break;
    text.append(block, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

LineReader::LineReader(const std::filesystem::path& path) : path_(path), fd_(open_regular(path)) {}

LineReader::~LineReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    buffer_.erase(0, begin_);
    begin_ = 0;
  }
  const std::size_t old = buffer_.size();
  constexpr std::size_t kBlock = 1 << 16;
  buffer_.resize(old + kBlock);
  while (true) {
    const ssize_t n = ::read(fd_, buffer_.data() + old, kBlock);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      buffer_.resize(old);
      throw ParseError(path_.string() + ": cannot read (" + errno_reason(err) + ")");
    }
    buffer_.resize(old + static_cast<std::size_t>(n));
    if (n == 0) eof_ = true;
    return n > 0;
  }
}

bool LineReader::next(std::string_view& line) {
  std::size_t scanned = begin_;
  while (true) {
    const std::size_t nl = buffer_.find('\n', scanned);
    if (nl != std::string::npos) {
      std::size_t end = nl;
      if (end > begin_ && buffer_[end - 1] == '\r') --end;
      line = std::string_view(buffer_).substr(begin_, end - begin_);
      begin_ = nl + 1;
      ++line_number_;
      return true;
    }
    scanned = buffer_.size() - begin_;  // offset relative to begin_, rebased after fill()
    if (!fill()) {
      if (begin_ >= buffer_.size()) return false;
      std::size_t end = buffer_.size();
      if (end > begin_ && buffer_[end - 1] == '\r') --end;
      line = std::string_view(buffer_).substr(begin_, end - begin_);
      begin_ = buffer_.size();
      ++line_number_;
      return true;
    }
    // fill() moved the unread data to the front: begin_ is 0 and `scanned` bytes were searched.
  }
}

}  // namespace ccbench
