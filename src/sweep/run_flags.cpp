#include "sweep/run_flags.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace ccbench {

CLI::Option* add_iters_flag(CLI::App& app, std::string& text, std::string_view help) {
  return app.add_option("-n,--iters", text, std::string(help));
}

std::optional<int> parse_iters_flag(const std::string& text) {
  if (text == "auto") return std::nullopt;
  try {
    std::size_t used = 0;
    const int n = std::stoi(text, &used);
    if (used != text.size() || n < 1) throw std::invalid_argument(text);
    return n;
  } catch (const std::exception&) {
    throw UsageError("-n/--iters: '" + text + "' is not a positive count or 'auto'");
  }
}

CLI::Option* add_warmup_flag(CLI::App& app, int& warmup, std::string_view help) {
  return app.add_option("-w,--warmup", warmup, std::string(help));
}

void check_warmup_flag(int warmup) {
  if (warmup < 0) throw UsageError("-w/--warmup must not be negative");
}

CLI::Option* add_timeout_flag(CLI::App& app, std::string& text, std::string_view help) {
  return app.add_option("-T,--timeout", text, std::string(help));
}

double parse_timeout_flag(const std::string& text) {
  const double timeout = parse_finite(text, "-T/--timeout");
  if (timeout < 0 || timeout > kMaxTimeoutS) {
    throw UsageError(
        fmt::format("-T/--timeout: {} is out of range (0 = no watchdog, up to {:.0f} seconds)", text, kMaxTimeoutS));
  }
  return timeout;
}

CLI::Option* add_max_time_per_size_flag(CLI::App& app, std::string& text, std::string_view help) {
  return app.add_option("--max-time-per-size", text, std::string(help));
}

double parse_max_time_per_size_flag(const std::string& text) {
  const double seconds = parse_finite(text, "--max-time-per-size");
  if (!(seconds > 0)) throw UsageError("--max-time-per-size must be positive");
  return seconds;
}

CLI::Option* add_backend_flag(CLI::App& app, std::string& backend, std::string_view help) {
  return app.add_option("--backend", backend, std::string(help));
}

CLI::Option* add_nccl_path_flag(CLI::App& app, std::string& path, std::string_view help) {
  return app.add_option("--path", path, std::string(help));
}

}  // namespace ccbench
