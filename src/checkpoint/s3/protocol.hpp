// The S3 protocol's pure parts (docs/checkpoint.md, "S3 engine"): s3:// URLs, endpoints, URI
// encoding and canonical query strings (curl 7.88 signs the query as given), the multipart ETag,
// the request XML and the response XML (pugixml). No I/O: unit-tested against hand-written values.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ccbench::checkpoint::s3 {

// s3://BUCKET/PREFIX -> bucket and key prefix (no leading or trailing '/'). Throws UsageError
// naming `flag` when it is not one, or when the prefix has a ".", ".." or empty segment (libcurl
// would collapse them in the URL: the objects written would not be the ones listed).
struct Location {
  std::string bucket;
  std::string prefix;
};
Location parse_location(const std::string& url, const char* flag);
bool is_s3_url(std::string_view text);

// Every "scheme://user:password@host" in `text` as "scheme://***@host": for anything printed or
// stored that may hold a URL (messages, command lines, result files).
std::string redact_userinfo(std::string text);
// The URL without its "user:password@" (an endpoint's: requests are signed with SigV4 instead).
std::string without_userinfo(std::string url);

// Where requests go: --s3-endpoint, else AWS_ENDPOINT_URL (as AWS SDKs read it), else the region's
// AWS endpoint https://s3.REGION.amazonaws.com (virtual-hosted: BUCKET.s3.REGION...). A custom
// endpoint is addressed path-style (ENDPOINT/BUCKET/KEY), as S3-compatible servers need.
struct Endpoint {
  std::string base;  // "http://127.0.0.1:8480", no trailing '/'
  bool virtual_hosted = false;
};
Endpoint resolve_endpoint(const std::string& flag_value, const std::string& env_value, const std::string& region);
std::string object_url(const Endpoint& e, const std::string& bucket, const std::string& key,
                       const std::string& canonical_query);

// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters (A-Z a-z 0-9 - _ . ~) kept,
// everything else %XX with uppercase hex; '/' kept when `keep_slash` (object keys in the path).
std::string uri_encode(std::string_view text, bool keep_slash);

// The query sorted by name (then value), each name=value encoded, an empty value as "name=":
// {{"uploadId","a/b"},{"partNumber","3"}} -> "partNumber=3&uploadId=a%2Fb"; {{"uploads",""}} -> "uploads=".
using Query = std::vector<std::pair<std::string, std::string>>;
std::string canonical_query(Query query);

using Md5 = std::array<unsigned char, 16>;
Md5 md5_of(const void* data, std::size_t bytes);
std::string hex(const unsigned char* data, std::size_t bytes);
std::string sha256_hex(const void* data, std::size_t bytes);
std::string base64(const unsigned char* data, std::size_t bytes);

// The ETag S3 gives a multipart object: md5 of the parts' binary md5s, "-" and the part count.
std::string multipart_etag(const std::vector<Md5>& part_md5s);
// An ETag header without its quotes.
std::string unquote(std::string etag);

struct PartDone {
  int number = 0;
  std::string etag;  // quoted, as the server returned it
};
std::string complete_xml(const std::vector<PartDone>& parts);

struct ErrorXml {
  std::string code;     // "NoSuchBucket", "SignatureDoesNotMatch", ...
  std::string message;  // the server's text (never echoes a secret: S3 does not send one back)
};
ErrorXml parse_error(const std::string& body);
std::optional<std::string> parse_upload_id(const std::string& body);

struct Listing {
  std::vector<std::string> keys;
  std::vector<std::string> prefixes;  // CommonPrefixes with the delimiter
  std::string next_token;             // "" when not truncated
  bool truncated = false;             // IsTruncated: more pages follow (a token must come with it)
};
Listing parse_listing(const std::string& body);

}  // namespace ccbench::checkpoint::s3
