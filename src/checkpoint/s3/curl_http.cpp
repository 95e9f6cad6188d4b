// The real HTTP client: libcurl 7.88 with its built-in SigV4 signer. Its limits, handled by the
// callers (docs/checkpoint.md, "SigV4 with curl 7.88"): the query string is signed as given, so it
// is written canonical; x-amz-content-sha256 is not added, so every request sets it; a caller-set
// X-Amz-Date would be sent twice, so none is set; a header removed with "Name:" is still signed,
// so none is removed that way.
#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>

#include "checkpoint/s3/http.hpp"

namespace ccbench::checkpoint::s3 {

std::string HttpResponse::header(const std::string& lowercase_name) const {
  for (const auto& [k, v] : headers)
    if (k == lowercase_name) return v;
  return "";
}

namespace {

// One easy handle per thread, reset before each request (its connection cache survives the reset).
struct ThreadHandle {
  CURL* curl = nullptr;
  ThreadHandle() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    curl = curl_easy_init();
  }
  ~ThreadHandle() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

struct Transfer {
  const HttpRequest* request;
  HttpResponse* response;
  std::size_t sent = 0;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  if (t->request->into != nullptr) {
    // More than the caller asked for is an error (a server ignoring Range): stop the transfer.
    if (t->response->received_bytes + n > t->request->into_bytes) return 0;
    std::memcpy(t->request->into + t->response->received_bytes, data, n);
  } else {
    t->response->body.append(data, n);
  }
  t->response->received_bytes += n;
  return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  std::string line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response->headers.clear();  // a 100 Continue's headers are not the response's
    return n;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string value = line.substr(colon + 1);
  const auto b = value.find_first_not_of(" \t");
  const auto e = value.find_last_not_of(" \t\r\n");
  value = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  t->response->headers.emplace_back(std::move(name), std::move(value));
  return n;
}

std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = std::min(size * count, t->request->body_bytes - t->sent);
  std::memcpy(buffer, t->request->body + t->sent, n);
  t->sent += n;
  return n;
}

class CurlClient final : public HttpClient {
 public:
  CurlClient(Credentials c, std::string region)
      : credentials_(std::move(c)), sigv4_(fmt::format("aws:amz:{}:s3", region)) {}

  HttpResponse send(const HttpRequest& request) override {
    thread_local ThreadHandle handle;
    HttpResponse response;
    CURL* curl = handle.curl;
    if (curl == nullptr) {
      response.error = "curl_easy_init failed";
      return response;
    }
    curl_easy_reset(curl);
    Transfer t{&request, &response};
    char error[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    // An object key is sent as given: libcurl would otherwise collapse "/./" and "/../" in the path,
    // writing another key (or another bucket's) than the one the step listing names.
    curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    // A dead or stalled server fails the request (and the engine retries) instead of hanging it.
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 10L);
    if (request.timeout_ms > 0) curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, request.timeout_ms);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    if (request.method == "PUT") {
      curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
      curl_easy_setopt(curl, CURLOPT_READDATA, &t);
      curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body_bytes));
      // A part is sent at once: waiting up to a second for "100 Continue" would be timed as upload.
      // (Not by removing the header with "Expect:": 7.88 signs that empty header, and the server
      // that never saw it refuses the signature.)
      curl_easy_setopt(curl, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
    } else if (request.method == "POST") {
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body != nullptr ? request.body : "");
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body_bytes));
    } else if (request.method == "HEAD") {
      curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (request.method != "GET") {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    curl_slist* list = nullptr;
    for (const auto& [k, v] : request.headers) list = curl_slist_append(list, fmt::format("{}: {}", k, v).c_str());
    if (!credentials_.session_token.empty())
      list = curl_slist_append(list, fmt::format("x-amz-security-token: {}", credentials_.session_token).c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    if (!credentials_.access_key_id.empty()) {
      curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4_.c_str());
      curl_easy_setopt(curl, CURLOPT_USERNAME, credentials_.access_key_id.c_str());
      curl_easy_setopt(curl, CURLOPT_PASSWORD, credentials_.secret_access_key.c_str());
    }
    const CURLcode rc = curl_easy_perform(curl);
    curl_slist_free_all(list);
    if (rc != CURLE_OK) {
      response.status = 0;
      response.error = error[0] != '\0' ? std::string(error) : std::string(curl_easy_strerror(rc));
      return response;
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    return response;
  }

 private:
  Credentials credentials_;
  std::string sigv4_;
};

}  // namespace

std::unique_ptr<HttpClient> make_curl_client(Credentials credentials, std::string region) {
  return std::make_unique<CurlClient>(std::move(credentials), std::move(region));
}

}  // namespace ccbench::checkpoint::s3
