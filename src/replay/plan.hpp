// What `ccbench replay` replays (docs/replay.md, "Replay"): the trace's calls mapped onto the job's
// ranks (--ranks-map), the communicators built from the trace's groups, each world rank's sequence
// of calls in the traced order and the call sites its rows pool. Pure: no channel, no backend, so
// the sequencing and pooling are tested in one process.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bandwidth.hpp"
#include "core/enums.hpp"
#include "core/traffic_matrix.hpp"
#include "trace/trace.hpp"

namespace ccbench::replay {

// --ranks-map: the trace rank each world rank replays (index = world rank). Every trace rank
// appears the same number of times k; the c-th occurrence of each trace rank forms copy c, a
// whole replica of the traced job (k = 1: a permutation).
struct RankMap {
  std::vector<int> trace_rank;  // per world rank
  std::vector<int> copy;        // per world rank: which replica it belongs to
  int copies = 1;
};

// The identity for a world of the trace's size; throws UsageError naming --ranks-map when the
// world size differs (the mapping must then be given).
RankMap identity_map(int trace_world_size, int world_size);
// "1,0,3,2": one trace rank per world rank. Throws UsageError naming --ranks-map.
RankMap parse_rank_map(std::string_view text, int trace_world_size, int world_size);

// --gaps: traced (the trace's compute gaps), none, or a factor on them.
struct Gaps {
  enum class Mode : std::uint8_t { traced, none, scaled };
  Mode mode = Mode::traced;
  double scale = 1.0;
  // The wait before a call whose traced gap is `gap_us` (missing or negative: none).
  double wait_us(const std::optional<double>& gap_us) const;
};
std::string_view name(Gaps::Mode mode);
// Throws UsageError naming --gaps.
Gaps parse_gaps(std::string_view text);

// One communicator: a traced group in one copy, its world ranks in the order MPI's split gives
// them (ascending world rank).
struct Communicator {
  int trace_group = 0;  // index into Trace::groups
  int copy = 0;
  std::vector<int> world_ranks;
};

// Calls with the same op, dtype, count and group are one call site (one row of the result file).
struct CallSite {
  trace::CallOp trace_op = trace::CallOp::allreduce;
  Op op = Op::allreduce;
  DType dtype = DType::float32;
  std::uint64_t count = 0;  // the trace's count (elements in one rank's send buffer; alltoallv: the mean over members)
  std::string group;        // the trace group's id
  int group_size = 0;
  std::uint64_t bytes = 0;  // count x element size: one rank's send buffer (alltoallv: the mean, as run's S)
  int calls_per_step = 0;   // how many of them one step issues on a member rank (the most on any rank)
};

// One call as a rank issues it.
struct PlannedCall {
  int site = 0;          // index into ReplayPlan::sites
  int communicator = 0;  // index into ReplayPlan::communicators
  Op op = Op::allreduce;
  DType dtype = DType::float32;
  RedOp redop = RedOp::sum;
  int root = 0;  // broadcast: the root's rank in the communicator
  // send / recv: posted with the rank's other sends and receives that follow it back to back
  // (backends/point_to_point.hpp); `peer` is the other rank's rank in the communicator.
  bool point_to_point = false;
  bool send = false;
  int peer = 0;
  int comm_rank = 0;
  int comm_size = 1;
  OpLayout layout;
  // alltoallv: this rank's side of the call's matrix (every member's traced `counts`, the k-th
  // alltoallv of each member on the group being one call), in the communicator's rank order.
  std::shared_ptr<const MatrixCase> matrix;
  std::optional<double> gap_us;
};

struct ReplayPlan {
  int trace_world_size = 0;
  int world_size = 0;
  RankMap map;
  std::vector<Communicator> communicators;
  std::vector<CallSite> sites;
  std::vector<std::vector<PlannedCall>> calls;  // per world rank, in the traced order
  int traced_steps = 1;                         // step markers the trace holds (1 when none)
  std::uint64_t calls_per_step(int world_rank) const { return calls[static_cast<std::size_t>(world_rank)].size(); }
};

// The collectives replay runs over the backends of `run` (send and recv run through
// backends/point_to_point.hpp; alltoallv on run's alltoallv with the traced counts; a barrier as an
// allreduce of one element).
std::optional<Op> replayed_op(trace::CallOp op);
// A traced barrier's element type: it is replayed as an allreduce (sum) of one element of it.
inline constexpr DType kBarrierDType = DType::float32;

// Throws UsageError naming `trace_path`, the call (ranks[R].calls[I]) and the field for a call it
// cannot replay (an op not replayed yet, a count that does not split over the group).
ReplayPlan make_plan(const trace::Trace& trace, const RankMap& map, const std::string& trace_path);

}  // namespace ccbench::replay
