#include "screen/screen_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <optional>

#include "core/result.hpp"

namespace ccbench::screen {
namespace {

namespace fs = std::filesystem;

nlohmann::json json_or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string relative_to(const fs::path& p, const fs::path& dir) { return fs::relative(p, dir).generic_string(); }

}  // namespace

std::string screen_table_text(const Search& search, const ScreenConfig& o, double elapsed_s) {
  std::string text;
  const int n = static_cast<int>(o.hosts.size());
  auto evidence_of = [&](const HostResult& r, Stage stage, Metric metric) -> const Evidence* {
    for (const Evidence& e : r.evidence)
      if (e.stage == stage && e.metric == metric) return &e;
    return nullptr;
  };

  text += fmt::format("# ccbench screen: {} hosts, {} tests in {} rounds, {:.1f} s\n", n, search.tests().size(),
                      search.rounds(), elapsed_s);
  const auto margin_pct = [&](Metric metric) {
    return 100.0 * (metric == Metric::busbw_gbps ? o.criteria.busbw_tolerance : o.criteria.latency_tolerance);
  };
  for (const Floor& f : search.floors()) {
    const bool bw = f.metric == Metric::busbw_gbps;
    const char* where = f.stage == Stage::solo ? "alone:" : "network:";
    const char* what = bw ? "busbw floor" : "latency ceiling";
    const char* unit = bw ? "GB/s" : "us";
    std::string line = fmt::format("# {} {} {}", where, what, f.value ? fmt::format("{:.4g} {}", *f.value, unit) : "-");
    if (f.fleet_median)
      line += fmt::format(" ({:.0f}% {} the fleet's {:.4g}: {} hosts, {} reference tests, noise {:.1f}% per test)",
                          margin_pct(f.metric), bw ? "below" : "above", *f.fleet_median, f.hosts, f.reference_tests,
                          100.0 * f.noise.value_or(0));
    if (f.absolute) line += fmt::format(", absolute {:.4g}", *f.absolute);
    if (f.host_in_every_test)
      line += fmt::format("; not judged: {} was in every test that counted (the others ran on a busy host)",
                          o.hosts[static_cast<std::size_t>(*f.host_in_every_test)]);
    else if (f.hosts_above_level > 0)
      line += fmt::format(
          "; not judged: {} host(s) beat the fleet's level by more than the margin (it came from slow "
          "tests)",
          f.hosts_above_level);
    else if (!f.judged && f.fleet_median)
      line += fmt::format("; not judged: noise too large to tell a host {:.0f}% off from a healthy one in {} tests",
                          margin_pct(f.metric), o.criteria.max_tests);
    text += line + "\n";
  }
  text += fmt::format("{:<16} {:<12} {:<24} {:<24} {:<12} {}\n", "host", "verdict", "busbw GB/s (floor)",
                      "latency us (ceiling)", "tests", "reason");
  for (int h = 0; h < n; ++h) {
    const HostResult& r = search.hosts()[static_cast<std::size_t>(h)];
    auto cell = [&](Metric metric) {
      const Evidence* e = evidence_of(r, Stage::ring, metric);
      if (!e) e = evidence_of(r, Stage::solo, metric);
      if (!e) return std::string("-");
      const std::string mark = e->beyond ? (metric == Metric::busbw_gbps ? " <" : " >") : (e->judged ? "" : " ?");
      return fmt::format("{:.4g}{} ({})", e->measured, mark, e->floor ? fmt::format("{:.4g}", *e->floor) : "-");
    };
    std::string reason = r.reason;
    for (const Evidence& e : r.evidence) {
      if (e.judged) continue;
      if (!reason.empty()) reason += "; ";
      reason += not_judged_text(e, margin_pct(e.metric));
    }
    std::vector<std::string> ids;
    for (int id : r.implicating_tests) ids.push_back(std::to_string(id));
    text += fmt::format("{:<16} {:<12} {:<24} {:<24} {:<12} {}\n", o.hosts[static_cast<std::size_t>(h)],
                        name(r.verdict), cell(Metric::busbw_gbps), cell(Metric::latency_us),
                        ids.empty() ? "-" : fmt::format("{}", fmt::join(ids, ",")), reason);
  }
  return text;
}

nlohmann::json screen_json(const Search& search, const ScreenConfig& o, const std::vector<ScreenTest>& done,
                           const ScreenProvenance& provenance, int exit) {
  const int n = static_cast<int>(o.hosts.size());
  std::map<Verdict, int> counts;
  for (const HostResult& r : search.hosts()) ++counts[r.verdict];
  const fs::path out_abs = fs::absolute(o.out);
  nlohmann::json j;
  j["screen_version"] = kScreenVersion;
  j["tool"] = {{"name", "ccbench"}, {"version", provenance.tool_version}};
  j["started_at"] = provenance.started_at;
  j["finished_at"] = utc_timestamp_now();
  j["elapsed_s"] = provenance.elapsed_s;
  j["command"] = provenance.command;
  j["config"] = {{"hosts_source", o.hosts_source},
                 {"ranks_per_host", o.ranks_per_host},
                 {"backend", o.backend},
                 {"path", o.path.empty() ? nlohmann::json() : nlohmann::json(o.path)},
                 {"launcher", o.launcher_name},
                 {"launcher_args", o.launcher_args},
                 {"op", o.op},
                 {"small_bytes", o.small_bytes},
                 {"large_bytes", o.large_bytes},
                 {"timeout_s", o.timeout_s},
                 {"test_timeout_s", o.test_timeout_s},
                 {"concurrency", o.concurrency},
                 {"busbw_tolerance", o.criteria.busbw_tolerance},
                 {"latency_tolerance", o.criteria.latency_tolerance},
                 {"alpha", o.criteria.alpha},
                 {"min_tests", o.criteria.min_tests},
                 {"max_tests", o.criteria.max_tests},
                 {"judge", o.judge},
                 {"expect_busbw_gbps", json_or_null(o.criteria.expect_busbw_gbps)},
                 {"expect_latency_us", json_or_null(o.criteria.expect_latency_us)},
                 {"unjudged", o.unjudged_name}};
  j["summary"] = {{"hosts", n},
                  {"tests", search.tests().size()},
                  {"rounds", search.rounds()},
                  {"healthy", counts[Verdict::healthy]},
                  {"slow", counts[Verdict::slow]},
                  {"failed", counts[Verdict::failed]},
                  {"unreachable", counts[Verdict::unreachable]},
                  {"unjudged", counts[Verdict::unjudged]},
                  {"exit_code", exit}};
  j["floors"] = nlohmann::json::array();
  for (const Floor& f : search.floors()) {
    j["floors"].push_back(
        {{"stage", f.stage == Stage::solo ? "solo" : "network"},
         {"metric", name(f.metric)},
         {"hosts", f.hosts},
         {"reference_tests", f.reference_tests},
         {"fleet_median", json_or_null(f.fleet_median)},
         {"noise", json_or_null(f.noise)},
         {"noise_df", json_or_null(f.noise_df)},
         {"relative", json_or_null(f.relative)},
         {"absolute", json_or_null(f.absolute)},
         {"value", json_or_null(f.value)},
         {"judged", f.judged},
         {"hosts_above_level", f.hosts_above_level},
         {"host_in_every_test", f.host_in_every_test
                                    ? nlohmann::json(o.hosts[static_cast<std::size_t>(*f.host_in_every_test)])
                                    : nlohmann::json()}});
  }
  j["hosts"] = nlohmann::json::array();
  for (int h = 0; h < n; ++h) {
    const HostResult& r = search.hosts()[static_cast<std::size_t>(h)];
    nlohmann::json ev = nlohmann::json::array();
    nlohmann::json not_judged = nlohmann::json::array();
    std::string reason = r.reason;
    for (const Evidence& e : r.evidence) {
      const nlohmann::json busy = e.host_busy.empty() ? nlohmann::json() : nlohmann::json(e.host_busy);
      ev.push_back({{"stage", e.stage == Stage::solo ? "solo" : "network"},
                    {"metric", name(e.metric)},
                    {"measured", e.measured},
                    {"floor", json_or_null(e.floor)},
                    {"host_busy_tests", e.host_busy_tests},
                    {"host_busy", busy},
                    {"tests", e.tests},
                    {"ratio", json_or_null(e.ratio)},
                    {"noise", json_or_null(e.noise)},
                    {"p_value", json_or_null(e.p_value)},
                    {"beyond", e.beyond},
                    {"judged", e.judged}});
      if (e.judged) continue;
      not_judged.push_back({{"stage", e.stage == Stage::solo ? "solo" : "network"},
                            {"metric", name(e.metric)},
                            {"tests", e.tests},
                            {"noise", json_or_null(e.noise)},
                            {"host_busy_tests", e.host_busy_tests},
                            {"host_busy", busy}});
      if (r.verdict != Verdict::unjudged) continue;
      const double margin = e.metric == Metric::busbw_gbps ? o.criteria.busbw_tolerance : o.criteria.latency_tolerance;
      reason += (reason.empty() ? "" : "; ") + not_judged_text(e, 100.0 * margin);
    }
    j["hosts"].push_back({{"name", o.hosts[static_cast<std::size_t>(h)]},
                          {"verdict", name(r.verdict)},
                          {"reason", reason.empty() ? nlohmann::json() : nlohmann::json(reason)},
                          {"evidence", ev},
                          {"not_judged", not_judged},
                          {"implicating_tests", r.implicating_tests}});
  }
  j["tests"] = nlohmann::json::array();
  for (const ScreenTest& t : done) {
    std::vector<std::string> names;
    for (int h : t.spec.hosts) names.push_back(o.hosts[static_cast<std::size_t>(h)]);
    j["tests"].push_back(
        {{"id", t.spec.id},
         {"round", t.spec.round},
         {"stage", name(t.spec.stage)},
         {"hosts", names},
         {"outcome", name(t.measurement.outcome)},
         {"reason", t.measurement.reason.empty() ? nlohmann::json() : nlohmann::json(t.measurement.reason)},
         {"latency_us", json_or_null(t.measurement.latency_us)},
         {"busbw_gbps", json_or_null(t.measurement.busbw_gbps)},
         {"host_busy", t.measurement.host_busy ? nlohmann::json(*t.measurement.host_busy) : nlohmann::json()},
         {"elapsed_s", t.end.elapsed_s},
         {"launcher_exit", t.end.exit_status},
         {"killed_at_deadline", t.end.killed_at_deadline},
         {"straggler", t.straggler.is_null() ? nlohmann::json() : t.straggler},
         {"result_file",
          fs::exists(t.result_file) ? nlohmann::json(relative_to(t.result_file, out_abs)) : nlohmann::json()},
         {"log_file", relative_to(t.job.log_file, out_abs)},
         {"command", t.job.argv}});
  }
  return j;
}

}  // namespace ccbench::screen
