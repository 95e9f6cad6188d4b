// S3 calls over the HTTP interface (docs/checkpoint.md, "S3 engine"): multipart upload (create,
// part, complete, abort), HeadObject, ranged GET, ListObjectsV2, DeleteObject, each retried with
// backoff when the failure is transient (no response, 5xx, 429, RequestTimeout) and counted. Errors
// are StorageErrors naming the call, the object and the server's code, never a credential.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/s3/http.hpp"
#include "checkpoint/s3/protocol.hpp"

namespace ccbench::checkpoint::s3 {

struct RetryPolicy {
  int attempts = 5;              // tries of one request, the first included
  double first_backoff_s = 0.1;  // doubled each retry
  double max_backoff_s = 2.0;
  std::function<void(double)> sleep;  // unset: std::this_thread::sleep_for (a test's fake records instead)
  // The most one call may take, all its tries and backoffs together (0: no limit but the stall
  // limits of the HTTP client). From -T (RemoteOptions::request_deadline_s), so that a server that
  // trickles bytes or never answers fails the call inside -T instead of holding it forever.
  double call_deadline_s = 0;
};

using Clock = std::chrono::steady_clock;

// What a conditional create (PutObject with If-None-Match: *) found.
enum class CreateResult { created, exists, unsupported };

struct ObjectHead {
  std::uint64_t bytes = 0;
  std::string etag;  // unquoted
};

class Client {
 public:
  Client(HttpClient& http, Endpoint endpoint, std::string bucket, RetryPolicy retry = {});

  std::string create_upload(const std::string& key);
  // Returns the part's ETag (quoted, as sent back); checks it is the md5 of what was sent.
  std::string upload_part(const std::string& key, const std::string& upload_id, int number, const char* data,
                          std::size_t bytes, const Md5& md5, std::atomic<std::uint64_t>& retries);
  void complete(const std::string& key, const std::string& upload_id, const std::vector<PartDone>& parts,
                std::atomic<std::uint64_t>& retries);
  void abort(const std::string& key, const std::string& upload_id);
  // nullopt: 404. `until`: no try starts or lasts past it (the export wait's deadline).
  std::optional<ObjectHead> head(const std::string& key, std::optional<Clock::time_point> until = std::nullopt);
  void get_range(const std::string& key, std::uint64_t offset, char* into, std::size_t bytes,
                 std::atomic<std::uint64_t>& retries);
  void put(const std::string& key, const char* data, std::size_t bytes);
  // PutObject with If-None-Match: * (created only if no object has the key). `unsupported`: the
  // server answered in a way that says it does not check the condition (501, 400 NotImplemented).
  CreateResult create_if_absent(const std::string& key, const char* data, std::size_t bytes);
  Listing list(const std::string& prefix, const std::string& delimiter, int max_keys = 1000,
               const std::string& token = "");
  void remove(const std::string& key);

  const std::string& bucket() const { return bucket_; }
  std::string url_of(const std::string& key) const { return "s3://" + bucket_ + "/" + key; }

 private:
  HttpResponse send(HttpRequest request, const std::string& what, const std::string& key,
                    std::atomic<std::uint64_t>* retries, std::initializer_list<long> ok = {200},
                    std::optional<Clock::time_point> until = std::nullopt);

  HttpClient& http_;
  Endpoint endpoint_;
  std::string bucket_;
  RetryPolicy retry_;
};

// What a failed S3 response means, in words a user can act on (credentials named, never shown).
std::string explain(long status, const ErrorXml& e, const std::string& bucket);

// Credentials as AWS users set them: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN,
// else the instance role's through IMDSv2 (a token PUT, then the role's credentials; 1 s timeout).
// nullopt when neither gives any.
std::optional<Credentials> find_credentials(HttpClient& unsigned_http);

// AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1.
std::string region_from_environment();

// A signed client and the endpoint for `url` as AWS users configure them (--s3-endpoint, the AWS_
// variables, the instance role). Throws UsageError naming `flag` when there are no credentials.
struct Connection {
  std::unique_ptr<HttpClient> http;
  Endpoint endpoint;
};
Connection connect_from_environment(const std::string& url, const char* flag, const std::string& endpoint_flag);

}  // namespace ccbench::checkpoint::s3
