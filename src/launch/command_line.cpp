#include "launch/command_line.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace ccbench::launch {

std::string_view name(Launcher l) { return l == Launcher::mpirun ? "mpirun" : "srun"; }

std::optional<Launcher> parse_launcher(std::string_view text) {
  if (text == "mpirun") return Launcher::mpirun;
  if (text == "srun") return Launcher::srun;
  return std::nullopt;
}

std::vector<std::string> launcher_argv(const LaunchSpec& spec) {
  std::vector<std::string> a = spec.wrapper;
  const std::size_t ranks = spec.hosts.size() * static_cast<std::size_t>(spec.ranks_per_host);
  if (spec.launcher == Launcher::mpirun) {
    std::string hosts;
    for (const auto& h : spec.hosts) hosts += fmt::format("{}{}:{}", hosts.empty() ? "" : ",", h, spec.ranks_per_host);
    a.insert(a.end(), {"mpirun", "-np", std::to_string(ranks), "--host", hosts});
  } else {
    std::string nodes;
    for (const auto& h : spec.hosts) nodes += (nodes.empty() ? "" : ",") + h;
    a.insert(a.end(), {"srun", fmt::format("--nodes={}", spec.hosts.size()), fmt::format("--ntasks={}", ranks),
                       fmt::format("--ntasks-per-node={}", spec.ranks_per_host), "--nodelist=" + nodes});
  }
  a.insert(a.end(), spec.launcher_args.begin(), spec.launcher_args.end());
  a.insert(a.end(), spec.program.begin(), spec.program.end());
  return a;
}

std::string hostfile_text(const std::vector<std::string>& hosts, int slots, std::string_view header) {
  std::string text = header.empty() ? "" : fmt::format("# {}\n", header);
  for (const auto& h : hosts) text += fmt::format("{} slots={}\n", h, slots);
  return text;
}

std::string shell_quote(std::string_view word) {
  constexpr std::string_view safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+";
  if (!word.empty() && word.find_first_not_of(safe) == std::string_view::npos) return std::string(word);
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) {
    if (!line.empty()) line += ' ';
    line += shell_quote(a);
  }
  return line;
}

bool on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((std::filesystem::path(dir) / program).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace ccbench::launch
