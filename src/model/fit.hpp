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

// t(S, N) = latency_us + step_us * steps(N) + S * f(op, p) * (us_per_byte + us_per_byte_log2n * log2 N)
// f is the bus factor (2(p-1)/p for allreduce ...), so 1 / us_per_byte is a bus bandwidth and
// us_per_byte_log2n is the efficiency lost per doubling of nodes.
struct Regime {
  double latency_us = 0;
  double step_us = 0;
  Steps steps = Steps::log2_nodes;
  double us_per_byte = 0;
  double us_per_byte_log2n = 0;
};

double steps_of(Steps steps, int nodes);
double regime_time_us(const Regime& r, double bus_bytes, int nodes);
// The lower envelope: the cheapest regime, as NCCL picks the cheapest algorithm and protocol.
double envelope_time_us(const std::vector<Regime>& regimes, double bus_bytes, int nodes);
// S * f(op, nodes * ranks_per_node)
double bus_bytes(Op op, std::uint64_t bytes, int nodes, int ranks_per_node);

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
// groups (--groups) are skipped.
std::vector<Observation> observations(const ResultFile& file);

struct FitOptions {
  int refits = 200;
  int max_regimes = 3;
  std::uint64_t seed = 20261130;
  bool cross_validate = true;
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
