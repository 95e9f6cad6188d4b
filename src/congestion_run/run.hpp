// `ccbench congestion` over MPI (docs/congestion.md, "Where it lives"): the channels and backends
// of the measured set and of every congestor pattern, the phase loop, the result files and the
// summary. The command's flags and what it prints are cli/congestion_command.cpp; the pure
// layout, phase order, impact factor and gate are congestion/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "congestion/impact.hpp"
#include "congestion/layout.hpp"
#include "core/result.hpp"
#include "sweep/channel.hpp"
#include "sweep/plan.hpp"
#include "sweep/run_config.hpp"
#include "sweep/run_ending.hpp"

namespace ccbench::congestion_run {

inline constexpr const char* kCommand = "ccbench congestion";

// The command's own flags, parsed and checked (the flag texts are kept for messages).
struct CongestionOptions {
  congestion::LayoutOptions layout;
  int ranks_per_host = 0;
  std::string patterns = "alltoall,incast,bcast";
  std::string lat_bytes = "8";
  std::string bw_bytes = "1M";
  std::string congestor_bytes = "4M";
  std::string max_impact;  // empty: no gate
  std::optional<double> max_impact_value;
  std::uint64_t lat = 8, bw = 1 << 20, congestor = 4 << 20;
  std::vector<std::string> command;  // recorded in every result file (command[0] = kCommand)
};

// One finished phase as rank 0 prints it: the maxima over the ranks.
struct PhaseLine {
  int trial = 0;
  std::string pattern;
  bool congested = false;
  std::vector<std::string> tests;  // "allreduce 8B 12.3 us", one per measured test
  double congestor_ops = 0;
  double congestor_op_ms = 0;
  double stop_wait_ms = 0;
};

// What the command prints, called on rank 0 at the moments it prints (the caller owns the text).
class Printer {
 public:
  virtual ~Printer() = default;
  virtual void start(const congestion::Layout& layout, int trials, std::uint64_t congestor_bytes) = 0;
  virtual void phase(const PhaseLine& line) = 0;
  virtual void table(const std::vector<congestion::ImpactRow>& rows) = 0;
  virtual void gate_and_method(const std::optional<congestion::GateResult>& gate, double max_impact, int trials) = 0;
  // `summary` is where PATH.impact.json went (empty: not written).
  virtual void files(const std::filesystem::path& isolated, const std::filesystem::path& congested,
                     const std::filesystem::path& summary) = 0;
  virtual void data_check_failed(std::uint64_t wrong_elements) = 0;
  virtual void flush() = 0;
};

// Makes a backend by name for a set's channel (the registry's make_backend; a test hands a fake).
using MakeBackend = std::function<std::unique_ptr<Backend>(std::string_view name, const BackendOptions& options)>;
MakeBackend registry_backends();

// Collective: everything after the layout. Every channel and backend is made and destroyed in
// here, before the caller's MPI_Finalize. Returns the exit code; hangs, signals, failed peers and
// errors while measuring end the rank through `ending` (sweep/run_ending.hpp), which rank 0 has
// given every phase file and the summary to finish.
int run_congestion(ControlChannel& world, RunEnding& ending, const RunConfig& config, const CongestionOptions& opt,
                   const congestion::Layout& layout, Printer& printer,
                   const MakeBackend& make_backend = registry_backends());

}  // namespace ccbench::congestion_run
