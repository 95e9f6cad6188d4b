// The HTTP layer of the S3 engine (docs/checkpoint.md, "S3 engine"): one call, a request in and a
// response out, so the engine's logic (multipart, retries, aborts, checks) is unit-tested against a
// scripted fake of this interface and the real client (libcurl with its SigV4 signer) is tested
// against a real server.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ccbench::checkpoint::s3 {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // GET, PUT, POST, HEAD, DELETE
  std::string url;     // scheme://host[:port]/path?canonical-query (the query written canonical by the caller)
  Headers headers;
  const char* body = nullptr;  // not owned; valid for the call
  std::size_t body_bytes = 0;
  // Where a GET's body goes when set (a ranged read lands in the caller's buffer, no copy); the
  // response's body is then empty and `received_bytes` says how much arrived.
  char* into = nullptr;
  std::size_t into_bytes = 0;
  long timeout_ms = 0;  // the whole request's limit (0: only the stall limits of the client)
};

struct HttpResponse {
  long status = 0;    // 0: no response (transport error, see `error`)
  std::string error;  // the transport's error ("Couldn't connect to server"), "" when a response came
  Headers headers;    // names lowercased
  std::string body;   // unless the request had `into`
  std::size_t received_bytes = 0;
  std::string header(const std::string& lowercase_name) const;  // "" when absent
};

// The credentials a request is signed with. The secret is only ever handed to the signer.
struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // sent as x-amz-security-token when set
  std::string source;         // "environment", "instance metadata (role NAME)"
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Thread-safe: the engine sends parts from several threads at once.
  virtual HttpResponse send(const HttpRequest& request) = 0;
};

// libcurl, signing every request with CURLOPT_AWS_SIGV4 ("aws:amz:REGION:s3") when the credentials
// are not empty. One easy handle per thread (connections reused).
std::unique_ptr<HttpClient> make_curl_client(Credentials credentials, std::string region);

}  // namespace ccbench::checkpoint::s3
