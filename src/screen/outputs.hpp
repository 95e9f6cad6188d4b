// What the screen writes out from its verdicts (docs/screen.md, "Outputs"): the sentence for a
// metric not judged, and which hosts go to the healthy hostfile and which to the --exclude list.
// Pure code, so the rules are unit-tested in one process.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "screen/search.hpp"

namespace ccbench::screen {

// --unjudged: where a host that is neither shown healthy nor blamed goes.
//   exclude  (default) kept out of the healthy hostfile, on the --exclude list
//   include  in the healthy hostfile, off the --exclude list (the user takes the risk)
enum class UnjudgedHosts { exclude, include };

std::optional<UnjudgedHosts> parse_unjudged_hosts(std::string_view text);
std::string_view name(UnjudgedHosts treatment);

struct HostLists {
  std::vector<std::string> healthy;   // for --healthy-out
  std::vector<std::string> excluded;  // for --exclude-out
};

// names[i] is hosts[i]'s name; the lists keep the screen's host order.
HostLists host_lists(const std::vector<HostResult>& hosts, const std::vector<std::string>& names,
                     UnjudgedHosts treatment);

// "busbw not judged: noise +-8% over 4 test(s), margin 20%", or for tests bound by a busy host
// "busbw not judged: host busy in 2 test(s) (0.0121 GB/s measured; the last: other processes
// used 63% of the ranks' 2 cores (cc1plus 61%); steal 0%; load average 7.9 -> 8.4)".
// margin_pct: the metric's margin in percent (--tolerance or --latency-tolerance x 100).
std::string not_judged_text(const Evidence& e, double margin_pct);

}  // namespace ccbench::screen
