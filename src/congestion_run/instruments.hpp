// The channels, backends, plans and buffers of a congestion run: the measured set's and one per
// congestor pattern, made collectively on every rank in the same order.
#pragma once

#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "congestion/layout.hpp"
#include "congestion_run/run.hpp"
#include "sweep/channel.hpp"
#include "sweep/plan.hpp"

namespace ccbench::congestion_run {

struct Instruments {
  std::unique_ptr<ControlChannel> measured_channel;
  std::vector<std::unique_ptr<ControlChannel>> active_channels;  // per pattern: its active congestors
  std::unique_ptr<Backend> measured_backend;
  std::vector<std::unique_ptr<Backend>> pattern_backends;
  std::vector<CaseSpec> pattern_cases;  // this rank's congestor op per pattern (when active)
  std::vector<bool> active;             // per pattern: this rank runs its congestor op
  Plan plan;                            // the measured tests (measured ranks)
  std::vector<Plan> pattern_plans;

  // Backends before channels, as they were made on them.
  void release();
};

// Collective. Every error is agreed: throws AgreedSetupError with the one message of all ranks
// (a size whose buffers cannot fit names its flag).
Instruments set_up_instruments(ControlChannel& world, const RunConfig& config, const CongestionOptions& opt,
                               const congestion::Layout& layout, const MakeBackend& make_backend);

}  // namespace ccbench::congestion_run
