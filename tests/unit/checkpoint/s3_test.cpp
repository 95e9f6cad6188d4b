// The S3 engine without a server: canonical query strings and URLs against hand-written values,
// the multipart ETag against hashlib's (constants computed with Python's hashlib, independent of
// OpenSSL here), and the upload's retry and abort logic over a scripted fake of our HttpClient.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "checkpoint/s3/client.hpp"
#include "checkpoint/s3/export_watch.hpp"
#include "checkpoint/s3/protocol.hpp"
#include "checkpoint/s3/s3_storage.hpp"
#include "checkpoint/step_store.hpp"
#include "core/error.hpp"

namespace ccbench::checkpoint::s3 {
namespace {

TEST(S3Protocol, CanonicalQueryIsSortedEncodedAndKeepsEmptyValues) {
  EXPECT_EQ(canonical_query({{"uploads", ""}}), "uploads=");
  EXPECT_EQ(canonical_query({{"uploadId", "a/b+c="}, {"partNumber", "3"}}), "partNumber=3&uploadId=a%2Fb%2Bc%3D");
  EXPECT_EQ(canonical_query({{"prefix", "run 1/\xc3\xa9~"}, {"list-type", "2"}, {"max-keys", "1"}, {"delimiter", "/"}}),
            "delimiter=%2F&list-type=2&max-keys=1&prefix=run%201%2F%C3%A9~");
  EXPECT_EQ(canonical_query({}), "");
}

TEST(S3Protocol, UriEncodingUppercaseHexAndSlashInKeys) {
  EXPECT_EQ(uri_encode("a b/c~d_e.f-g*", true), "a%20b/c~d_e.f-g%2A");
  EXPECT_EQ(uri_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(uri_encode("\xff", false), "%FF");
}

TEST(S3Protocol, UrlsPathStyleForACustomEndpointVirtualHostedForAws) {
  const Endpoint custom = resolve_endpoint("", "http://127.0.0.1:8480/", "us-east-1");
  EXPECT_EQ(custom.base, "http://127.0.0.1:8480");
  EXPECT_FALSE(custom.virtual_hosted);
  EXPECT_EQ(object_url(custom, "ckpt", "a/step-000001/rank-00000.shard", "partNumber=1&uploadId=x"),
            "http://127.0.0.1:8480/ckpt/a/step-000001/rank-00000.shard?partNumber=1&uploadId=x");
  EXPECT_EQ(object_url(custom, "ckpt", "", "list-type=2"), "http://127.0.0.1:8480/ckpt/?list-type=2");
  const Endpoint aws = resolve_endpoint("", "", "eu-west-1");
  EXPECT_TRUE(aws.virtual_hosted);
  EXPECT_EQ(object_url(aws, "b", "k", ""), "https://b.s3.eu-west-1.amazonaws.com/k");
  EXPECT_EQ(resolve_endpoint("http://flag:1", "http://env:2", "r").base, "http://flag:1");  // the flag wins
}

TEST(S3Protocol, LocationsAndBadBucketNames) {
  const Location l = parse_location("s3://ckpt/a/b/", "--target");
  EXPECT_EQ(l.bucket, "ckpt");
  EXPECT_EQ(l.prefix, "a/b");
  EXPECT_EQ(parse_location("s3://ckpt", "--target").prefix, "");
  EXPECT_THROW(parse_location("s3://Bad_Bucket/x", "--target"), UsageError);
  EXPECT_THROW(parse_location("/mnt/x", "--export-to"), UsageError);
}

std::vector<char> pattern_part() {
  std::vector<char> p(5U << 20);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<char>(i % 251);
  return p;
}

TEST(S3Protocol, MultipartEtagMatchesHashlib) {
  const auto p1 = pattern_part();
  const std::string p2(1000, 'x');
  const Md5 a = md5_of(p1.data(), p1.size()), b = md5_of(p2.data(), p2.size());
  EXPECT_EQ(hex(a.data(), a.size()), "4c28640dc8df1933aaea192100d50ae0");
  EXPECT_EQ(hex(b.data(), b.size()), "398533d48111e9f664b1f64cb10c4b63");
  EXPECT_EQ(base64(b.data(), b.size()), "OYUz1IER6fZksfZMsQxLYw==");
  // hashlib.md5(md5(p1).digest() + md5(p2).digest()).hexdigest() + "-2"
  EXPECT_EQ(multipart_etag({a, b}), "21fa4da291fbe9e5dd889cb6920c40ec-2");
  EXPECT_EQ(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(S3Protocol, ResponseXml) {
  EXPECT_EQ(parse_upload_id("<InitiateMultipartUploadResult><Bucket>b</Bucket><UploadId>abc-1</UploadId>"
                            "</InitiateMultipartUploadResult>"),
            std::optional<std::string>("abc-1"));
  EXPECT_FALSE(parse_upload_id("<x/>"));
  const ErrorXml e = parse_error("<?xml version='1.0'?><Error><Code>NoSuchBucket</Code><Message>m</Message></Error>");
  EXPECT_EQ(e.code, "NoSuchBucket");
  const Listing l = parse_listing(
      "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t2</NextContinuationToken>"
      "<Contents><Key>p/a</Key></Contents><CommonPrefixes><Prefix>p/step-000001/</Prefix></CommonPrefixes>"
      "</ListBucketResult>");
  EXPECT_EQ(l.keys, std::vector<std::string>{"p/a"});
  EXPECT_EQ(l.prefixes, std::vector<std::string>{"p/step-000001/"});
  EXPECT_EQ(l.next_token, "t2");
  EXPECT_EQ(complete_xml({{1, "\"e1\""}, {2, "\"e2\""}}),
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag></Part><Part><PartNumber>2"
            "</PartNumber><ETag>\"e2\"</ETag></Part></CompleteMultipartUpload>");
}

// A scripted S3: uploads answer with the md5 of the body as ETag; `fail_part` makes the first
// `fail_times` tries of that part answer `fail_status`; HEAD answers `head_etag` (the real one
// when empty). Every request is recorded.
class FakeS3 final : public HttpClient {
 public:
  int fail_part = 0, fail_times = 0;
  long fail_status = 503;
  std::string head_etag;
  std::vector<std::string> seen;  // "METHOD url"
  std::map<int, Md5> parts;

  HttpResponse send(const HttpRequest& q) override {
    std::lock_guard lock(mutex_);
    seen.push_back(q.method + " " + q.url);
    HttpResponse r;
    r.status = 200;
    const auto has = [&](const char* s) { return q.url.find(s) != std::string::npos; };
    if (q.method == "POST" && has("?uploads=")) {
      r.body = "<InitiateMultipartUploadResult><UploadId>U1</UploadId></InitiateMultipartUploadResult>";
    } else if (q.method == "PUT" && has("partNumber=")) {
      const int n = std::stoi(q.url.substr(q.url.find("partNumber=") + 11));
      if (n == fail_part && failed_ < fail_times) {
        ++failed_;
        r.status = fail_status;
        r.body = fail_status == 403 ? "<Error><Code>SignatureDoesNotMatch</Code></Error>"
                                    : "<Error><Code>SlowDown</Code></Error>";
        return r;
      }
      const Md5 m = md5_of(q.body, q.body_bytes);
      parts[n] = m;
      bytes_ += q.body_bytes;
      r.headers = {{"etag", "\"" + hex(m.data(), m.size()) + "\""}};
    } else if (q.method == "HEAD") {
      std::vector<Md5> all;
      for (const auto& [n, m] : parts) all.push_back(m);
      r.headers = {{"content-length", std::to_string(bytes_)},
                   {"etag", "\"" + (head_etag.empty() ? multipart_etag(all) : head_etag) + "\""}};
    } else if (q.method == "DELETE") {
      r.status = 204;
    }
    return r;
  }
  int count(const std::string& prefix) const {
    int n = 0;
    for (const auto& s : seen) n += s.rfind(prefix, 0) == 0;
    return n;
  }

 private:
  std::mutex mutex_;
  int failed_ = 0;
  std::uint64_t bytes_ = 0;
};

struct Engine {
  FakeS3* fake;
  std::vector<double> sleeps;
  std::unique_ptr<S3Storage> storage;
  explicit Engine(int concurrency = 2) {
    auto f = std::make_unique<FakeS3>();
    fake = f.get();
    RetryPolicy retry;
    retry.sleep = [this](double s) { sleeps.push_back(s); };
    storage = std::make_unique<S3Storage>(std::move(f), Endpoint{"http://s3.test", false}, Location{"ckpt", "run"},
                                          RemoteOptions{5U << 20, concurrency, ""}, retry);
  }
  // 12 MiB in 4 MiB writes: parts of 5, 5 and 2 MiB.
  std::unique_ptr<StorageFile> write_12m() {
    auto f = storage->open("s3://ckpt/run/step-000001/rank-00000.shard", OpenFor::create_write, {});
    std::vector<char> chunk(4U << 20, 'z');
    for (std::uint64_t off = 0; off < (12U << 20); off += chunk.size()) f->write_at(chunk.data(), chunk.size(), off);
    return f;
  }
};

TEST(S3Engine, UploadsPartsCompletesAndConfirmsWithHead) {
  Engine e;
  auto f = e.write_12m();
  f->sync();
  EXPECT_EQ(e.fake->count("PUT http://s3.test/ckpt/run/step-000001/rank-00000.shard?partNumber="), 3);
  EXPECT_EQ(e.fake->count("POST http://s3.test/ckpt/run/step-000001/rank-00000.shard?uploadId=U1"), 1);
  EXPECT_EQ(e.fake->count("HEAD "), 1);
  EXPECT_EQ(e.fake->count("DELETE "), 0);
  EXPECT_EQ(f->retries(), 0U);
}

TEST(S3Engine, TransientFailuresAreRetriedWithBackoffAndCounted) {
  Engine e;
  e.fake->fail_part = 2;
  e.fake->fail_times = 3;
  auto f = e.write_12m();
  f->sync();
  EXPECT_EQ(f->retries(), 3U);
  EXPECT_EQ(e.sleeps, (std::vector<double>{0.1, 0.2, 0.4}));
  EXPECT_EQ(e.fake->count("DELETE "), 0);
}

TEST(S3Engine, AFailedPartAbortsTheUploadAndSaysSo) {
  Engine e;
  e.fake->fail_part = 1;
  e.fake->fail_times = 100;
  auto f = e.write_12m();
  try {
    f->sync();
    FAIL() << "sync succeeded";
  } catch (const StorageError& err) {
    const std::string m = err.what();
    EXPECT_NE(m.find("S3 UploadPart 1 s3://ckpt/run/step-000001/rank-00000.shard: HTTP 503 SlowDown"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("(after 5 tries); upload U1 aborted"), std::string::npos) << m;
  }
  EXPECT_EQ(e.fake->count("PUT http://s3.test/ckpt/run/step-000001/rank-00000.shard?partNumber=1&"), 5);
  EXPECT_EQ(e.fake->count("DELETE http://s3.test/ckpt/run/step-000001/rank-00000.shard?uploadId=U1"), 1);
  EXPECT_EQ(e.fake->count("POST http://s3.test/ckpt/run/step-000001/rank-00000.shard?uploadId="), 0);
}

TEST(S3Engine, ARefusedSignatureIsNotRetriedAndNamesTheSecretKeyVariable) {
  Engine e;
  e.fake->fail_part = 1;
  e.fake->fail_times = 100;
  e.fake->fail_status = 403;
  auto f = e.write_12m();
  try {
    f->sync();
    FAIL() << "sync succeeded";
  } catch (const StorageError& err) {
    EXPECT_EQ(err.error(), EACCES);
    EXPECT_NE(std::string(err.what()).find("AWS_SECRET_ACCESS_KEY"), std::string::npos) << err.what();
  }
  EXPECT_EQ(e.fake->count("PUT http://s3.test/ckpt/run/step-000001/rank-00000.shard?partNumber=1&"), 1);
  EXPECT_TRUE(e.sleeps.empty());
}

TEST(S3Engine, AWrongEtagFromHeadFailsTheShard) {
  Engine e;
  e.fake->head_etag = "00000000000000000000000000000000-3";
  auto f = e.write_12m();
  try {
    f->sync();
    FAIL() << "sync succeeded";
  } catch (const StorageError& err) {
    EXPECT_NE(std::string(err.what()).find("ETag 00000000000000000000000000000000-3; sent 12582912 bytes"),
              std::string::npos)
        << err.what();
  }
}

TEST(S3Engine, AFileDroppedBeforeSyncAbortsItsUpload) {
  Engine e;
  { auto f = e.write_12m(); }
  EXPECT_EQ(e.fake->count("DELETE http://s3.test/ckpt/run/step-000001/rank-00000.shard?uploadId=U1"), 1);
  EXPECT_EQ(e.fake->count("POST http://s3.test/ckpt/run/step-000001/rank-00000.shard?uploadId="), 0);
}

TEST(S3Engine, OutOfOrderWritesAreRefused) {
  Engine e;
  auto f = e.storage->open("s3://ckpt/run/x", OpenFor::create_write, {});
  char b[16] = {};
  EXPECT_THROW(f->write_at(b, sizeof b, 4096), StorageError);
}

}  // namespace
}  // namespace ccbench::checkpoint::s3

namespace ccbench::checkpoint::s3 {
namespace {

// HEAD answers 404 for a key until it was asked `after` times, then its size (or a short one).
class ExportFake final : public HttpClient {
 public:
  std::map<std::string, int> after;  // key suffix -> HEADs before it appears (-1: never)
  std::uint64_t bytes = 4096;
  HttpResponse send(const HttpRequest& q) override {
    std::lock_guard lock(mutex_);
    HttpResponse r;
    r.status = 404;
    for (auto& [suffix, n] : after) {
      if (q.url.size() < suffix.size() || q.url.compare(q.url.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      if (n == 0) {
        r.status = 200;
        r.headers = {{"content-length", std::to_string(bytes)}, {"etag", "\"x\""}};
      } else if (n > 0) {
        --n;
      }
    }
    return r;
  }

 private:
  std::mutex mutex_;
};

std::vector<ExportShard> two_shards() {
  return {{"/t/step-000001/rank-00000.shard", "dra/step-000001/rank-00000.shard", 4096},
          {"/t/step-000001/rank-00001.shard", "dra/step-000001/rank-00001.shard", 4096}};
}

TEST(S3Export, WaitsUntilEveryShardIsThereWithItsSize) {
  auto fake = std::make_unique<ExportFake>();
  fake->after = {{"rank-00000.shard", 2}, {"rank-00001.shard", 5}};
  ExportWatch w(std::move(fake), Endpoint{"http://s3.test", false}, Location{"ckpt", "dra"});
  const ExportResult r = w.wait(two_shards(), std::chrono::steady_clock::now(), 10, 0.001, nullptr);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.lag_s.size(), 2U);
  EXPECT_TRUE(r.missing.empty());
  EXPECT_EQ(r.polls, 6);  // shard 1 on its 6th HEAD
  EXPECT_LE(r.lag_s[0], r.lag_s[1]);
}

TEST(S3Export, TheDeadlineEndsTheWaitWithTheMissingKeys) {
  auto fake = std::make_unique<ExportFake>();
  fake->after = {{"rank-00000.shard", 0}, {"rank-00001.shard", -1}};
  ExportWatch w(std::move(fake), Endpoint{"http://s3.test", false}, Location{"ckpt", "dra"});
  const auto t0 = std::chrono::steady_clock::now();
  const ExportResult r = w.wait(two_shards(), t0, 0.05, 0.01, nullptr);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.missing, std::vector<std::string>{"dra/step-000001/rank-00001.shard"});
  EXPECT_LT(took, 5.0);
}

TEST(S3Export, AShortObjectOrADirtyFileIsNotExported) {
  auto fake = std::make_unique<ExportFake>();
  fake->after = {{"rank-00000.shard", 0}, {"rank-00001.shard", 0}};
  fake->bytes = 100;  // an upload still in progress elsewhere, or a truncated copy
  ExportWatch w(std::move(fake), Endpoint{"http://s3.test", false}, Location{"ckpt", "dra"});
  EXPECT_EQ(w.wait(two_shards(), std::chrono::steady_clock::now(), 0.02, 0.01, nullptr).missing.size(), 2U);
  auto fake2 = std::make_unique<ExportFake>();
  fake2->after = {{"rank-00000.shard", 0}, {"rank-00001.shard", 0}};
  ExportWatch w2(std::move(fake2), Endpoint{"http://s3.test", false}, Location{"ckpt", "dra"});
  const HsmCheck dirty = [](const std::string& p) {
    return std::optional<bool>(p.find("rank-00001") == std::string::npos);
  };
  EXPECT_EQ(w2.wait(two_shards(), std::chrono::steady_clock::now(), 0.02, 0.01, dirty).missing,
            std::vector<std::string>{"dra/step-000001/rank-00001.shard"});
}

}  // namespace
}  // namespace ccbench::checkpoint::s3

// Issue 27 (items 2, 3, 7, 8, 9): prefixes that are not keys, two runs in one prefix, credentials in
// endpoint URLs, and deadlines on every call.
namespace ccbench::checkpoint::s3 {
namespace {

std::string usage_message(const std::string& url, const char* flag) {
  try {
    parse_location(url, flag);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(S3Safety, DotAndEmptySegmentsInThePrefixAreRefusedNamingTheFlag) {
  EXPECT_EQ(usage_message("s3://ckpt/x/../real", "--target"),
            "--target s3://ckpt/x/../real: the prefix has a '..' segment (S3 keys here are written as given; use a "
            "prefix without '.', '..' or '//')");
  EXPECT_NE(usage_message("s3://ckpt/../victim/data", "--target").find("--target s3://ckpt/../victim/data: "),
            std::string::npos);
  EXPECT_NE(usage_message("s3://ckpt/./x", "--export-to").find("--export-to s3://ckpt/./x: the prefix has a '.'"),
            std::string::npos);
  EXPECT_NE(usage_message("s3://ckpt/a//b", "--target").find("an empty segment"), std::string::npos);
  EXPECT_NE(usage_message("s3://ckpt//a", "--target").find("an empty segment"), std::string::npos);
  EXPECT_NE(usage_message("s3://ckpt/..", "--target").find("'..' segment"), std::string::npos);
  // Dots inside a segment are ordinary key characters.
  EXPECT_EQ(parse_location("s3://ckpt/run.1/..x/y.", "--target").prefix, "run.1/..x/y.");
  EXPECT_EQ(parse_location("s3://ckpt/a/b/", "--target").prefix, "a/b");
}

// A one-request HTTP server on 127.0.0.1: records the request line, answers 404.
class RequestLineServer {
 public:
  RequestLineServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 1) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n) != 0)
      throw std::runtime_error("cannot listen on 127.0.0.1");
    port = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string got;
      char buf[4096];
      while (got.find("\r\n\r\n") == std::string::npos) {
        const ssize_t k = ::read(c, buf, sizeof buf);
        if (k <= 0) break;
        got.append(buf, static_cast<std::size_t>(k));
      }
      line_ = got.substr(0, got.find("\r\n"));
      const std::string answer = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!::write(c, answer.data(), answer.size());
      ::close(c);
    });
  }
  ~RequestLineServer() {
    if (thread_.joinable()) {
      ::shutdown(fd_, SHUT_RDWR);
      thread_.join();
    }
    ::close(fd_);
  }
  std::string request_line() {
    thread_.join();
    return line_;
  }
  int port = 0;

 private:
  int fd_ = -1;
  std::string line_;
  std::thread thread_;
};

TEST(S3Safety, KeysAreSentAsGivenWithoutCollapsingDotSegments) {
  EXPECT_EQ(object_url(Endpoint{"http://h:1", false}, "ckpt", "x/../real/./k", "list-type=2"),
            "http://h:1/ckpt/x/../real/./k?list-type=2");
  RequestLineServer server;
  auto http = make_curl_client({}, "us-east-1");
  HttpRequest q{"GET", fmt::format("http://127.0.0.1:{}/ckpt/x/../real/./k", server.port), {}};
  q.timeout_ms = 10000;
  const HttpResponse r = http->send(q);
  EXPECT_EQ(r.status, 404) << r.error;
  EXPECT_EQ(server.request_line(), "GET /ckpt/x/../real/./k HTTP/1.1");
}

TEST(S3Safety, UserinfoInAnEndpointIsNeitherSentNorShown) {
  EXPECT_EQ(redact_userinfo("AWS_ENDPOINT_URL=http://user:hunter2@127.0.0.1:9/x and https://a@b, s3://ckpt/a@b"),
            "AWS_ENDPOINT_URL=http://***@127.0.0.1:9/x and https://***@b, s3://ckpt/a@b");
  EXPECT_EQ(without_userinfo("http://user:hunter2@127.0.0.1:9/p@q"), "http://127.0.0.1:9/p@q");
  EXPECT_EQ(resolve_endpoint("", "http://user:hunter2@127.0.0.1:9", "r").base, "http://127.0.0.1:9");
  EXPECT_EQ(resolve_endpoint("https://k:hunter2@s3.example/", "", "r").base, "https://s3.example");
  EXPECT_EQ(usage_message("s3://u:hunter2@ckpt/x", "--target").find("hunter2"), std::string::npos)
      << usage_message("s3://u:hunter2@ckpt/x", "--target");
  EXPECT_NE(usage_message("s3://u:hunter2@ckpt/x", "--target").find("--target s3://***@ckpt/x"), std::string::npos);
  // The client's own message about a dead endpoint (what the issue saw echoed).
  class Dead final : public HttpClient {
   public:
    HttpResponse send(const HttpRequest&) override {
      HttpResponse r;
      r.error = "Couldn't connect to server";
      return r;
    }
  } dead;
  RetryPolicy once;
  once.attempts = 1;
  Client c(dead, Endpoint{"http://user:hunter2@127.0.0.1:9", false}, "ckpt", once);
  try {
    c.list("run/", "/", 1);
    FAIL() << "listed";
  } catch (const StorageError& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no response from http://***@127.0.0.1:9"), std::string::npos) << e.what();
  }
}

// A server that stalls every request until the client's own limit for it (as curl's timeout would
// end it), and records the limits it was given. A request with no limit stalls 1 s and fails.
class StallingServer final : public HttpClient {
 public:
  HttpResponse send(const HttpRequest& q) override {
    {
      std::lock_guard lock(mutex_);
      limits_ms.push_back(q.timeout_ms);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(q.timeout_ms > 0 ? q.timeout_ms : 1000));
    HttpResponse r;
    r.error = "Operation timed out";
    return r;
  }
  std::vector<long> limits() {
    std::lock_guard lock(mutex_);
    return limits_ms;
  }

