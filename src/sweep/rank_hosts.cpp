#include "sweep/rank_hosts.hpp"

#include <unistd.h>

namespace ccbench {

std::vector<std::string> every_rank_hostname(ControlChannel& channel) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string joined;
  for (const auto& h : channel.gather_to_root(host)) joined += h + "\n";
  joined = channel.broadcast(joined);
  std::vector<std::string> hostnames;
  for (std::size_t start = 0; start < joined.size();) {
    const auto nl = joined.find('\n', start);
    hostnames.push_back(joined.substr(start, nl - start));
    start = nl + 1;
  }
  return hostnames;
}

}  // namespace ccbench
