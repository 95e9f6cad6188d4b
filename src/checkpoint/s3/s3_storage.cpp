// The S3 engine behind the storage interface (docs/checkpoint.md, "S3 engine"). A file written is
// one object uploaded with multipart upload: open creates the upload, write_at fills a part buffer
// and hands every full part to up to --concurrency uploads in flight, sync sends the last part,
// completes the upload and confirms the object with HeadObject (size, and the md5-of-md5s ETag
// computed here from what was sent). A file that is dropped before that aborts its upload, so
// nothing is left billing. A file read is ranged GETs, --concurrency at once per read call.
#include "checkpoint/s3/s3_storage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <deque>
#include <future>
#include <mutex>

#include "checkpoint/s3/client.hpp"
#include "checkpoint/s3/http.hpp"
#include "checkpoint/s3/protocol.hpp"
#include "checkpoint/storage.hpp"
#include "core/error.hpp"

namespace ccbench::checkpoint {
namespace s3 {

namespace {

const std::string kNone;

class WriteFile final : public StorageFile {
 public:
  WriteFile(Client& client, std::string key, const RemoteOptions& o)
      : client_(client), key_(std::move(key)), part_bytes_(o.part_bytes), concurrency_(std::max(1, o.concurrency)) {
    upload_id_ = client_.create_upload(key_);
    buffer_.reserve(static_cast<std::size_t>(part_bytes_));
  }
  ~WriteFile() override {
    if (!done_) abandon();
  }

  void write_at(const void* data, std::size_t bytes, std::uint64_t offset) override {
    if (offset != written_)
      throw StorageError(EINVAL, fmt::format("S3 {}: an object is written in order (offset {} after {} bytes)",
                                             client_.url_of(key_), offset, written_));
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const std::size_t n = std::min(bytes, static_cast<std::size_t>(part_bytes_) - buffer_.size());
      buffer_.insert(buffer_.end(), p, p + n);
      p += n;
      bytes -= n;
      written_ += n;
      if (buffer_.size() == part_bytes_) send_part_or_abandon();
    }
  }
  void read_at(void*, std::size_t, std::uint64_t offset) override {
    throw StorageError(EBADF, fmt::format("S3 {}: opened for writing (read at {})", client_.url_of(key_), offset));
  }
  // Durable: every part sent, the upload completed, the object confirmed by HeadObject.
  void sync() override {
    if (done_) return;
    try {
      if (!buffer_.empty() || parts_.empty()) send_part();
      for (auto& f : in_flight_) f.get();
      in_flight_.clear();
      std::vector<PartDone> parts;
      std::vector<Md5> md5s;
      for (const auto& p : parts_) {
        parts.push_back({p.number, p.etag});
        md5s.push_back(p.md5);
      }
      client_.complete(key_, upload_id_, parts, retries_);
      done_ = true;  // completed: nothing to abort any more
      const std::string expect = multipart_etag(md5s);
      const auto head = client_.head(key_);
      if (!head)
        throw StorageError(
            ENOENT, fmt::format("S3 HeadObject {}: not found after CompleteMultipartUpload", client_.url_of(key_)));
      if (head->bytes != written_ || head->etag != expect)
        throw StorageError(EIO, fmt::format("S3 HeadObject {}: {} bytes, ETag {}; sent {} bytes, ETag {}",
                                            client_.url_of(key_), head->bytes, head->etag, written_, expect));
    } catch (const StorageError& e) {
      if (done_) throw;
      throw StorageError(e.error(), std::string(e.what()) + abandon());
    }
  }
  void close() override { sync(); }
  bool direct() const override { return false; }
  const std::string& direct_refused() const override { return kNone; }
  std::uint64_t retries() const override { return retries_.load(); }

 private:
  struct Part {
    int number = 0;
    Md5 md5{};
    std::string etag;
  };

  // A part that failed is seen when the next one waits for it: the upload is abandoned then, and
  // the error says whether the abort went through.
  void send_part_or_abandon() {
    try {
      send_part();
    } catch (const StorageError& e) {
      if (done_) throw;
      throw StorageError(e.error(), std::string(e.what()) + abandon());
    }
  }

  void send_part() {
    // At most `concurrency` parts in flight: wait for the oldest before sending another.
    if (in_flight_.size() >= static_cast<std::size_t>(concurrency_)) {
      in_flight_.front().get();
      in_flight_.pop_front();
    }
    std::size_t index = 0;
    {
      std::lock_guard lock(mutex_);  // the part threads fill earlier entries meanwhile
      index = parts_.size();
      parts_.push_back({static_cast<int>(index) + 1, {}, {}});
    }
    auto data = std::make_shared<std::vector<char>>(std::move(buffer_));
    buffer_ = {};
    buffer_.reserve(static_cast<std::size_t>(part_bytes_));
    in_flight_.push_back(std::async(std::launch::async, [this, index, data] {
      const Md5 md5 = md5_of(data->data(), data->size());
      const std::string etag =
          client_.upload_part(key_, upload_id_, static_cast<int>(index) + 1, data->data(), data->size(), md5, retries_);
      std::lock_guard lock(mutex_);
      parts_[index].md5 = md5;
      parts_[index].etag = etag;
    }));
  }

  // Waits for what is in flight, aborts the upload; says whether the abort went through.
  std::string abandon() {
    done_ = true;
    for (auto& f : in_flight_) {
      try {
        f.get();
      } catch (const std::exception&) {
      }
    }
    in_flight_.clear();
    try {
      client_.abort(key_, upload_id_);
      return fmt::format("; upload {} aborted", upload_id_);
    } catch (const std::exception& e) {
      return fmt::format("; upload {} NOT aborted (abort it: aws s3api abort-multipart-upload): {}", upload_id_,
                         e.what());
    }
  }

