// The files of a congestion run: one ordinary result file of the measured set per pattern and
// phase kind (PATH.<pattern>.<isolated|congested>.json), the rows rank 0 writes to them, and the
// summary PATH.impact.json.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "congestion/impact.hpp"
#include "congestion/layout.hpp"
#include "congestion_run/run.hpp"
#include "core/result.hpp"
#include "sweep/engine.hpp"
#include "sweep/result_writer.hpp"

namespace ccbench::congestion_run {

// PATH.json -> PATH.<what>.json (a folder holds congestion.<what>.json).
std::filesystem::path phase_path(const std::string& json_path, const std::string& what);

// Rank 0: rows from the engine go to the phase's result file and to the statistics.
class PhaseObserver final : public SweepObserver {
 public:
  ResultWriter* writer = nullptr;
  int trial = 0;
  std::string pattern;
  bool congested = false;
  std::uint64_t wrong = 0;
  // (op, bytes) -> pattern -> trial -> pair of samples
  std::map<std::pair<std::string, std::uint64_t>, std::map<std::string, std::map<int, congestion::TrialPair>>> samples;
  std::vector<std::pair<std::string, std::uint64_t>> order;
  std::vector<std::string> line;
  nlohmann::json phases = nlohmann::json::array();  // the summary's "phases", under mutex

  std::mutex mutex;  // samples, phases: the watchdog thread reads them when a run is interrupted

  void on_result(const ResultRow& in) override;
};

// The impact rows of every (test, pattern) from the trials whose two phases both finished.
std::vector<congestion::ImpactRow> impact_rows(PhaseObserver& observer, const congestion::Layout& layout);

// Per pattern: the isolated [0] and congested [1] phase's writer.
using PhaseWriters = std::vector<std::array<std::unique_ptr<ResultWriter>, 2>>;

// Rank 0: opens every phase's writer from the measured set's header and checks that the summary
// can be written (it is written at the end). Returns the -J/--json error, "" when all is well.
std::string open_phase_files(PhaseWriters& writers, const ResultFile& header, const RunConfig& config,
                             const CongestionOptions& opt, const congestion::Layout& layout);

// PATH.impact.json: the impacts of the trials finished, the gate, the files; `status` as the phase
// files' (complete, interrupted, incomplete).
nlohmann::json summary_json(const ResultFile& header, const RunConfig& config, const CongestionOptions& opt,
                            const congestion::Layout& layout, const PhaseWriters& writers, PhaseObserver& observer,
                            const std::vector<congestion::ImpactRow>& rows,
                            const std::optional<congestion::GateResult>& gate, int exit, const std::string& status);

// Writes PATH.impact.json atomically; when it cannot, a copy in the working or temporary folder.
// Returns where it went (empty: nowhere), printing why on stderr when not at `path`.
std::filesystem::path write_summary(const std::filesystem::path& path, const std::string& text, bool durable);

}  // namespace ccbench::congestion_run
