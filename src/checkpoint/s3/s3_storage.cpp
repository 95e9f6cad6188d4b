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
#include <random>
#include <set>

#include "checkpoint/s3/client.hpp"
#include "checkpoint/s3/http.hpp"
#include "checkpoint/s3/protocol.hpp"
#include "checkpoint/step_dirs.hpp"
#include "checkpoint/storage.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"

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
    : http_(std::move(http)), where_(std::move(where)), options_(std::move(options)), token_(random_token()) {
  if (retry.call_deadline_s <= 0) retry.call_deadline_s = options_.request_deadline_s;
  client_ = std::make_unique<Client>(*http_, std::move(endpoint), where_.bucket, std::move(retry));
}

S3Storage::~S3Storage() = default;

std::string S3Storage::random_token() {
  std::random_device random;
  return fmt::format("{:08x}{:08x}", random(), random());
}

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

void S3Storage::list_all(const std::string& prefix, const std::string& delimiter,
                         const std::function<void(const Listing&)>& each) {
  // A server that answers IsTruncated forever with the same token would keep this loop (and the
  // run) going: a token seen before ends it with an error, as does a truncated page without one.
  std::set<std::string> seen;
  std::string token;
  do {
    const Listing l = client_->list(prefix, delimiter, 1000, token);
    each(l);
    if (l.truncated && l.next_token.empty())
      throw StorageError(EIO, fmt::format("S3 ListObjectsV2 {}: IsTruncated without a NextContinuationToken",
                                          client_->url_of(prefix)));
    if (l.truncated && !seen.insert(l.next_token).second)
      throw StorageError(EIO, fmt::format("S3 ListObjectsV2 {}: the server sent the continuation token '{}' again "
                                          "(a listing that would never end)",
                                          client_->url_of(prefix), l.next_token.substr(0, 64)));
    token = l.next_token;
  } while (!token.empty());
}

void S3Storage::remove_tree(const std::string& path) {
  const std::string key = key_of(path);
  // Only a step this run claimed: anything else under the prefix may be another run's objects.
  if (claimed_.count(key) == 0)
    throw StorageError(EPERM, fmt::format("S3 {}: not removed: this run did not create that step (its objects may be "
                                          "another run's)",
                                          path));
  list_all(key + "/", "", [&](const Listing& l) {
    for (const auto& k : l.keys) client_->remove(k);
  });
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
  list_all(prefix, "/", [&](const Listing& l) {
    for (const auto& p : l.prefixes) {
      std::string name = p.substr(std::min(prefix.size(), p.size()));
      if (!name.empty() && name.back() == '/') name.pop_back();
      out.push_back(name);
    }
    for (const auto& k : l.keys) out.push_back(k.substr(std::min(prefix.size(), k.size())));
  });
  return out;
}

bool S3Storage::conditional_create_checked() {
  if (conditional_create_) return *conditional_create_;
  // Some servers (Swift 2.30's s3api among them) may store an If-None-Match PUT without checking
  // the condition: a probe object created twice tells. Only a second create that is refused counts.
  const std::string base = where_.prefix.empty() ? "" : where_.prefix + "/";
  const std::string probe = base + ".ccbench-claim-probe-" + token_;
  const CreateResult first = client_->create_if_absent(probe, token_.data(), token_.size());
  const CreateResult second = first == CreateResult::created
                                  ? client_->create_if_absent(probe, token_.data(), token_.size())
                                  : CreateResult::unsupported;
  if (first == CreateResult::created) client_->remove(probe);
  conditional_create_ = first == CreateResult::created && second == CreateResult::exists;
  return *conditional_create_;
}

