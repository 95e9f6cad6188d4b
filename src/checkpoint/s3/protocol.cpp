#include "checkpoint/s3/protocol.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <pugixml.hpp>

#include "core/error.hpp"

namespace ccbench::checkpoint::s3 {

bool is_s3_url(std::string_view text) { return text.rfind("s3://", 0) == 0; }

Location parse_location(const std::string& url, const char* flag) {
  if (!is_s3_url(url)) throw UsageError(fmt::format("{} {}: expected s3://BUCKET/PREFIX", flag, redact_userinfo(url)));
  std::string rest = url.substr(5);
  const auto slash = rest.find('/');
  Location l;
  l.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) l.prefix = rest.substr(slash + 1);
  while (!l.prefix.empty() && l.prefix.back() == '/') l.prefix.pop_back();
  const bool ok =
      l.bucket.size() >= 3 && l.bucket.size() <= 63 && std::all_of(l.bucket.begin(), l.bucket.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
      });
  if (!ok)
    throw UsageError(fmt::format("{} {}: '{}' is not a bucket name (3-63 of a-z 0-9 . -)", flag, redact_userinfo(url),
                                 redact_userinfo("s3://" + l.bucket).substr(5)));
  // A key is not a path, but a URL's path is: libcurl (and proxies) collapse "." and ".." and a
  // server may fold "//", so the objects written would not be the ones listed, or not in this
  // bucket at all. Such a prefix is refused rather than guessed at.
  std::size_t begin = 0;
  while (!l.prefix.empty()) {
    const std::size_t end = std::min(l.prefix.find('/', begin), l.prefix.size());
    const std::string_view segment(l.prefix.data() + begin, end - begin);
    if (segment.empty() || segment == "." || segment == "..")
      throw UsageError(
          fmt::format("{} {}: the prefix has {} segment (S3 keys here are written as given; use a "
                      "prefix without '.', '..' or '//')",
                      flag, url, segment.empty() ? "an empty" : fmt::format("a '{}'", segment)));
    if (end == l.prefix.size()) break;
    begin = end + 1;
  }
  return l;
}

std::string redact_userinfo(std::string text) {
  for (std::size_t scheme = text.find("://"); scheme != std::string::npos; scheme = text.find("://", scheme + 3)) {
    const std::size_t host = scheme + 3;
    const std::size_t authority_end = std::min(text.find_first_of("/?# \t\n'\"", host), text.size());
    const std::size_t at = text.rfind('@', authority_end - 1);
    if (at == std::string::npos || at < host) continue;
    text.replace(host, at - host, "***");
  }
  return text;
}

std::string without_userinfo(std::string url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const std::size_t host = scheme + 3;
  const std::size_t authority_end = std::min(url.find_first_of("/?#", host), url.size());
  const std::size_t at = url.rfind('@', authority_end - 1);
  if (at != std::string::npos && at >= host) url.erase(host, at + 1 - host);
  return url;
}

Endpoint resolve_endpoint(const std::string& flag_value, const std::string& env_value, const std::string& region) {
  Endpoint e;
  // Requests are signed with SigV4 (its Authorization header), so user:password in the URL is never
  // used; it is dropped here so that no message or file can show it.
  e.base = without_userinfo(!flag_value.empty() ? flag_value : env_value);
  if (e.base.empty()) {
    e.base = fmt::format("https://s3.{}.amazonaws.com", region);
    e.virtual_hosted = true;
  }
  while (!e.base.empty() && e.base.back() == '/') e.base.pop_back();
  return e;
}

std::string object_url(const Endpoint& e, const std::string& bucket, const std::string& key,
                       const std::string& canonical_query) {
  std::string url;
  if (e.virtual_hosted) {
    const auto scheme = e.base.find("://");
    url = e.base.substr(0, scheme + 3) + bucket + "." + e.base.substr(scheme + 3) + "/" + uri_encode(key, true);
  } else {
    // Appended, not "/" + std::string: GCC 12 warns a false -Wrestrict on that temporary.
    url = e.base + "/" + bucket + "/";
    url += uri_encode(key, true);
  }
  if (!canonical_query.empty()) url += "?" + canonical_query;
  return url;
}

std::string uri_encode(std::string_view text, bool keep_slash) {
  std::string out;
  for (unsigned char c : text) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '_' || c == '.' || c == '~';
    if (unreserved || (keep_slash && c == '/'))
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string canonical_query(Query query) {
  for (auto& [k, v] : query) {
    k = uri_encode(k, false);
    v = uri_encode(v, false);
  }
  std::sort(query.begin(), query.end());  // by encoded name, then value (SigV4's order)
  std::string out;
  for (const auto& [k, v] : query) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

namespace {
template <std::size_t N>
std::array<unsigned char, N> digest(const EVP_MD* md, const void* data, std::size_t bytes) {
  std::array<unsigned char, N> out{};
  unsigned int n = 0;
  EVP_Digest(data, bytes, out.data(), &n, md, nullptr);
  return out;
}
}  // namespace

Md5 md5_of(const void* data, std::size_t bytes) { return digest<16>(EVP_md5(), data, bytes); }

std::string hex(const unsigned char* data, std::size_t bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes; ++i) out += fmt::format("{:02x}", data[i]);
  return out;
}

std::string sha256_hex(const void* data, std::size_t bytes) {
  const auto d = digest<32>(EVP_sha256(), data, bytes);
  return hex(d.data(), d.size());
}

std::string base64(const unsigned char* data, std::size_t bytes) {
  std::string out(4 * ((bytes + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(bytes));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string multipart_etag(const std::vector<Md5>& part_md5s) {
  std::string joined;
  for (const auto& m : part_md5s) joined.append(reinterpret_cast<const char*>(m.data()), m.size());
  const Md5 all = md5_of(joined.data(), joined.size());
  return fmt::format("{}-{}", hex(all.data(), all.size()), part_md5s.size());
}

std::string unquote(std::string etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

std::string complete_xml(const std::vector<PartDone>& parts) {
  std::string out = "<CompleteMultipartUpload>";
  for (const auto& p : parts)
    out += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", p.number, p.etag);
  return out + "</CompleteMultipartUpload>";
}

ErrorXml parse_error(const std::string& body) {
  pugi::xml_document doc;
  ErrorXml e;
  if (!doc.load_buffer(body.data(), body.size())) return e;
  const auto err = doc.child("Error");
  e.code = err.child_value("Code");
  e.message = err.child_value("Message");
  return e;
}

std::optional<std::string> parse_upload_id(const std::string& body) {
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size())) return std::nullopt;
  const std::string id = doc.child("InitiateMultipartUploadResult").child_value("UploadId");
  if (id.empty()) return std::nullopt;
  return id;
}

Listing parse_listing(const std::string& body) {
  pugi::xml_document doc;
  Listing l;
  if (!doc.load_buffer(body.data(), body.size())) return l;
  const auto root = doc.child("ListBucketResult");
  for (const auto& c : root.children("Contents")) l.keys.emplace_back(c.child_value("Key"));
  for (const auto& c : root.children("CommonPrefixes")) l.prefixes.emplace_back(c.child_value("Prefix"));
  l.truncated = std::string(root.child_value("IsTruncated")) == "true";
  if (l.truncated) l.next_token = root.child_value("NextContinuationToken");
  return l;
}

}  // namespace ccbench::checkpoint::s3