 private:
  std::mutex mutex_;
  std::vector<long> limits_ms;
};

TEST(S3Safety, EveryCallWithItsTriesEndsByItsDeadline) {
  StallingServer server;
  RetryPolicy retry;
  retry.sleep = [](double) {};
  retry.call_deadline_s = 0.3;
  Client c(server, Endpoint{"http://s3.test", false}, "ckpt", retry);
  try {
    c.list("run/", "/", 1);
    FAIL() << "listed";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("the call's deadline (0.3 s, a quarter of -T) passed"), std::string::npos)
        << e.what();
  }
  long total_ms = 0;
  for (long ms : server.limits()) {
    EXPECT_GT(ms, 0);
    total_ms += ms;
  }
  EXPECT_LE(total_ms, 300);
}

TEST(S3Safety, TheExportWaitEndsAtItsDeadlineWhenHeadObjectStalls) {
  auto server = std::make_unique<StallingServer>();
  StallingServer* seen = server.get();
  ExportWatch w(std::move(server), Endpoint{"http://s3.test", false}, Location{"ckpt", "dra"});
  const ExportResult r = w.wait(two_shards(), std::chrono::steady_clock::now(), 0.2, 0.01, nullptr);
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.missing.size(), 2U);
  long total_ms = 0;
  for (long ms : seen->limits()) {
    EXPECT_GT(ms, 0);
    total_ms += ms;
  }
  EXPECT_LE(total_ms, 200);
}

