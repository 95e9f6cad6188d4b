#include "sweep/per_rank.hpp"

#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "core/stats.hpp"

namespace ccbench::per_rank {

std::string local_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

std::string encode(const RankTiming& t) {
  std::ostringstream out;
  out.precision(17);
  out << t.host << '\n' << t.samples_us.size();
  for (std::size_t i = 0; i < t.samples_us.size(); ++i)
    out << ' ' << t.samples_us[i] << ' ' << (i < t.barrier_wait_us.size() ? t.barrier_wait_us[i] : 0.0);
  return out.str();
}

RankTiming decode(const std::string& text) {
  RankTiming t;
  std::istringstream in(text);
  std::size_t n = 0;
  if (!std::getline(in, t.host) || !(in >> n) || n > 100000000)
    throw std::invalid_argument("per-rank timing: bad header");
  t.samples_us.resize(n);
  t.barrier_wait_us.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    if (!(in >> t.samples_us[i] >> t.barrier_wait_us[i])) throw std::invalid_argument("per-rank timing: short");
  return t;
}

nlohmann::json summarize(const std::vector<RankTiming>& ranks) {
  nlohmann::json hosts = nlohmann::json::array(), medians = nlohmann::json::array();
  std::vector<int> last(ranks.size(), 0);
  std::size_t samples = ranks.empty() ? 0 : ranks.front().barrier_wait_us.size();
  for (const auto& r : ranks) samples = std::min(samples, r.barrier_wait_us.size());
  for (std::size_t i = 0; i < samples; ++i) {
    std::size_t slowest = 0;
    for (std::size_t r = 1; r < ranks.size(); ++r)
      if (ranks[r].barrier_wait_us[i] < ranks[slowest].barrier_wait_us[i]) slowest = r;
    ++last[slowest];
  }
  for (const auto& r : ranks) {
    hosts.push_back(r.host);
    std::vector<double> sorted = r.samples_us;
    std::ranges::sort(sorted);
    medians.push_back(sorted.empty() ? nlohmann::json() : nlohmann::json(stats::median_sorted(sorted)));
  }
  return {{"hosts", hosts}, {"median_us", medians}, {"last_arrivals", last}};
}

}  // namespace ccbench::per_rank
