// The POSIX engine: open(2)/pwrite/pread/fsync/close, O_DIRECT with a recorded fallback, rename and
// directory fsync, posix_fadvise(DONTNEED) checked with mincore; and open_storage, which picks a
// target's engine.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "checkpoint/s3/protocol.hpp"
#include "checkpoint/step_dirs.hpp"
#include "checkpoint/storage.hpp"
#include "checkpoint/target_facts.hpp"
#include "core/error.hpp"

namespace ccbench::checkpoint {
namespace {

namespace fs = std::filesystem;

class PosixFile final : public StorageFile {
 public:
  PosixFile(int fd, std::string path, bool direct, std::string refused)
      : fd_(fd), path_(std::move(path)), direct_(direct), refused_(std::move(refused)) {}
  ~PosixFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  void write_at(const void* data, std::size_t bytes, std::uint64_t offset) override {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::pwrite(fd_, p, bytes, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw StorageError(n < 0 ? errno : ENOSPC, "write", path_, offset);
      p += n;
      bytes -= static_cast<std::size_t>(n);
      offset += static_cast<std::uint64_t>(n);
    }
  }
  void read_at(void* data, std::size_t bytes, std::uint64_t offset) override {
    char* p = static_cast<char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::pread(fd_, p, bytes, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw StorageError(errno, "read", path_, offset);
      if (n == 0) throw StorageError(ENODATA, "read (file ends early)", path_, offset);
      p += n;
      bytes -= static_cast<std::size_t>(n);
      offset += static_cast<std::uint64_t>(n);
    }
  }
  void sync() override {
    if (::fsync(fd_) != 0) throw StorageError(errno, "fsync", path_, 0);
  }
  void close() override {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw StorageError(errno, "close", path_, 0);
  }
  bool direct() const override { return direct_; }
  const std::string& direct_refused() const override { return refused_; }

 private:
  int fd_;
  std::string path_;
  bool direct_;
  std::string refused_;
};

class PosixStorage final : public Storage {
 public:
  Engine engine() const override { return Engine::posix; }
  std::string refuses(const EngineRequest&) const override { return ""; }  // every flag is POSIX's
  std::string io_summary(const IoSettings& io) const override {
    return fmt::format("{}{}", io.direct ? "O_DIRECT" : "buffered",
                       io.fsync ? " + fsync" : ", NO fsync (--no-fsync: not durable)");
  }
  std::string target_type(const std::string& target) const override { return filesystem_type(target); }
  bool one_namespace() const override { return false; }
  std::optional<std::uint64_t> free_bytes(const std::string& target) override {
    return check_target(target).free_bytes;
  }
  bool local_cache() const override { return true; }
  std::optional<std::string> read_manifest(const std::string& step_dir) override {
    return read_posix_manifest(step_dir);
  }
  std::string remove_step(const CommittedStep& step) override { return checkpoint::remove_step(step); }

  std::unique_ptr<StorageFile> open(const std::string& path, OpenFor mode, const OpenOptions& options) override {
    int flags = O_CLOEXEC;
    if (mode == OpenFor::create_write) flags |= O_WRONLY | O_CREAT | O_EXCL;
    if (mode == OpenFor::write_existing) flags |= O_WRONLY | O_CREAT;
    if (mode == OpenFor::read) flags |= O_RDONLY;
    std::string refused;
    if (options.direct) {
      const int fd = ::open(path.c_str(), flags | O_DIRECT, 0644);
      if (fd >= 0) return std::make_unique<PosixFile>(fd, path, true, "");
      // tmpfs and some FUSE mounts refuse O_DIRECT with EINVAL: fall back and record it.
      if (errno != EINVAL) throw StorageError(errno, "open", path, 0);
      refused = "the filesystem refused O_DIRECT (EINVAL): buffered I/O instead";
    }
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) throw StorageError(errno, "open", path, 0);
    return std::make_unique<PosixFile>(fd, path, false, refused);
  }

  void make_dir(const std::string& path) override {
    if (::mkdir(path.c_str(), 0755) != 0) throw StorageError(errno, "mkdir", path, 0);
  }

  void remove_tree(const std::string& path) override {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) throw StorageError(ec.value(), "remove", path, 0);
  }

  void rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) throw StorageError(errno, "rename", from, 0);
  }

  void sync_dir(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw StorageError(errno, "open directory", path, 0);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) throw StorageError(err, "fsync directory", path, 0);
  }

  std::string unusable(const std::string& target) override { return check_target(target).error; }

  std::vector<std::string> entries(const std::string& dir) override {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
    return out;
  }

  Eviction evict(const std::string& path) override {
    Eviction e;
    e.method = "fadvise";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      e.why_not = fmt::format("open: {}", std::strerror(errno));
      return e;
    }
    struct stat st {};
    ::fstat(fd, &st);
    ::fdatasync(fd);  // dirty pages are not dropped: make them clean first
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    const std::size_t bytes = static_cast<std::size_t>(st.st_size);
    if (bytes == 0) {
      ::close(fd);
      e.evicted = true;
      return e;
    }
    void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) {
      e.why_not = fmt::format("mmap for mincore: {}", std::strerror(errno));
      return e;
    }
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> resident((bytes + page - 1) / page);
    std::size_t still = 0;
    if (::mincore(map, bytes, resident.data()) == 0) {
      for (unsigned char r : resident) still += (r & 1U);
      e.evicted = still == 0;
      if (still > 0)
        e.why_not = fmt::format("{} of {} pages still resident after POSIX_FADV_DONTNEED", still, resident.size());
    } else {
      e.why_not = fmt::format("mincore: {}", std::strerror(errno));
    }
    ::munmap(map, bytes);
    return e;
  }
};

}  // namespace

StorageError::StorageError(int error, std::string call, std::string path, std::uint64_t offset)
    : std::runtime_error(fmt::format("{} {}{}: {} ({})", call, path,
                                     offset > 0 ? fmt::format(" at offset {}", offset) : "", std::strerror(error),
                                     strerrorname_np(error) ? strerrorname_np(error) : "?")),
      error_(error),
      path_(std::move(path)),
      offset_(offset) {}

StorageError::StorageError(int error, const std::string& message)
    : std::runtime_error(message), error_(error), offset_(0) {}

std::string StorageError::errno_name() const {
  const char* n = strerrorname_np(error_);
  return n != nullptr ? n : std::to_string(error_);
}

std::string Storage::claim_step(const std::string&, int next_step) { return step_name(next_step); }

int Storage::committed_step_of(const std::string& entry) const {
  return entry.rfind("step-", 0) == 0 ? step_of(entry) : -1;
}

std::unique_ptr<Storage> make_posix_storage() { return std::make_unique<PosixStorage>(); }

std::unique_ptr<Storage> open_storage(const std::string& target, const RemoteOptions& remote) {
  if (s3::is_s3_url(target)) return make_s3_storage(target, remote);
  if (const auto scheme = target.find("://"); scheme != std::string::npos) {
    throw UsageError(fmt::format("--target {}: no storage engine for '{}' (s3:// or a POSIX path)",
                                 s3::redact_userinfo(target), target.substr(0, scheme + 3)));
  }
  return make_posix_storage();
}

}  // namespace ccbench::checkpoint