// An object store in memory, shared by the runs' clients: PUT (If-None-Match: * checked when
// `checks_condition`), DELETE, HEAD, GET of a whole object, ListObjectsV2 with a delimiter (one page).
struct Bucket {
  std::mutex mutex;
  std::map<std::string, std::string> objects;
  bool checks_condition = true;
};

std::string decoded(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string query_value(const std::string& query, const std::string& name) {
  const auto at = ("&" + query).find("&" + name + "=");
  if (at == std::string::npos) return "";
  const std::string rest = query.substr(at + name.size() + 1);
  return decoded(rest.substr(0, rest.find('&')));
}

class BucketServer final : public HttpClient {
 public:
  explicit BucketServer(Bucket& b) : b_(b) {}
  HttpResponse send(const HttpRequest& q) override {
    std::lock_guard lock(b_.mutex);
    const std::string path = q.url.substr(std::string("http://s3.test/ckpt/").size());
    const std::string key = decoded(path.substr(0, path.find('?')));
    const std::string query = path.find('?') == std::string::npos ? "" : path.substr(path.find('?') + 1);
    HttpResponse r;
    r.status = 200;
    if (q.method == "PUT") {
      bool conditional = false;
      for (const auto& [k, v] : q.headers) conditional |= k == "If-None-Match" && v == "*";
      if (conditional && b_.checks_condition && b_.objects.count(key) > 0) {
        r.status = 412;
        r.body = "<Error><Code>PreconditionFailed</Code></Error>";
      } else {
        b_.objects[key] = std::string(q.body, q.body_bytes);
      }
    } else if (q.method == "DELETE") {
      b_.objects.erase(key);
      r.status = 204;
    } else if (q.method == "GET" && key.empty()) {
      const std::string prefix = query_value(query, "prefix"), delimiter = query_value(query, "delimiter");
      std::set<std::string> prefixes;
      r.body = "<ListBucketResult><IsTruncated>false</IsTruncated>";
      for (const auto& [k, v] : b_.objects) {
        if (k.rfind(prefix, 0) != 0) continue;
        const auto cut = delimiter.empty() ? std::string::npos : k.find(delimiter, prefix.size());
        if (cut != std::string::npos)
          prefixes.insert(k.substr(0, cut + 1));
        else
          r.body += "<Contents><Key>" + k + "</Key></Contents>";
      }
      for (const auto& p : prefixes) r.body += "<CommonPrefixes><Prefix>" + p + "</Prefix></CommonPrefixes>";
      r.body += "</ListBucketResult>";
    } else if ((q.method == "HEAD" || q.method == "GET") && b_.objects.count(key) > 0) {
      const std::string& object = b_.objects[key];
      r.headers = {{"content-length", std::to_string(object.size())}, {"etag", "\"e\""}};
      if (q.method == "GET" && q.into != nullptr) {
        r.received_bytes = std::min(q.into_bytes, object.size());
        std::copy_n(object.data(), r.received_bytes, q.into);
      }
    } else {
      r.status = 404;
    }
    return r;
  }

 private:
  Bucket& b_;
};

std::unique_ptr<S3Storage> run_on(Bucket& b) {
  RetryPolicy retry;
  retry.sleep = [](double) {};
  return std::make_unique<S3Storage>(std::make_unique<BucketServer>(b), Endpoint{"http://s3.test", false},
                                     Location{"ckpt", "run"}, RemoteOptions{}, retry);
}

TEST(S3Safety, TwoRunsClaimDifferentStepsAndNeitherRemovesTheOthers) {
  Bucket b;
  auto first = run_on(b), second = run_on(b);
  // Both numbered their step from the same listing (nothing there yet): 1.
  EXPECT_EQ(first->claim_step("s3://ckpt/run", 1), "step-000001");
  EXPECT_EQ(second->claim_step("s3://ckpt/run", 1), "step-000002");
  b.objects["run/step-000001/rank-00000.shard"] = "first's";
  b.objects["run/step-000002/rank-00000.shard"] = "second's";
  try {
    second->remove_tree("s3://ckpt/run/step-000001");
    FAIL() << "removed another run's step";
  } catch (const StorageError& e) {
    EXPECT_EQ(e.error(), EPERM);
    EXPECT_NE(std::string(e.what()).find("not removed: this run did not create that step"), std::string::npos);
  }
  EXPECT_EQ(b.objects.count("run/step-000001/rank-00000.shard"), 1U);
  second->remove_tree("s3://ckpt/run/step-000002");
  EXPECT_EQ(b.objects.count("run/step-000002/rank-00000.shard"), 0U);
  EXPECT_EQ(b.objects.count("run/step-000002/ccbench-claim"), 0U);
  EXPECT_EQ(b.objects.count("run/step-000001/ccbench-claim"), 1U);
  // The probe object is gone again; the next claim of the first run is past both.
  for (const auto& [k, v] : b.objects) EXPECT_EQ(k.find("probe"), std::string::npos) << k;
  EXPECT_EQ(first->claim_step("s3://ckpt/run", 2), "step-000002");  // the second run's step is free again
}

TEST(S3Safety, WithoutConditionalCreatesEachRunNamesItsStepsUniquely) {
  Bucket b;
  b.checks_condition = false;  // stores an If-None-Match PUT without checking it (as Swift 2.30 may)
  auto first = run_on(b), second = run_on(b);
  const std::string a = first->claim_step("s3://ckpt/run", 1), c = second->claim_step("s3://ckpt/run", 1);
  EXPECT_EQ(a.rfind("step-000001-", 0), 0U) << a;
  EXPECT_EQ(c.rfind("step-000001-", 0), 0U) << c;
  EXPECT_NE(a, c);
  b.objects["run/" + a + "/rank-00000.shard"] = "first's";
  const std::string next = first->claim_step("s3://ckpt/run", 1);
  EXPECT_EQ(next.rfind("step-000002-", 0), 0U) << next;
  EXPECT_THROW(second->remove_tree("s3://ckpt/run/" + a), StorageError);
  EXPECT_EQ(b.objects.count("run/" + a + "/rank-00000.shard"), 1U);
}

std::string s3_manifest(int step, const std::string& run) {
  return nlohmann::json{{"tool", kManifestTool},
                        {"version", kManifestVersion},
                        {"run", run},
                        {"step", step},
                        {"trial", 0},
                        {"seed", 1},
                        {"shard_bytes", 4096},
                        {"shards", {{{"writer", 0}}}},
                        {"files", {shard_name(0)}}}
      .dump();
}

// A committed step as the S3 engine leaves it: the shard and the manifest under the claimed name.
void s3_step(Bucket& b, const std::string& name, int step, const std::string& run) {
  b.objects["run/" + name + "/" + shard_name(0)] = "shard";
  b.objects["run/" + name + "/" + kManifestName] = s3_manifest(step, run);
}

TEST(S3Steps, ListingKeepAndRemovalGoThroughTheEngineAndTouchOnlyThisRunsSteps) {
  Bucket b;
  auto first = run_on(b), second = run_on(b);
  const std::string target = "s3://ckpt/run";
  ASSERT_EQ(first->claim_step(target, 1), "step-000001");
  s3_step(b, "step-000001", 1, "111");
  ASSERT_EQ(second->claim_step(target, 2), "step-000002");
  s3_step(b, "step-000002", 2, "222");
  ASSERT_EQ(second->claim_step(target, 3), "step-000003");
  s3_step(b, "step-000003", 3, "222");
  b.objects["run/step-000009/" + std::string(kManifestName)] = "{}";  // not ccbench's: never a step

  // Every run lists (and, for --phases read, reads) every committed step in the prefix.
  const auto all = committed_steps(*second, target);
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(all[0].path, "s3://ckpt/run/step-000001");
  EXPECT_EQ(all[0].manifest.run, "111");
  EXPECT_EQ(all[2].manifest.files, std::vector<std::string>{"rank-00000.shard"});
  // --keep 1 of the second run: its older step only, never the first run's.
  const auto over = steps_over_keep(*second, target, 1);
  ASSERT_EQ(over.size(), 1U);
  EXPECT_EQ(over[0].path, "s3://ckpt/run/step-000002");
  EXPECT_EQ(second->remove_step(all[0]),
            "kept s3://ckpt/run/step-000001: this run did not create that step (its objects may be another run's)");
  EXPECT_EQ(b.objects.count("run/step-000001/rank-00000.shard"), 1U);
  const Removal done = remove_steps(*second, over);
  EXPECT_EQ(done.removed, std::vector<std::string>{"step-000002"});
  for (const auto& [k, v] : b.objects) EXPECT_EQ(k.rfind("run/step-000002/", 0), std::string::npos) << k;
  // A user's object inside the run's own step keeps it; the manifest went first, the listed shard too.
  b.objects["run/step-000003/notes.txt"] = "a user's";
  EXPECT_EQ(remove_steps(*second, own_steps(*second, target, "222", {"s3://ckpt/run/step-000003"})).kept,
            std::vector<std::string>{"kept s3://ckpt/run/step-000003: it holds objects its manifest does not list"});
  std::vector<std::string> left;
  for (const auto& [k, v] : b.objects) left.push_back(k);
  const std::vector<std::string> expect = {"run/step-000001/ccbench-claim", "run/step-000001/ccbench-manifest.json",
                                           "run/step-000001/rank-00000.shard", "run/step-000003/notes.txt",
                                           "run/step-000009/ccbench-manifest.json"};
  EXPECT_EQ(left, expect);
}

TEST(S3Steps, RunUniqueStepNamesAreStepsOfTheirNumber) {
  Bucket b;
  b.checks_condition = false;
  auto run = run_on(b);
  const std::string name = run->claim_step("s3://ckpt/run", 1);
  ASSERT_EQ(name.size(), std::string("step-000001-0123456789abcdef").size()) << name;
  s3_step(b, name, 1, "333");
  EXPECT_EQ(run->committed_step_of(name), 1);
  EXPECT_EQ(run->committed_step_of("step-000001"), 1);
  EXPECT_EQ(run->committed_step_of("step-000001-mine"), -1);  // not a run token: a user's
  EXPECT_EQ(run->committed_step_of("step-0000001"), -1);
  const auto steps = committed_steps(*run, "s3://ckpt/run");
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].path, "s3://ckpt/run/" + name);
  EXPECT_EQ(steps[0].manifest.run, "333");
}

