#include "launch/hosts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"

namespace ccbench::launch {
namespace {

constexpr unsigned long long kMaxHosts = 100000;  // a node list that expands further is an error
constexpr std::ptrdiff_t kMaxGroups = 16;         // bracket groups in one name (Slurm's names have 1-3)

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool valid_host(std::string_view h) {
  if (h.empty()) return false;
  for (char c : h)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return false;
  return true;
}

// Split on commas that are not inside brackets.
std::vector<std::string_view> split_top(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']') --depth;
    if (s[i] == ',' && depth == 0) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(s.substr(start));
  return parts;
}

bool parse_uint(std::string_view s, unsigned long long& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// One name of a hostlist expression, its bracket groups expanded (the first outermost). `whole`
// is the item for messages; `before` the hosts already expanded (the limit counts them).
std::vector<std::string> expand_name(std::string_view part, std::string_view whole, std::string_view what,
                                     std::size_t before) {
  const auto open = part.find('[');
  if (open == std::string_view::npos) {
    if (part.find(']') != std::string_view::npos)
      throw UsageError(fmt::format("{}: '{}': unbalanced ']'", what, whole));
    return {std::string(part)};
  }
  const auto close = part.find(']', open);
  if (close == std::string_view::npos || part.find('[', open + 1) < close)
    throw UsageError(fmt::format("{}: '{}': unbalanced '['", what, whole));
  const std::string_view prefix = part.substr(0, open);
  if (prefix.find(']') != std::string_view::npos)
    throw UsageError(fmt::format("{}: '{}': unbalanced ']'", what, whole));
  const std::vector<std::string> suffixes = expand_name(part.substr(close + 1), whole, what, 0);
  const std::string_view ranges = part.substr(open + 1, close - open - 1);
  std::vector<std::string> names;
  for (const std::string_view range : split_commas(ranges)) {
    const auto dash = range.find('-');
    const std::string_view lo_text = range.substr(0, dash);
    const std::string_view hi_text = dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    unsigned long long lo = 0, hi = 0;
    if (!parse_uint(lo_text, lo) || !parse_uint(hi_text, hi) || hi < lo)
      throw UsageError(fmt::format("{}: '{}': '{}' is not N or N-M with N <= M", what, whole, range));
    // Counted before any name is made: "n[0-18446744073709551615]" must not be expanded to find out.
    const unsigned long long room = kMaxHosts - std::min<unsigned long long>(kMaxHosts, before + names.size());
    if (hi - lo >= kMaxHosts || (hi - lo + 1) * suffixes.size() > room)
      throw UsageError(fmt::format("{}: '{}': more than {} hosts", what, whole, kMaxHosts));
    const std::size_t width = lo_text.size();
    // i == hi ends the loop before ++i: hi may be the largest value (no wrap-around).
    for (unsigned long long i = lo;; ++i) {
      const std::string head = fmt::format("{}{:0{}}", prefix, i, width);
      for (const std::string& s : suffixes) names.push_back(head + s);
      if (i == hi) break;
    }
  }
  return names;
}

// A host name as a prefix and the number that ends it ("gpu08" -> "gpu", "08", 8).
struct Numbered {
  std::string prefix, digits;
  unsigned long long value = 0;
  bool has_number = false;
};

Numbered split_number(const std::string& host) {
  Numbered n;
  std::size_t begin = host.size();
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(host[begin - 1]))) --begin;
  n.prefix = host.substr(0, begin);
  n.digits = host.substr(begin);
  n.has_number = parse_uint(n.digits, n.value);
  return n;
}

}  // namespace

std::vector<std::string> parse_host_list(std::string_view text, std::string_view what) {
  std::vector<std::string> hosts;
  for (std::string_view part : split_top(text)) {
    part = trim(part);
    if (part.find_first_of("[]") != std::string_view::npos) {
      for (auto& h : expand_slurm_nodelist(part, what)) hosts.push_back(std::move(h));
      continue;
    }
    if (!valid_host(part))
      throw UsageError(fmt::format("{}: '{}' is not a host name (letters, digits, '-', '.', '_')", what, part));
    hosts.emplace_back(part);
  }
  require_unique(hosts, what);
  return hosts;
}

