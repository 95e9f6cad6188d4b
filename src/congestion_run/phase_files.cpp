#include "congestion_run/phase_files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "congestion/phases.hpp"
#include "core/save_or_keep.hpp"
#include "system/tool_version.hpp"

namespace ccbench::congestion_run {

namespace fs = std::filesystem;
using namespace ccbench::congestion;

// A folder (`-J out/`, or one that exists) holds congestion.<what>.json: a stem of "" would make
// hidden files (.impact.json) that `report out/` does not list.
fs::path phase_path(const std::string& json_path, const std::string& what) {
  fs::path p(json_path);
  std::error_code ec;
  if (p.filename().empty() || fs::is_directory(p, ec)) return p / ("congestion." + what + ".json");
  const std::string stem = p.extension() == ".json" ? p.stem().string() : p.filename().string();
  return p.parent_path() / (stem + "." + what + ".json");
}

void PhaseObserver::on_result(const ResultRow& in) {
  std::lock_guard lock(mutex);
  ResultRow row = in;
  row.trial = trial;
  row.extra["congestion"] = {{"phase", phase_name(congested)}, {"pattern", pattern}};
  wrong += row.wrong;
  if (writer) writer->append(row);
  const auto key = std::make_pair(row.op, row.bytes);
  if (!samples.count(key)) order.push_back(key);
  TrialPair& pair = samples[key][pattern][trial];
  pair.trial = trial;
  (congested ? pair.congested_us : pair.isolated_us) = row.samples_us;
  line.push_back(fmt::format("{} {:.1f} us", test_name(row.op, row.bytes), row.time_us.median));
}

std::vector<ImpactRow> impact_rows(PhaseObserver& observer, const Layout& layout) {
  std::lock_guard lock(observer.mutex);
  std::vector<ImpactRow> rows;
  for (const auto& key : observer.order) {
    for (const auto& roles : layout.patterns) {
      const std::string pattern(name(roles.pattern));
      std::vector<TrialPair> trials;
      for (const auto& [t, pair] : observer.samples[key][pattern]) {
        if (!pair.isolated_us.empty() && !pair.congested_us.empty()) trials.push_back(pair);
      }
      rows.push_back(impact_row(key.first, key.second, pattern, trials));
    }
  }
  return rows;
}

namespace {

nlohmann::json layout_config(const CongestionOptions& opt, const Layout& layout) {
  return {{"measured_ranks", layout.measured},
          {"local_congestors", layout.local_congestors},
          {"remote_congestors", layout.remote_congestors},
          {"hosts", layout.hosts},
          {"lat_bytes", opt.lat},
          {"bw_bytes", opt.bw},
          {"congestor_bytes", opt.congestor}};
}

// Checked now, written at the end (atomically): a run that fails leaves an old summary as it was.
void check_summary_writable(const std::string& json_path) {
  const fs::path impact = phase_path(json_path, "impact");
  const fs::path dir = impact.has_parent_path() ? impact.parent_path() : fs::path(".");
  if (fs::is_directory(impact) || ::access(dir.c_str(), W_OK) != 0) {
    throw std::runtime_error(impact.string() + ": cannot be written");
  }
}

}  // namespace

std::string open_phase_files(PhaseWriters& writers, const ResultFile& measured_header, const RunConfig& config,
                             const CongestionOptions& opt, const Layout& layout) {
  ResultFile header = measured_header;
  header.system["ranks_in_job"] = layout.ranks;
  try {
    for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
      for (int congested = 0; congested < 2; ++congested) {
        ResultFile h = header;
        const std::string pattern(name(layout.patterns[p].pattern));
        h.config["congestion"] = layout_config(opt, layout);
        h.config["congestion"]["pattern"] = pattern;
        h.config["congestion"]["phase"] = phase_name(congested != 0);
        h.config["congestion"]["groups"] = layout.patterns[p].groups;
        if (h.run.label.empty()) h.run.label = "congestion " + pattern + " " + phase_name(congested != 0);
        const std::string path =
            config.json_path.empty() ? "" : phase_path(config.json_path, pattern + "." + phase_name(congested != 0));
        try {
          writers[p][static_cast<std::size_t>(congested)] = std::make_unique<ResultWriter>(h, path);
        } catch (const std::exception& e) {
          throw std::runtime_error(path + ": " + e.what());
        }
      }
    }
    if (!config.json_path.empty()) check_summary_writable(config.json_path);
  } catch (const std::exception& e) {
    return fmt::format("-J/--json {}: {}", config.json_path, e.what());
  }
  return "";
}

nlohmann::json summary_json(const ResultFile& header, const RunConfig& config, const CongestionOptions& opt,
                            const Layout& layout, const PhaseWriters& writers, PhaseObserver& observer,
                            const std::vector<ImpactRow>& rows, const std::optional<GateResult>& gate, int exit,
                            const std::string& status) {
  nlohmann::json summary = {{"tool",
                             {{"name", "ccbench"},
                              {"version", std::string(system::tool_version())},
                              {"git", std::string(system::tool_git_commit())}}},
                            {"command", header.run.command},
                            {"status", status},
                            {"trials", config.trials},
                            {"impacts", nlohmann::json::array()},
                            {"exit_code", exit}};
  {
    std::lock_guard lock(observer.mutex);
    summary["phases"] = observer.phases;
  }
  summary["layout"] = {{"measured_ranks", layout.measured},
                       {"local_congestors", layout.local_congestors},
                       {"remote_congestors", layout.remote_congestors},
                       {"hosts", layout.hosts},
                       {"ranks", layout.ranks}};
  for (const auto& r : rows) summary["impacts"].push_back(to_json(r));
  if (gate) {
    summary["gate"] = {{"max_impact", *opt.max_impact_value},
                       {"verdict", name(gate->verdict)},
                       {"reason", gate->reason},
                       {"exit_code", gate->exit_code}};
  }
  summary["files"] = nlohmann::json::object();
  for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
    const std::string pattern(name(layout.patterns[p].pattern));
    summary["files"][pattern] = {{"isolated", writers[p][0]->path().string()},
                                 {"congested", writers[p][1]->path().string()}};
  }
  return summary;
}

fs::path write_summary(const fs::path& path, const std::string& text, bool durable) {
  const SaveOutcome saved = save_or_keep(path, text, durable);
  if (saved.folder_recreated) {
    std::fprintf(stderr, "%s: warning: the folder %s was removed during the run; created it again and wrote %s\n",
                 kCommand, path.parent_path().c_str(), path.c_str());
  } else if (saved.written.empty()) {
    std::fprintf(stderr, "%s: cannot write %s: %s\n", kCommand, path.c_str(), saved.why.c_str());
  } else if (saved.written != path) {
    std::fprintf(stderr, "%s: cannot write %s: %s; the summary was saved to %s instead\n", kCommand, path.c_str(),
                 saved.why.c_str(), saved.written.c_str());
  }
  return saved.written;
}

}  // namespace ccbench::congestion_run
