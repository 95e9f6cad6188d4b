#include "screen/screen_test.hpp"

#include <fmt/format.h>

#include "core/host_load_note.hpp"
#include "launch/outcome.hpp"

namespace ccbench::screen {

namespace fs = std::filesystem;
using namespace ccbench::launch;

std::string test_stem(const TestSpec& t, const std::vector<std::string>& names) {
  std::string stem = fmt::format("{:03d}-{}", t.id, name(t.stage));
  for (int h : t.hosts) stem += "-" + names[static_cast<std::size_t>(h)];
  // A file name has at most 255 bytes, and the result file's atomic write adds a suffix: long host
  // names give way to their indices in the host list (the id keeps the stem unique).
  if (stem.size() > 100) {
    stem = fmt::format("{:03d}-{}", t.id, name(t.stage));
    for (int h : t.hosts) stem += fmt::format("-host{}", h);
  }
  return stem;
}

std::vector<std::string> screen_test_argv(const ScreenTestConfig& c, const std::vector<std::string>& hosts,
                                          const fs::path& result_file, const std::string& label) {
  LaunchSpec spec;
  spec.launcher = c.launcher;
  spec.hosts = hosts;
  spec.ranks_per_host = c.ranks_per_host;
  spec.launcher_args = c.launcher_args;
  spec.program = {c.ccbench,
                  "run",
                  "--backend",
                  c.backend,
                  "--ops",
                  c.op,
                  "-b",
                  std::to_string(c.small_bytes),
                  "-e",
                  std::to_string(c.large_bytes),
                  "-i",
                  std::to_string(c.large_bytes - c.small_bytes),
                  "--in-place",
                  "no",
                  "-w",
                  std::to_string(c.warmup),
                  "-n",
                  c.iters,
                  "--max-time-per-size",
                  fmt::format("{}", c.max_time_per_size_s),
                  "-T",
                  fmt::format("{}", c.timeout_s),
                  "--progress",
                  "never",
                  "--label",
                  label,
                  "-J",
                  result_file.string()};
  if (!c.path.empty()) spec.program.insert(spec.program.end(), {"--path", c.path});
  if (c.per_rank) spec.program.push_back("--per-rank");
  spec.program.insert(spec.program.end(), c.run_args.begin(), c.run_args.end());
  return launcher_argv(spec);
}

ScreenTest make_screen_test(const ScreenTestConfig& c, const TestSpec& spec, const std::vector<std::string>& names,
                            const fs::path& dir) {
  ScreenTest t;
  t.spec = spec;
  std::vector<std::string> hosts;
  for (int h : spec.hosts) hosts.push_back(names[static_cast<std::size_t>(h)]);
  const std::string stem = test_stem(spec, names);
  t.result_file = dir / (stem + ".json");
  t.job.log_file = dir / (stem + ".log");
  t.job.argv = screen_test_argv(c, hosts, t.result_file, "screen-" + stem);
  return t;
}

namespace {

// The large size's rank that arrived last most often, from the row's per_rank (null when none).
nlohmann::json straggler_of(const ResultFile& file, const ScreenTestConfig& c) {
  for (const auto& row : file.results) {
    if (row.op != c.op || row.in_place || row.bytes != c.large_bytes || !row.extra.contains("per_rank")) continue;
    const auto& pr = row.extra["per_rank"];
    try {
      const auto& last = pr.at("last_arrivals");
      std::size_t worst = 0;
      int total = 0;
      for (std::size_t r = 0; r < last.size(); ++r) {
        total += last[r].get<int>();
        if (last[r].get<int>() > last[worst].get<int>()) worst = r;
      }
      if (last.size() > 1 && total > 0)
        return {{"rank", worst},
                {"host", pr.at("hosts").at(worst)},
                {"last_arrivals", last[worst]},
                {"samples", total},
                {"median_us", pr.at("median_us").at(worst)}};
    } catch (const nlohmann::json::exception&) {
      // a row from another tool: no straggler to name
    }
    break;
  }
  return nullptr;
}

}  // namespace

void judge_screen_test(ScreenTest& t, const ScreenTestConfig& c) {
  Measurement& m = t.measurement;
  if (!t.end.started) {
    m.outcome = Outcome::failed;
    m.reason = fmt::format("could not start the launcher: {}", t.end.start_error);
    return;
  }
  const Collected got = collect(t.job.log_file, t.result_file);
  const std::optional<ResultFile>& file = got.result;
  const Failure failure = classify(t.end, got.log);
  const std::string exit_text = t.end.signal != 0 ? fmt::format("launcher ended by signal {}", t.end.signal)
                                                  : fmt::format("launcher exit {}", t.end.exit_status);
  if (failure == Failure::hang) {
    m.outcome = Outcome::failed;
    m.reason = fmt::format(
        "no end within {:.0f} s (the test deadline): killed by the screen; a stopped rank or a "
        "launcher that cannot end",
        c.test_timeout_s);
    if (file && file->run.error) {
      m.reason += "; the result file says: " + *file->run.error;
    } else if (const std::string line = error_line(got.log); !line.empty()) {
      m.reason += "; the log says: " + line;
    }
    return;
  }
  if (t.end.exit_status == 0 && file && file->run.status == "complete") {
    // The small size's median time and the large size's busbw (median over trials).
    std::vector<double> small_us, large_gbps;
    for (const auto& row : file->results) {
      if (row.op != c.op || row.in_place) continue;
      if (row.bytes == c.small_bytes) small_us.push_back(row.time_us.median);
      if (row.bytes == c.large_bytes && row.ranks > 1) large_gbps.push_back(row.busbw_gbps);
    }
    if (small_us.empty()) {
      m.outcome = Outcome::failed;
      m.reason = fmt::format("the result file has no {} row of {} bytes", c.op, c.small_bytes);
      return;
    }
    t.straggler = straggler_of(*file, c);
    // The run's own reading of its host (rank 0's): busy, and the test measured the host, not the link.
    m.host_busy = busy_host_note(file->system);
    // One rank alone measures no transfer (a local copy): only that it ran is judged.
    if (t.spec.hosts.size() * static_cast<std::size_t>(c.ranks_per_host) < 2) return;
    m.latency_us = median_of(small_us);
    if (!large_gbps.empty()) m.busbw_gbps = median_of(large_gbps);
    return;
  }
  if (!file) {
    if (failure == Failure::unreachable) {
      m.outcome = Outcome::unreachable;
      m.reason = *unreachable_line(got.log);
      return;
    }
    m.retry = true;  // no rank started and no deadline passed: the launcher's own failure
  }
  m.outcome = Outcome::failed;
  if (file && file->run.error) {
    m.reason = fmt::format("{} ({}; result file {}, exit_code {})", *file->run.error, exit_text, file->run.status,
                           file->run.exit_code);
  } else {
    std::string line = error_line(got.log);
    if (line.empty()) line = got.load_error.empty() ? "no result file" : got.load_error;
    m.reason = fmt::format("{} ({})", line, exit_text);
  }
}

}  // namespace ccbench::screen