TEST(S3Steps, TheEngineRefusesWhatObjectsCannotDoNamingTheFlagAndTheEngine) {
  Bucket b;
  auto run = run_on(b);
  EXPECT_EQ(run->engine(), checkpoint::Engine::s3);
  EXPECT_EQ(run->refuses({.shared_file = true}),
            "--layout shared-file: not for the s3 engine (an object has one writer)");
  EXPECT_EQ(run->refuses({.direct = true}), "--direct: not for the s3 engine (no page cache to bypass)");
  EXPECT_EQ(run->refuses({.fsync = false}),
            "--no-fsync: not for the s3 engine (an upload is durable when it completes)");
  EXPECT_EQ(run->refuses({.export_to = true}),
            "--export-to: for a POSIX --target, not the s3 engine's (it is already in S3)");
  // 64 MiB parts (the default): 10,000 of them hold 655,360 MiB; one byte more is refused.
  EXPECT_EQ(run->refuses({.shard_bytes = 10000ULL * (64ULL << 20)}), "");
  EXPECT_EQ(run->refuses({.shard_bytes = 10000ULL * (64ULL << 20) + 4096}).rfind("--part-size: ", 0), 0U);
  EXPECT_EQ(run->refuses({}), "");
}

// A server that answers every listing "truncated, continue with the same token" (or with none);
// after 100 pages it ends the listing, so that a client that does not stop fails the test, not hangs.
class EndlessListing final : public HttpClient {
 public:
  std::string token = "AAAA";
  int pages = 0;
  HttpResponse send(const HttpRequest&) override {
    ++pages;
    HttpResponse r;
    r.status = 200;
    const bool more = pages < 100;
    r.body = std::string("<ListBucketResult><IsTruncated>") + (more ? "true" : "false") + "</IsTruncated>" +
             (token.empty() || !more ? std::string() : "<NextContinuationToken>" + token + "</NextContinuationToken>") +
             "<CommonPrefixes><Prefix>run/step-000001/</Prefix></CommonPrefixes></ListBucketResult>";
    return r;
  }
};

TEST(S3Safety, ARepeatedContinuationTokenEndsTheListingWithAnError) {
  for (const std::string token : {"AAAA", ""}) {
    auto server = std::make_unique<EndlessListing>();
    server->token = token;
    EndlessListing* seen = server.get();
    S3Storage storage(std::move(server), Endpoint{"http://s3.test", false}, Location{"ckpt", "run"}, {});
    try {
      storage.entries("s3://ckpt/run");
      FAIL() << "listed";
    } catch (const StorageError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(token.empty() ? "S3 ListObjectsV2 s3://ckpt/run/: IsTruncated without a NextContinuationToken"
                                     : "S3 ListObjectsV2 s3://ckpt/run/: the server sent the continuation token "
                                       "'AAAA' again"),
                std::string::npos)
          << m;
    }
    EXPECT_LE(seen->pages, 2);
  }
}

}  // namespace
}  // namespace ccbench::checkpoint::s3
