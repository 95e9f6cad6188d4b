#include "checkpoint/step_dirs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace ccbench::checkpoint {
namespace {

namespace fs = std::filesystem;

// N of "step-N" or ".step-N.partial-...", or -1.
int step_of(const std::string& name) {
  std::string rest;
  if (name.rfind("step-", 0) == 0)
    rest = name.substr(5);
  else if (name.rfind(".step-", 0) == 0)
    rest = name.substr(6, name.find('.', 6) - 6);
  else
    return -1;
  if (rest.empty() || rest.size() > 9 || !std::all_of(rest.begin(), rest.end(), ::isdigit)) return -1;
  return std::stoi(rest);
}

}  // namespace

std::string step_name(int step) { return fmt::format("step-{:06d}", step); }
std::string partial_name(int step, const std::string& run) { return fmt::format(".step-{:06d}.partial-{}", step, run); }
std::string shard_name(int writer) { return fmt::format("rank-{:05d}.shard", writer); }

int last_step(const std::vector<std::string>& names) {
  int last = 0;
  for (const auto& n : names) last = std::max(last, step_of(n));
  return last;
}

int last_step(const std::string& target) {
  int last = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(target, ec)) last = std::max(last, step_of(e.path().filename().string()));
  return last;
}

std::vector<std::string> committed_steps(const std::string& target) {
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(target, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step-", 0) != 0 || step_of(name) < 0) continue;
    if (!fs::exists(e.path() / kManifestName, ec)) continue;
    found.emplace_back(step_of(name), e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [n, path] : found) out.push_back(std::move(path));
  return out;
}

std::vector<std::string> steps_to_remove(const std::vector<std::string>& committed, int keep) {
  if (keep <= 0 || committed.size() <= static_cast<std::size_t>(keep)) return {};
  return {committed.begin(), committed.end() - keep};
}

}  // namespace ccbench::checkpoint
