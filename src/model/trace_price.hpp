// A job's trace priced on instance profiles (`ccbench model predict MODEL... --trace TRACE.json`) and
// set beside a plan (`ccbench model plan --against TRACE.json`): docs/model.md, "Pricing a trace".
// Each call goes through the plan's one pricing of a call (price_call) and its interval arithmetic.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/plan.hpp"
#include "model/workload.hpp"
#include "trace/trace.hpp"

namespace ccbench::model {

// The calls of the traced steps with the same op, dtype, count (alltoallv: counts) and group,
// pooled over the ranks that issue them; send/recv also by whether the peer is on the same node.
struct TraceSite {
  trace::CallOp op = trace::CallOp::allreduce;
  DType dtype = DType::float32;
  std::uint64_t count = 0;
  std::vector<std::uint64_t> counts;  // alltoallv
  std::string group;
  int group_size = 0;
  // What the model is asked: S in nccl-tests' convention (allgather: the output; alltoallv: the
  // group x its largest chunk), the nodes the ranks span at the job's ranks per node and the ranks
  // per node among them (send/recv: 1 or 2, the two ranks' nodes; ranks per node 0, the fabric
  // curve's own layout).
  std::uint64_t bytes = 0;
  int nodes = 1;
  int ranks_per_node = 0;
  std::string unpriceable;                     // why it cannot be priced whatever the model ("" if it can)
  std::string first_call;                      // "FILE: ranks[R].calls[I]", the site's first call (messages)
  std::map<int, std::uint64_t> calls_by_rank;  // world rank -> its calls in the traced steps
  std::uint64_t calls = 0;                     // over every rank
  double calls_per_step = 0;                   // per issuing rank: calls / ranks / steps
};

struct TraceStep {
  std::string source;  // the trace file (messages, output)
  std::string format;  // the trace's provenance.format
  int world_size = 0;
  int ranks_per_node = 0;
  std::int64_t steps = 1;                 // distinct step markers; 1 when the trace has none
  std::uint64_t calls_outside_steps = 0;  // calls without a marker in a trace that has markers
  std::vector<TraceSite> sites;           // in order of first appearance (rank, then call order)
};

// Pools the trace's calls into call sites. Throws UsageError naming --ranks-per-node when it is
// below 1.
TraceStep trace_step(const trace::Trace& trace, int ranks_per_node, const std::string& source);

struct PricedSite {
  bool priced = false;
  std::string note;  // the reason it is not priced, or how it was
  Prediction per_call;
  Interval step_us;  // calls_per_step x the per-call time: one issuing rank's share of a step
};

struct TraceProfile {
  std::string profile;
  std::vector<PricedSite> sites;  // in the order of TraceStep::sites
  // The step: each rank's priced calls summed (bands added), then the largest over the ranks
  // (value, lo and hi each: with fully correlated errors the max's quantiles are the quantiles' max).
  Interval step_us;
  int critical_rank = 0;  // the rank with the largest step value
  int unpriced = 0;       // sites
  bool extrapolated = false;
  bool from_spec = false;
};

struct TraceMigration {
  std::string from, to;
  int sites_compared = 0;  // priced on both; the steps below are over those sites
  Interval from_step_us, to_step_us;
  Interval delta_us;  // to - from
  Interval ratio;     // to / from (NaN when from is 0)
};

TraceProfile price_trace(const TraceStep& step, const std::string& profile, const Pricer& price);
// A collective the model should price but cannot on this profile (no curve for its op there, a
// layout never fitted) is refused: UsageError naming the trace file, the site's first call, the op
// and the model's reason; a step without it would be too small. Point-to-point calls without a
// fabric curve, reduce, barrier and 0-byte calls stay listed as not priced, with the reason.
void require_collectives_priced(const TraceStep& step, const TraceProfile& priced);
TraceMigration migrate(const TraceStep& step, const TraceProfile& from, const TraceProfile& to);
// `migration` must name two of the priced profiles (else UsageError naming --migrate).
TraceMigration migrate(const TraceStep& step, const std::vector<TraceProfile>& priced,
                       const std::pair<std::string, std::string>& migration);

// `ccbench model predict --trace ... --format json`.
nlohmann::json to_json(const TraceStep& step, const std::vector<TraceProfile>& profiles,
                       const std::optional<TraceMigration>& migration);

// `ccbench model plan --against TRACE`: the plan's rows beside the trace's call sites, pooled by
// op, S and group size (the plan knows no dtype or group id).
enum class Agreement : std::uint8_t {
  same,          // issued by the job: same op, size, group size and calls per step
  calls_differ,  // same op, size and group size; another number of calls per step
  differs,       // the nearest site of the same op: another size or group size
  plan_only,     // the job issues no call of this op
  trace_only,    // the job issues it; the plan has no such row
};
std::string_view name(Agreement a);

struct TraceRow {  // the trace's sites of one op, S and group size
  std::string op;  // the trace's op name
  std::optional<StepOp> plan_op;
  std::uint64_t bytes = 0;
  int group_size = 0;
  double calls_per_step = 0;  // per issuing rank
};

struct AgainstRow {
  Agreement agreement = Agreement::same;
  std::optional<std::size_t> plan_row;  // index into the plan's collectives
  std::optional<TraceRow> trace;
};

std::vector<AgainstRow> against(const std::vector<StepCollective>& plan, const TraceStep& trace);
nlohmann::json against_json(const std::vector<AgainstRow>& rows, const TraceStep& trace);

}  // namespace ccbench::model
