#include "checkpoint/s3/client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "checkpoint/storage.hpp"
#include "core/error.hpp"

namespace ccbench::checkpoint::s3 {
namespace {

// The SHA-256 of an empty body (SigV4's payload hash of a GET, HEAD, DELETE).
constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

bool transient(const HttpResponse& r) {
  if (r.status == 0 || r.status >= 500 || r.status == 429) return true;
  return r.status == 400 && parse_error(r.body).code == "RequestTimeout";
}

int errno_of(long status) {
  if (status == 403 || status == 401) return EACCES;
  if (status == 404) return ENOENT;
  return EIO;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

std::string explain(long status, const ErrorXml& e, const std::string& bucket) {
  if (e.code == "SignatureDoesNotMatch")
    return "the server refused the request signature: the secret key (AWS_SECRET_ACCESS_KEY) does not match the "
           "access key (SignatureDoesNotMatch)";
  if (e.code == "InvalidAccessKeyId")
    return "the server does not know the access key (AWS_ACCESS_KEY_ID) (InvalidAccessKeyId)";
  if (e.code == "ExpiredToken" || e.code == "InvalidToken")
    return fmt::format("the session token (AWS_SESSION_TOKEN) was refused ({})", e.code);
  if (e.code == "NoSuchBucket") return fmt::format("the bucket '{}' does not exist (NoSuchBucket)", bucket);
  if (e.code == "AccessDenied" || status == 403)
    return fmt::format("access denied: these credentials may not use bucket '{}' ({})", bucket,
                       e.code.empty() ? "HTTP 403" : e.code);
  if (!e.code.empty()) return fmt::format("HTTP {} {}{}", status, e.code, e.message.empty() ? "" : ": " + e.message);
  return fmt::format("HTTP {}", status);
}

Client::Client(HttpClient& http, Endpoint endpoint, std::string bucket, RetryPolicy retry)
    : http_(http), endpoint_(std::move(endpoint)), bucket_(std::move(bucket)), retry_(std::move(retry)) {
  if (!retry_.sleep) retry_.sleep = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
}

HttpResponse Client::send(HttpRequest request, const std::string& what, const std::string& key,
                          std::atomic<std::uint64_t>* retries, std::initializer_list<long> ok,
                          std::optional<Clock::time_point> until) {
  const auto start = Clock::now();
  std::optional<Clock::time_point> end = until;
  if (retry_.call_deadline_s > 0) {
    const auto limit =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(retry_.call_deadline_s));
    end = end ? std::min(*end, limit) : limit;
  }
  const auto ms_left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(*end - Clock::now()).count();
  };
  double backoff = retry_.first_backoff_s;
  HttpResponse r;
  int tries = 0;
  bool out_of_time = false;
  for (;;) {
    if (end) {
      const long left = static_cast<long>(ms_left());
      if (left <= 0) {
        out_of_time = true;
        break;
      }
      // The whole try inside what is left (timeout_ms 0 would mean no limit: at least 1 ms).
      request.timeout_ms = request.timeout_ms > 0 ? std::min(request.timeout_ms, left) : left;
    }
    r = http_.send(request);
    ++tries;
    if (std::find(ok.begin(), ok.end(), r.status) != ok.end()) return r;
    if (!transient(r) || tries >= retry_.attempts) break;
    if (end && ms_left() <= static_cast<long>(backoff * 1000)) {
      out_of_time = true;  // no time left for another try
      break;
    }
    if (retries != nullptr) ++*retries;
    retry_.sleep(backoff);
    backoff = std::min(backoff * 2, retry_.max_backoff_s);
  }
  const std::string tried = tries > 1 ? fmt::format(" (after {} tries)", tries) : "";
  const std::string deadline = out_of_time || (end && ms_left() <= 0)
                                   ? fmt::format("; the call's deadline ({:.1f} s{}) passed",
                                                 std::chrono::duration<double>(*end - start).count(),
                                                 retry_.call_deadline_s > 0 && !until ? ", a quarter of -T" : "")
                                   : "";
  if (r.status == 0)
    throw StorageError(
        EIO, fmt::format("S3 {} {}: no response from {}: {}{}{}", what, url_of(key), redact_userinfo(endpoint_.base),
                         r.error.empty() ? "not sent" : r.error, tried, deadline));
  throw StorageError(errno_of(r.status), fmt::format("S3 {} {}: {}{}{}", what, url_of(key),
                                                     explain(r.status, parse_error(r.body), bucket_), tried, deadline));
}

std::string Client::create_upload(const std::string& key) {
  HttpRequest q{"POST",
                object_url(endpoint_, bucket_, key, canonical_query({{"uploads", ""}})),
                {{"x-amz-content-sha256", kEmptySha256}}};
  const HttpResponse r = send(q, "CreateMultipartUpload", key, nullptr);
  const auto id = parse_upload_id(r.body);
  if (!id)
    throw StorageError(EIO, fmt::format("S3 CreateMultipartUpload {}: no UploadId in the response", url_of(key)));
  return *id;
}

std::string Client::upload_part(const std::string& key, const std::string& upload_id, int number, const char* data,
                                std::size_t bytes, const Md5& md5, std::atomic<std::uint64_t>& retries) {
  // The payload is not hashed for the signature (UNSIGNED-PAYLOAD: a SHA-256 pass over every part
  // would be timed as upload); Content-MD5 makes the server check the bytes instead.
  HttpRequest q{"PUT",
                object_url(endpoint_, bucket_, key,
                           canonical_query({{"partNumber", std::to_string(number)}, {"uploadId", upload_id}})),
                {{"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}, {"Content-MD5", base64(md5.data(), md5.size())}},
                data,
                bytes};
  const HttpResponse r = send(q, fmt::format("UploadPart {}", number), key, &retries);
  const std::string etag = r.header("etag");
  if (unquote(etag) != hex(md5.data(), md5.size()))
    throw StorageError(
        EIO, fmt::format("S3 UploadPart {} {}: the server's ETag {} is not the md5 of the part sent ({})", number,
                         url_of(key), etag, hex(md5.data(), md5.size())));
  return etag;
}

void Client::complete(const std::string& key, const std::string& upload_id, const std::vector<PartDone>& parts,
                      std::atomic<std::uint64_t>& retries) {
  const std::string xml = complete_xml(parts);
  HttpRequest q{"POST",
                object_url(endpoint_, bucket_, key, canonical_query({{"uploadId", upload_id}})),
                {{"x-amz-content-sha256", sha256_hex(xml.data(), xml.size())}, {"Content-Type", "application/xml"}},
                xml.data(),
                xml.size()};
  const HttpResponse r = send(q, "CompleteMultipartUpload", key, &retries);
  // S3 can answer 200 with an <Error> body when the completion failed after the headers were sent.
  if (const ErrorXml e = parse_error(r.body); !e.code.empty())
    throw StorageError(EIO, fmt::format("S3 CompleteMultipartUpload {}: {}", url_of(key), explain(200, e, bucket_)));
}

void Client::abort(const std::string& key, const std::string& upload_id) {
  HttpRequest q{"DELETE",
                object_url(endpoint_, bucket_, key, canonical_query({{"uploadId", upload_id}})),
                {{"x-amz-content-sha256", kEmptySha256}}};
  send(q, "AbortMultipartUpload", key, nullptr, {200, 204, 404});
}

std::optional<ObjectHead> Client::head(const std::string& key, std::optional<Clock::time_point> until) {
  HttpRequest q{"HEAD", object_url(endpoint_, bucket_, key, ""), {{"x-amz-content-sha256", kEmptySha256}}};
  const HttpResponse r = send(q, "HeadObject", key, nullptr, {200, 404}, until);
  if (r.status == 404) return std::nullopt;
  ObjectHead h;
  h.bytes = std::strtoull(r.header("content-length").c_str(), nullptr, 10);
  h.etag = unquote(r.header("etag"));
  return h;
}

void Client::get_range(const std::string& key, std::uint64_t offset, char* into, std::size_t bytes,
                       std::atomic<std::uint64_t>& retries) {
  HttpRequest q{
      "GET",
      object_url(endpoint_, bucket_, key, ""),
      {{"x-amz-content-sha256", kEmptySha256}, {"Range", fmt::format("bytes={}-{}", offset, offset + bytes - 1)}}};
  q.into = into;
  q.into_bytes = bytes;
  const HttpResponse r = send(q, fmt::format("GetObject (range at {})", offset), key, &retries, {206, 200});
  if (r.received_bytes != bytes)
    throw StorageError(ENODATA, fmt::format("S3 GetObject {}: {} bytes at offset {} asked, {} came", url_of(key), bytes,
                                            offset, r.received_bytes));
}

void Client::put(const std::string& key, const char* data, std::size_t bytes) {
  HttpRequest q{
      "PUT", object_url(endpoint_, bucket_, key, ""), {{"x-amz-content-sha256", sha256_hex(data, bytes)}}, data, bytes};
  send(q, "PutObject", key, nullptr);
}

CreateResult Client::create_if_absent(const std::string& key, const char* data, std::size_t bytes) {
  HttpRequest q{"PUT",
                object_url(endpoint_, bucket_, key, ""),
                {{"x-amz-content-sha256", sha256_hex(data, bytes)}, {"If-None-Match", "*"}},
                data,
                bytes};
  // 412: the key exists; 409 (ConditionalRequestConflict): another create of it is in flight, so
  // it is taken either way. 501 or 400 NotImplemented: the server does not do conditional writes.
  const HttpResponse r = send(q, "PutObject (If-None-Match: *)", key, nullptr, {200, 412, 409, 501, 400});
  if (r.status == 200) return CreateResult::created;
  if (r.status == 412 || r.status == 409) return CreateResult::exists;
  if (r.status == 400 && parse_error(r.body).code != "NotImplemented")
    throw StorageError(EIO, fmt::format("S3 PutObject (If-None-Match: *) {}: {}", url_of(key),
                                        explain(r.status, parse_error(r.body), bucket_)));
  return CreateResult::unsupported;
}

Listing Client::list(const std::string& prefix, const std::string& delimiter, int max_keys, const std::string& token) {
  Query query{{"list-type", "2"}, {"prefix", prefix}, {"max-keys", std::to_string(max_keys)}};
  if (!delimiter.empty()) query.emplace_back("delimiter", delimiter);
  if (!token.empty()) query.emplace_back("continuation-token", token);
  HttpRequest q{
      "GET", object_url(endpoint_, bucket_, "", canonical_query(query)), {{"x-amz-content-sha256", kEmptySha256}}};
  return parse_listing(send(q, "ListObjectsV2", prefix, nullptr).body);
}

void Client::remove(const std::string& key) {
  HttpRequest q{"DELETE", object_url(endpoint_, bucket_, key, ""), {{"x-amz-content-sha256", kEmptySha256}}};
  send(q, "DeleteObject", key, nullptr, {200, 204, 404});
}

std::string region_from_environment() {
  if (auto r = env("AWS_REGION"); !r.empty()) return r;
  if (auto r = env("AWS_DEFAULT_REGION"); !r.empty()) return r;
  return "us-east-1";
}

std::optional<Credentials> find_credentials(HttpClient& http) {
  Credentials c;
  c.access_key_id = env("AWS_ACCESS_KEY_ID");
  c.secret_access_key = env("AWS_SECRET_ACCESS_KEY");
  c.session_token = env("AWS_SESSION_TOKEN");
  c.source = "environment";
  if (!c.access_key_id.empty() && !c.secret_access_key.empty()) return c;
  // IMDSv2 (untested here: no instance metadata service on this machine): a session token first,
  // then the role's name and its temporary credentials.
  const std::string imds = "http://169.254.169.254/latest";
  HttpRequest token_req{"PUT", imds + "/api/token", {{"X-aws-ec2-metadata-token-ttl-seconds", "300"}}};
  token_req.timeout_ms = 1000;  // off EC2 nothing answers: give up fast
  const HttpResponse token = http.send(token_req);
  if (token.status != 200 || token.body.empty()) return std::nullopt;
  const Headers auth{{"X-aws-ec2-metadata-token", token.body}};
  HttpRequest role_req{"GET", imds + "/meta-data/iam/security-credentials/", auth};
  role_req.timeout_ms = 1000;
  const HttpResponse role = http.send(role_req);
  if (role.status != 200 || role.body.empty()) return std::nullopt;
  const std::string name = role.body.substr(0, role.body.find('\n'));
  HttpRequest creds_req{"GET", imds + "/meta-data/iam/security-credentials/" + name, auth};
  creds_req.timeout_ms = 1000;
  const HttpResponse creds = http.send(creds_req);
  if (creds.status != 200) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(creds.body);
    c.access_key_id = j.at("AccessKeyId").get<std::string>();
    c.secret_access_key = j.at("SecretAccessKey").get<std::string>();
    c.session_token = j.value("Token", "");
    c.source = fmt::format("instance metadata (role {})", name);
    return c;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

Connection connect_from_environment(const std::string& url, const char* flag, const std::string& endpoint_flag) {
  const std::string region = region_from_environment();
  auto unsigned_http = make_curl_client({}, region);
  const auto credentials = find_credentials(*unsigned_http);
  if (!credentials)
    throw UsageError(fmt::format(
        "{} {}: no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for "
        "temporary ones), or run where the instance metadata service gives a role's",
        flag, url));
  return {make_curl_client(*credentials, region), resolve_endpoint(endpoint_flag, env("AWS_ENDPOINT_URL"), region)};
}

}  // namespace ccbench::checkpoint::s3
