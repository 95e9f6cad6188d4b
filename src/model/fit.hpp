// Fitting the model (docs/model.md): observations from result files, the lower envelope of
// latency + bytes/bandwidth regimes with node-count dependence, refits and cross-validation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/enums.hpp"
#include "core/result.hpp"
#include "model/model.hpp"

namespace ccbench::model {

// How a regime's latency grows with the node count N: tree-like (log2 N) or ring-like (N - 1).
enum class Steps : std::uint8_t { log2_nodes, nodes };
std::string_view name(Steps steps);

// What one call of the collective moves, the columns of a regime's bytes terms (docs/model.md):
// bus_bytes = S * f(op, p), f the bus factor (2(p-1)/p for allreduce ...), and net_bytes = S * g(op, N),
// g the share of S a node sends over the network in a hierarchical algorithm (2(N-1)/N for
// allreduce, (N-1)/N for allgather, reduce_scatter and alltoall, 1 for broadcast beyond one node,
// 0 at one node: there it is NVLink alone). Both factors saturate as N grows.
struct Traffic {
  double bus_bytes = 0;
  double net_bytes = 0;
  int nodes = 1;
};
Traffic traffic(Op op, std::uint64_t bytes, int nodes, int ranks_per_node);
double network_factor(Op op, int nodes);

// The matrix ops (alltoallv, moe_dispatch, moe_combine, moe_pair) are modelled against the most
// loaded rank's off-rank bytes L (the row's matrix.most_loaded_off_rank_bytes), not the mean S: the
// op ends when that rank's link has carried L, so the routing's imbalance enters the price through
// L = imbalance x the mean. For them `bytes` in a query and an Observation is L, the bus term's
// factor is 1 and the bandwidth reported is L / t (the row's most_loaded_gbps).
bool modelled_by_most_loaded_rank(Op op);
// The bandwidth a prediction reports: nccl-tests' busbw, or L / t for the matrix ops.
double curve_busbw_gbps(Op op, int ranks, std::uint64_t bytes, double time_us);

// t(S, N) = latency_us + step_us * steps(N) + bus_bytes * us_per_byte + net_bytes * us_per_net_byte
// 1 / us_per_byte is a bus bandwidth that does not change with N (a bandwidth-bound ring), and
// us_per_net_byte the time per byte a node moves over the network: the node-count dependence of
// the bytes term, bounded as N grows.
struct Regime {
  double latency_us = 0;
  double step_us = 0;
  Steps steps = Steps::log2_nodes;
  double us_per_byte = 0;
  double us_per_net_byte = 0;
};

double steps_of(Steps steps, int nodes);
double regime_time_us(const Regime& r, const Traffic& x);
// The lower envelope: the cheapest regime, as NCCL picks the cheapest algorithm and protocol.
double envelope_time_us(const std::vector<Regime>& regimes, const Traffic& x);

// One measured row: a trial's median time at one size.
struct Observation {
  Op op = Op::allreduce;
  std::string profile;
  int nodes = 1;
  int ranks_per_node = 1;
  std::uint64_t bytes = 0;
  double time_us = 0;
  double sigma_log = 0;  // from the row's 95% CI on log scale; 0 when the row has none
  double spec_gbps = 0;  // the profile's network bandwidth per node (Gbit/s); 0 when unknown
  std::string dtype;     // the row's element type, recorded per group so a judge knows what was measured
  std::string file;
};

// The run metadata the model needs, read in this one place.
struct RunFacts {
  std::string profile;
  int nodes = 0;           // 0: not recorded
  int ranks_per_node = 0;  // 0: not recorded
  double spec_gbps = 0;
};
RunFacts run_facts(const ResultFile& file);

// Rows of one result file; rows with fewer than 2 ranks, an op ccbench does not know or concurrent
// groups (--groups) are skipped. `percentile` 0: each row's median time and its CI; else the row's
// `percentiles_us` level of that percentile (run --percentiles) and its order-statistic CI, rows
// without the level skipped.
std::vector<Observation> observations(const ResultFile& file, double percentile = 0);

struct FitOptions {
  int refits = 200;
  int max_regimes = 3;
  std::uint64_t seed = 20261130;
  bool cross_validate = true;
  double percentile = 0;  // the statistic the observations are (observations()), recorded in the model
};

// Throws UsageError naming the file and key when a group cannot be fitted (one size only).
Model fit(const std::vector<Observation>& rows, const FitOptions& options, const std::vector<std::string>& inputs);

// Parameter bands of a group's regimes (5% and 95% over the refits), for tests and reports.
struct RegimeBand {
  Regime value, lo, hi;
};
struct FittedGroupView {
  GroupSummary summary;
  std::vector<RegimeBand> regimes;
  std::vector<double> bic;  // by number of regimes, index 0 = one regime; NaN: not a candidate
};
std::vector<FittedGroupView> fitted_groups(const Model& model);

}  // namespace ccbench::model
