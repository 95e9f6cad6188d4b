// The flags of `ccbench run` that other commands take with the same meaning: `screen` passes them
// to every test's `ccbench run`, and congestion, fabric and checkpoint share the sampling ones.
// Each flag's definition (names, bound type) and check live here once, so a value run takes the
// others take, and a value run refuses they refuse with run's words (before any test starts).
// No MPI: its own library, which `ccbench screen` (never loading MPI) links.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ccbench {

// The largest -T/--timeout: about 11.6 days. The watchdog's deadline is a steady-clock count of
// nanoseconds (int64, ~292 years); the cap keeps every accepted value far from overflow.
inline constexpr double kMaxTimeoutS = 1e6;

// -n/--iters COUNT|auto. parse: a count >= 1, or nullopt for auto.
CLI::Option* add_iters_flag(CLI::App& app, std::string& text, std::string_view help);
std::optional<int> parse_iters_flag(const std::string& text);

// -w/--warmup N (an int; CLI11 refuses other text). check: N >= 0.
CLI::Option* add_warmup_flag(CLI::App& app, int& warmup, std::string_view help);
void check_warmup_flag(int warmup);

// -T/--timeout SECONDS: finite, 0 (no watchdog) to kMaxTimeoutS.
CLI::Option* add_timeout_flag(CLI::App& app, std::string& text, std::string_view help);
double parse_timeout_flag(const std::string& text);

// --max-time-per-size SECONDS: finite and above 0.
CLI::Option* add_max_time_per_size_flag(CLI::App& app, std::string& text, std::string_view help);
double parse_max_time_per_size_flag(const std::string& text);

// --backend NAME and --path PATH (the NCCL backend's): the names of core/types' tables, checked
// by backend_flag and nccl_path_flag there (the registry and the NCCL backend use the same).
CLI::Option* add_backend_flag(CLI::App& app, std::string& backend, std::string_view help);
CLI::Option* add_nccl_path_flag(CLI::App& app, std::string& path, std::string_view help);

}  // namespace ccbench
