// The S3 engine without a server: canonical query strings and URLs against hand-written values,
// the multipart ETag against hashlib's (constants computed with Python's hashlib, independent of
// OpenSSL here), and the upload's retry and abort logic over a scripted fake of our HttpClient.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <mutex>

#include "checkpoint/s3/client.hpp"
#include "checkpoint/s3/export_watch.hpp"
#include "checkpoint/s3/protocol.hpp"
#include "checkpoint/s3/s3_storage.hpp"
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