  Client& client_;
  std::string key_, upload_id_;
  std::uint64_t part_bytes_;
  int concurrency_;
  std::vector<char> buffer_;
  std::deque<Part> parts_;  // references stay valid as parts are added
  std::deque<std::future<void>> in_flight_;
  std::mutex mutex_;
  std::uint64_t written_ = 0;
  bool done_ = false;
  std::atomic<std::uint64_t> retries_{0};
};

class ReadFile final : public StorageFile {
 public:
  ReadFile(Client& client, std::string key, const RemoteOptions& o)
      : client_(client), key_(std::move(key)), concurrency_(std::max(1, o.concurrency)) {
    const auto head = client_.head(key_);
    if (!head) throw StorageError(ENOENT, fmt::format("S3 HeadObject {}: no such object", client_.url_of(key_)));
    bytes_ = head->bytes;
  }
  void write_at(const void*, std::size_t, std::uint64_t offset) override {
    throw StorageError(EBADF, fmt::format("S3 {}: opened for reading (write at {})", client_.url_of(key_), offset));
  }
  // One read call: `concurrency` ranged GETs at once, each into its slice of the caller's buffer.
  void read_at(void* data, std::size_t bytes, std::uint64_t offset) override {
    if (offset + bytes > bytes_)
      throw StorageError(ENODATA, fmt::format("S3 {}: {} bytes at offset {}, the object has {}", client_.url_of(key_),
                                              bytes, offset, bytes_));
    constexpr std::size_t kMinRange = 1U << 20;
    const std::size_t ranges =
        std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(concurrency_), bytes / kMinRange));
    const std::size_t each = (bytes + ranges - 1) / ranges;
    std::vector<std::future<void>> gets;
    for (std::size_t at = 0; at < bytes; at += each) {
      const std::size_t n = std::min(each, bytes - at);
      char* into = static_cast<char*>(data) + at;
      gets.push_back(std::async(std::launch::async,
                                [this, into, n, o = offset + at] { client_.get_range(key_, o, into, n, retries_); }));
    }
    std::exception_ptr first;
    for (auto& g : gets) {
      try {
        g.get();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }
  void sync() override {}
  void close() override {}
  bool direct() const override { return false; }
  const std::string& direct_refused() const override { return kNone; }
  std::uint64_t retries() const override { return retries_.load(); }

 private:
  Client& client_;
  std::string key_;
  int concurrency_;
  std::uint64_t bytes_ = 0;
  std::atomic<std::uint64_t> retries_{0};
};

}  // namespace

S3Storage::S3Storage(std::unique_ptr<HttpClient> http, Endpoint endpoint, Location where, RemoteOptions options,
                     RetryPolicy retry)
    : http_(std::move(http)),
      where_(std::move(where)),
      options_(std::move(options)),
      client_(std::make_unique<Client>(*http_, std::move(endpoint), where_.bucket, std::move(retry))) {}

S3Storage::~S3Storage() = default;

std::string S3Storage::key_of(const std::string& path) const {
  const Location l = parse_location(path, "--target");
  return l.prefix;
}

std::unique_ptr<StorageFile> S3Storage::open(const std::string& path, OpenFor mode, const OpenOptions&) {
  if (mode == OpenFor::read) return std::make_unique<ReadFile>(*client_, key_of(path), options_);
  if (mode == OpenFor::write_existing)
    throw StorageError(EINVAL, fmt::format("S3 {}: an object cannot be written in pieces by several ranks", path));
  return std::make_unique<WriteFile>(*client_, key_of(path), options_);
}

void S3Storage::remove_tree(const std::string& path) {
  const std::string prefix = key_of(path) + "/";
  std::string token;
  do {
    const Listing l = client_->list(prefix, "", 1000, token);
    for (const auto& k : l.keys) client_->remove(k);
    token = l.next_token;
  } while (!token.empty());
}

void S3Storage::rename(const std::string& from, const std::string& to) {
  if (from != to)
    throw StorageError(ENOTSUP,
                       fmt::format("S3 has no rename ({} to {}): steps are committed by their manifest", from, to));
}

std::vector<std::string> S3Storage::entries(const std::string& dir) {
  const std::string key = key_of(dir);
  const std::string prefix = key.empty() ? "" : key + "/";
  std::vector<std::string> out;
  std::string token;
  do {
    const Listing l = client_->list(prefix, "/", 1000, token);
    for (const auto& p : l.prefixes) {
      std::string name = p.substr(prefix.size());
      if (!name.empty() && name.back() == '/') name.pop_back();
      out.push_back(name);
    }
    for (const auto& k : l.keys) out.push_back(k.substr(prefix.size()));
    token = l.next_token;
  } while (!token.empty());
  return out;
}

std::string S3Storage::unusable(const std::string&) {
  // One listing under the prefix: it needs the bucket, a valid signature and the right to list.
  try {
    client_->list(where_.prefix.empty() ? "" : where_.prefix + "/", "/", 1);
  } catch (const StorageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace s3

std::unique_ptr<Storage> make_s3_storage(const std::string& target, const RemoteOptions& remote) {
  const s3::Location where = s3::parse_location(target, "--target");
  s3::Connection c = s3::connect_from_environment(target, "--target", remote.endpoint);
  return std::make_unique<s3::S3Storage>(std::move(c.http), c.endpoint, where, remote);
}

}  // namespace ccbench::checkpoint
