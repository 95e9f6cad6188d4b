#include "checkpoint/memory_storage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "checkpoint/step_dirs.hpp"

namespace ccbench::checkpoint {

struct MemoryStorage::Blob {
  std::mutex mutex;
  std::vector<char> bytes;
};

namespace {

const std::string kNone;

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// Whether `path` is `dir` itself or below it.
bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

class MemoryFile final : public StorageFile {
 public:
  MemoryFile(std::shared_ptr<MemoryStorage::Blob> blob, std::string path, bool readable, std::function<void()> synced)
      : blob_(std::move(blob)), path_(std::move(path)), readable_(readable), synced_(std::move(synced)) {}
  void write_at(const void* data, std::size_t bytes, std::uint64_t offset) override {
    if (readable_) throw StorageError(EBADF, "write", path_, offset);
    std::lock_guard lock(blob_->mutex);
    if (blob_->bytes.size() < offset + bytes) blob_->bytes.resize(static_cast<std::size_t>(offset + bytes));
    std::memcpy(blob_->bytes.data() + offset, data, bytes);
  }
  void read_at(void* data, std::size_t bytes, std::uint64_t offset) override {
    if (!readable_) throw StorageError(EBADF, "read", path_, offset);
    std::lock_guard lock(blob_->mutex);
    if (offset + bytes > blob_->bytes.size()) throw StorageError(ENODATA, "read (file ends early)", path_, offset);
    std::memcpy(data, blob_->bytes.data() + offset, bytes);
  }
  void sync() override { synced_(); }
  void close() override {}
  bool direct() const override { return false; }
  const std::string& direct_refused() const override { return kNone; }

 private:
  std::shared_ptr<MemoryStorage::Blob> blob_;
  std::string path_;
  bool readable_;
  std::function<void()> synced_;
};

}  // namespace

MemoryStorage::MemoryStorage(std::vector<std::string> roots) : dirs_(roots.begin(), roots.end()) {}

std::string MemoryStorage::refuses(const EngineRequest& asked) const {
  if (asked.direct) return "--direct: not for the memory engine (no page cache to bypass)";
  if (asked.export_to) return "--export-to: for a POSIX --target, not the memory engine's";
  return "";
}

std::string MemoryStorage::io_summary(const IoSettings& io) const {
  return io.fsync ? "in memory + sync" : "in memory, NO sync";
}

bool MemoryStorage::is_dir(const std::string& path) const { return dirs_.count(path) > 0; }

void MemoryStorage::check_parent(const std::string& path, const char* call) const {
  if (!is_dir(parent_of(path))) throw StorageError(ENOENT, call, path, 0);
}

std::unique_ptr<StorageFile> MemoryStorage::open(const std::string& path, OpenFor mode, const OpenOptions&) {
  std::lock_guard lock(mutex_);
  auto it = files_.find(path);
  if (mode == OpenFor::read) {
    if (it == files_.end()) throw StorageError(ENOENT, "open", path, 0);
  } else {
    if (mode == OpenFor::create_write && (it != files_.end() || is_dir(path)))
      throw StorageError(EEXIST, "open", path, 0);
    if (it == files_.end()) {
      check_parent(path, "open");
      it = files_.emplace(path, std::make_shared<Blob>()).first;
    }
  }
  return std::make_unique<MemoryFile>(it->second, path, mode == OpenFor::read, [this, path] {
    std::lock_guard sync_lock(mutex_);
    ++syncs_[path];
  });
}

void MemoryStorage::make_dir(const std::string& path) {
  std::lock_guard lock(mutex_);
  if (is_dir(path) || files_.count(path) > 0) throw StorageError(EEXIST, "mkdir", path, 0);
  check_parent(path, "mkdir");
  dirs_.insert(path);
}

void MemoryStorage::remove_tree(const std::string& path) {
  std::lock_guard lock(mutex_);
  files_.erase(path);
  dirs_.erase(path);
  std::erase_if(files_, [&](const auto& f) { return under(f.first, path); });
  std::erase_if(dirs_, [&](const std::string& d) { return under(d, path); });
}

void MemoryStorage::rename(const std::string& from, const std::string& to) {
  std::lock_guard lock(mutex_);
  if (!is_dir(from)) throw StorageError(ENOENT, "rename", from, 0);
  if (is_dir(to) || files_.count(to) > 0) throw StorageError(EEXIST, "rename", from, 0);
  check_parent(to, "rename");
  const auto moved = [&](const std::string& p) { return to + p.substr(from.size()); };
  std::map<std::string, std::shared_ptr<Blob>> files;
  for (auto& [p, blob] : files_) files.emplace(under(p, from) ? moved(p) : p, std::move(blob));
  files_ = std::move(files);
  std::set<std::string> dirs;
  for (const auto& d : dirs_) dirs.insert(d == from || under(d, from) ? moved(d) : d);
  dirs_ = std::move(dirs);
}

void MemoryStorage::sync_dir(const std::string& path) {
  std::lock_guard lock(mutex_);
  if (!is_dir(path)) throw StorageError(ENOENT, "fsync directory", path, 0);
  ++syncs_[path];
}

std::string MemoryStorage::unusable(const std::string& target) {
  std::lock_guard lock(mutex_);
  return is_dir(target) ? "" : "does not exist";
}

std::vector<std::string> MemoryStorage::entries(const std::string& dir) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  const auto child = [&](const std::string& p) {
    if (parent_of(p) == dir && p != dir) out.push_back(p.substr(dir.size() + 1));
  };
  for (const auto& [p, blob] : files_) child(p);
  for (const auto& d : dirs_) child(d);
  return out;
}

std::optional<std::string> MemoryStorage::read_manifest(const std::string& step_dir) {
  std::lock_guard lock(mutex_);
  const auto it = files_.find(step_dir + "/" + kManifestName);
  if (!is_dir(step_dir) || it == files_.end()) return std::nullopt;
  std::lock_guard blob_lock(it->second->mutex);
  return std::string(it->second->bytes.begin(), it->second->bytes.end());
}

std::string MemoryStorage::remove_step(const CommittedStep& step) {
  std::lock_guard lock(mutex_);
  files_.erase(step.path + "/" + kManifestName);  // first: what is left no longer looks committed
  for (const auto& name : step.manifest.files) files_.erase(step.path + "/" + name);
  const bool left =
      std::any_of(files_.begin(), files_.end(), [&](const auto& f) { return under(f.first, step.path); }) ||
      std::any_of(dirs_.begin(), dirs_.end(), [&](const std::string& d) { return under(d, step.path); });
  if (left) return fmt::format("kept {}: it holds files its manifest does not list", step.path);
  dirs_.erase(step.path);
  return "";
}

std::vector<std::string> MemoryStorage::paths() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [p, blob] : files_) out.push_back(p);
  for (const auto& d : dirs_) out.push_back(d + "/");
  std::sort(out.begin(), out.end());
  return out;
}

int MemoryStorage::syncs(const std::string& path) const {
  std::lock_guard lock(mutex_);
  const auto it = syncs_.find(path);
  return it == syncs_.end() ? 0 : it->second;
}

}  // namespace ccbench::checkpoint
