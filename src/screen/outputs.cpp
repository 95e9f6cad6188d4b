#include "screen/outputs.hpp"

#include <fmt/format.h>

namespace ccbench::screen {

std::optional<UnjudgedHosts> parse_unjudged_hosts(std::string_view text) {
  if (text == "exclude") return UnjudgedHosts::exclude;
  if (text == "include") return UnjudgedHosts::include;
  return std::nullopt;
}

std::string_view name(UnjudgedHosts treatment) { return treatment == UnjudgedHosts::include ? "include" : "exclude"; }

HostLists host_lists(const std::vector<HostResult>& hosts, const std::vector<std::string>& names,
                     UnjudgedHosts treatment) {
  HostLists lists;
  for (std::size_t h = 0; h < hosts.size() && h < names.size(); ++h) {
    const Verdict v = hosts[h].verdict;
    const bool healthy = v == Verdict::healthy || (v == Verdict::unjudged && treatment == UnjudgedHosts::include);
    (healthy ? lists.healthy : lists.excluded).push_back(names[h]);
  }
  return lists;
}

std::string not_judged_text(const Evidence& e, double margin_pct) {
  std::string text = fmt::format("{}{} not judged: ", e.stage == Stage::solo ? "alone " : "",
                                 e.metric == Metric::busbw_gbps ? "busbw" : "latency");
  // The run's note reads "host busy: other processes used ..."; the sentence already says "host busy".
  std::string note = e.host_busy;
  if (note.rfind("host busy: ", 0) == 0) note = note.substr(11);
  if (e.host_busy_tests > 0 && e.tests == 0) {
    return text + fmt::format("host busy in {} test(s) ({:.4g} {} measured; the last: {})", e.host_busy_tests,
                              e.measured, e.metric == Metric::busbw_gbps ? "GB/s" : "us", note);
  }
  if (e.host_in_every_test) {
    text += "one host was in every test that counted (the others ran on a busy host): the fleet's level was its own";
  } else if (e.hosts_above_level > 0) {
    text += fmt::format("{} host(s) beat the fleet's level by more than the margin: it came from slow tests",
                        e.hosts_above_level);
  } else {
    text += e.noise
                ? fmt::format("noise +-{:.0f}% over {} test(s), margin {:.0f}%", 100.0 * *e.noise, e.tests, margin_pct)
                : std::string("no test beside a host shown healthy");
  }
  if (e.host_busy_tests > 0)
    text += fmt::format("; host busy in {} more test(s), not counted (the last: {})", e.host_busy_tests, note);
  return text;
}

}  // namespace ccbench::screen