std::string S3Storage::claim_step(const std::string& target, int next_step) {
  const std::string key = key_of(target);
  const std::string base = key.empty() ? "" : key + "/";
  // The numbering counts this engine's run-unique steps (step-NNNNNN-<token>) too. Six digits, as
  // step_dirs reads them: a user's step-999999999 is not a step, so it never makes the next one
  // a name that the numbering would then ignore.
  int last = next_step - 1;
  for (const auto& name : entries(target)) {
    const bool numbered = name.size() == 11 || (name.size() > 11 && name[11] == '-');
    if (numbered) last = std::max(last, step_of(name.substr(0, 11)));
  }
  if (!conditional_create_checked()) {
    // No conditional create: a name no other run can pick (the token is this run's).
    const std::string name = fmt::format("{}-{}", step_name(last + 1), token_);
    claimed_.insert(base + name);
    return name;
  }
  const std::string claim = token_ + "\n";
  constexpr int kTries = 1000;
  for (int step = last + 1; step <= last + kTries; ++step) {
    const std::string name = step_name(step);
    const CreateResult r = client_->create_if_absent(base + name + "/" + kClaimName, claim.data(), claim.size());
    if (r == CreateResult::exists) continue;  // another run's step: the next number
    if (r == CreateResult::unsupported)
      throw StorageError(EIO, fmt::format("S3 PutObject (If-None-Match: *) {}: the server stopped checking the "
                                          "condition it checked at the probe",
                                          client_->url_of(base + name + "/" + kClaimName)));
    claimed_.insert(base + name);
    return name;
  }
  throw StorageError(
      EEXIST, fmt::format("S3 {}: steps {} to {} are all claimed by other runs", target, last + 1, last + kTries));
}

std::string S3Storage::refuses(const EngineRequest& asked) const {
  if (asked.shared_file) return "--layout shared-file: not for the s3 engine (an object has one writer)";
  if (asked.direct) return "--direct: not for the s3 engine (no page cache to bypass)";
  if (!asked.fsync) return "--no-fsync: not for the s3 engine (an upload is durable when it completes)";
  if (asked.export_to) return "--export-to: for a POSIX --target, not the s3 engine's (it is already in S3)";
  if (asked.shard_bytes > 0 && (asked.shard_bytes + options_.part_bytes - 1) / options_.part_bytes > 10000)
    return fmt::format("--part-size: {} makes more than S3's 10,000 parts of a {}-byte shard (the s3 engine)",
                       format_bytes(options_.part_bytes), asked.shard_bytes);
  return "";
}

std::string S3Storage::io_summary(const IoSettings&) const {
  return fmt::format("multipart parts of {}, {} in flight a rank", format_bytes(options_.part_bytes),
                     options_.concurrency);
}

nlohmann::json S3Storage::settings() const {
  return {{"part_bytes", options_.part_bytes},
          {"concurrency", options_.concurrency},
          {"endpoint", options_.endpoint.empty() ? nlohmann::json(nullptr) : nlohmann::json(options_.endpoint)}};
}

int S3Storage::committed_step_of(const std::string& entry) const {
  constexpr std::size_t kName = 11;   // step-NNNNNN
  constexpr std::size_t kToken = 16;  // random_token's hex digits
  if (entry.size() == kName) return Storage::committed_step_of(entry);
  if (entry.size() != kName + 1 + kToken || entry[kName] != '-') return -1;
  if (!std::all_of(entry.begin() + kName + 1, entry.end(),
                   [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }))
    return -1;
  return Storage::committed_step_of(entry.substr(0, kName));
}

std::optional<std::string> S3Storage::read_manifest(const std::string& step_dir) {
  constexpr std::uint64_t kMaxManifestBytes = 64ULL << 20;  // as step_dirs reads a POSIX one
  const std::string key = key_of(step_dir) + "/" + kManifestName;
  const auto head = client_->head(key);
  if (!head) return std::nullopt;
  if (head->bytes > kMaxManifestBytes)
    throw ParseError(fmt::format("{}: {} bytes, too large for a manifest", client_->url_of(key), head->bytes));
  std::string text(static_cast<std::size_t>(head->bytes), '\0');
  std::atomic<std::uint64_t> retries{0};
  if (!text.empty()) client_->get_range(key, 0, text.data(), text.size(), retries);
  return text;
}

bool S3Storage::removable(const std::string& step_dir) const { return claimed_.count(key_of(step_dir)) > 0; }

std::string S3Storage::remove_step(const CommittedStep& step) {
  if (!removable(step.path))
    return fmt::format("kept {}: this run did not create that step (its objects may be another run's)", step.path);
  const std::string base = key_of(step.path) + "/";
  try {
    client_->remove(base + kManifestName);  // first: what is left no longer looks committed
    for (const auto& name : step.manifest.files) client_->remove(base + name);
    client_->remove(base + kClaimName);
    bool left = false;
    list_all(base, "", [&](const Listing& l) { left = left || !l.keys.empty(); });
    if (left) return fmt::format("kept {}: it holds objects its manifest does not list", step.path);
  } catch (const StorageError& e) {
    return fmt::format("kept {}: {}", step.path, e.what());
  }
  return "";
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
