#include "launch/outcome.hpp"

#include <fstream>
#include <sstream>

namespace ccbench::launch {
namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::string_view name(Failure f) {
  switch (f) {
    case Failure::none:
      return "none";
    case Failure::unreachable:
      return "unreachable";
    case Failure::hang:
      return "hang";
    case Failure::crash:
      return "crash";
    case Failure::failed:
      return "failed";
  }
  return "?";
}

Failure classify(const JobEnd& end, std::string_view log) {
  if (end.killed_at_deadline) return Failure::hang;
  if (unreachable_line(log)) return Failure::unreachable;
  if (end.signal != 0) return Failure::crash;
  return end.exit_status == 0 && end.started ? Failure::none : Failure::failed;
}

std::optional<std::string> unreachable_line(std::string_view log) {
  static const char* const patterns[] = {
      "ORTE was unable to reliably start one or more daemons",
      "is not an emulated host",
      "Could not resolve hostname",
      "ssh: connect to host",
      "Host key verification failed",
      "Permission denied (publickey",
      "No route to host",
      "Invalid node name specified",
      "Unable to resolve",
      "srun: error: Nodes required for job are DOWN",
  };
  std::stringstream lines{std::string(log)};
  std::string line;
  std::optional<std::string> first;
  while (std::getline(lines, line)) {
    for (const char* p : patterns) {
      if (line.find(p) == std::string::npos) continue;
      const std::string l = trim(line);
      if (!first || l.find("host") != std::string::npos) first = l;
      break;
    }
  }
  return first;
}

std::string error_line(std::string_view log) {
  static const char* const causes[] = {"timeout:",    "peer failed",        "is stopped",      "Unable to connect",
                                       "unreachable", "Connection refused", "exited on signal"};
  static const char* const errors[] = {"error", "ERROR", "FATAL", "ccbench", "exited", "abort"};
  std::stringstream lines{std::string(log)};
  std::string line, last;
  while (std::getline(lines, line)) {
    const std::string l = trim(line);
    if (l.empty() || l[0] == '#' || l.find("setpgid") != std::string::npos) continue;
    for (const char* c : causes)
      if (l.find(c) != std::string::npos) return l;
    for (const char* e : errors)
      if (l.find(e) != std::string::npos) last = l;
  }
  return last;
}

Collected collect(const std::filesystem::path& log_file, const std::filesystem::path& result_file) {
  Collected c;
  {
    std::ifstream in(log_file);
    std::stringstream s;
    s << in.rdbuf();
    c.log = s.str();
  }
  if (std::filesystem::exists(result_file)) {
    try {
      c.result = load_result_file(result_file);
    } catch (const std::exception& e) {
      c.load_error = e.what();
    }
  }
  return c;
}

}  // namespace ccbench::launch