std::vector<std::string> parse_hostfile_text(std::string_view text, std::string_view where) {
  std::vector<std::string> hosts;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string_view l = line;
    if (auto hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
    l = trim(l);
    if (l.empty()) continue;
    std::istringstream words{std::string(l)};
    std::string host, word;
    words >> host;
    if (!valid_host(host)) throw UsageError(fmt::format("{}:{}: '{}' is not a host name", where, number, host));
    while (words >> word) {
      const auto eq = word.find('=');
      const std::string key = word.substr(0, eq);
      unsigned long long value = 0;
      if (eq == std::string::npos || (key != "slots" && key != "max_slots" && key != "max-slots") ||
          !parse_uint(std::string_view(word).substr(eq + 1), value) || value == 0)
        throw UsageError(fmt::format("{}:{}: '{}' is not slots=N or max_slots=N (N >= 1)", where, number, word));
    }
    hosts.push_back(host);
  }
  if (hosts.empty()) throw UsageError(fmt::format("{}: no hosts in the file", where));
  require_unique(hosts, where);
  return hosts;
}

std::vector<std::string> read_hostfile(const std::filesystem::path& path) {
  // A FIFO or a folder is refused on the opened descriptor (core/input_file), never read.
  if (const std::string why = not_regular_file_reason(path); !why.empty())
    throw UsageError(fmt::format("--hostfile {}: {}", path.string(), why));
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--hostfile {}", e.what()));
  }
  return parse_hostfile_text(text, path.string());
}

std::vector<std::string> expand_slurm_nodelist(std::string_view expression, std::string_view what) {
  std::vector<std::string> hosts;
  const std::string_view expr = trim(expression);
  if (expr.empty()) throw UsageError(fmt::format("{}: empty node list", what));
  for (std::string_view part : split_top(expr)) {
    // Each group is one level of expand_name's recursion: a hostile list must not exhaust the stack.
    if (std::count(part.begin(), part.end(), '[') > kMaxGroups)
      throw UsageError(fmt::format("{}: '{}': more than {} bracket groups in one name", what, part, kMaxGroups));
    for (std::string& host : expand_name(part, part, what, hosts.size())) {
      if (!valid_host(host)) throw UsageError(fmt::format("{}: '{}' is not a host name", what, host));
      hosts.push_back(std::move(host));
    }
  }
  require_unique(hosts, what);
  return hosts;
}

std::string compress_hostlist(const std::vector<std::string>& hosts) {
  std::string out;
  std::size_t i = 0;
  while (i < hosts.size()) {
    const Numbered first = split_number(hosts[i]);
    if (!first.has_number) {
      out += (out.empty() ? "" : ",") + hosts[i++];
      continue;
    }
    // The adjacent names with this prefix, as ranges of consecutive numbers of one width.
    std::vector<std::pair<Numbered, Numbered>> ranges{{first, first}};
    for (++i; i < hosts.size(); ++i) {
      const Numbered next = split_number(hosts[i]);
      if (!next.has_number || next.prefix != first.prefix) break;
      auto& [lo, hi] = ranges.back();
      if (hi.value != std::numeric_limits<unsigned long long>::max() && next.value == hi.value + 1 &&
          next.digits == fmt::format("{:0{}}", next.value, lo.digits.size())) {
        hi = next;
      } else {
        ranges.emplace_back(next, next);
      }
    }
    std::string body;
    for (const auto& [lo, hi] : ranges)
      body += (body.empty() ? "" : ",") + (lo.value == hi.value ? lo.digits : lo.digits + "-" + hi.digits);
    const bool single = ranges.size() == 1 && ranges[0].first.value == ranges[0].second.value;
    out += (out.empty() ? "" : ",") + first.prefix + (single ? body : "[" + body + "]");
  }
  return out;
}

void require_unique(const std::vector<std::string>& hosts, std::string_view what) {
  std::set<std::string> seen;
  for (const auto& h : hosts)
    if (!seen.insert(h).second) throw UsageError(fmt::format("{}: host '{}' is listed twice", what, h));
}

}  // namespace ccbench::launch
