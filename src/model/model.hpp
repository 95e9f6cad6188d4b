// The performance model of `ccbench model` (docs/model.md): collective time against bytes and node
// count, fitted from result files, with a 90% band. `ccbench model plan` and the report code read
// model files only through this header.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/enums.hpp"

namespace ccbench::model {

inline constexpr int kModelVersion = 2;

struct PredictQuery {
  Op op = Op::allreduce;
  std::uint64_t bytes = 0;  // S, the collective's total size (nccl-tests convention)
  int nodes = 1;
  int ranks_per_node = 0;  // 0: the layout the model was fitted on (the only one, or the most common)
  std::string profile;     // instance type or fabric label; empty: the model's only profile
  // The statistic of one call's time the answer is: 0 the median (a trial's median, what `model fit`
  // fits by default), else a percentile of per-iteration times (a model fitted with --percentile P
  // from runs with --percentiles P). A model answers only its own statistic.
  double percentile = 0;
};

struct Prediction {
  double time_us = 0;
  double time_lo_us = 0, time_hi_us = 0;  // 90% band
  double busbw_gbps = 0;
  double busbw_lo_gbps = 0, busbw_hi_gbps = 0;  // from time_hi_us and time_lo_us
  bool extrapolated = false;                    // outside the fitted node counts or sizes (band widened)
  bool from_spec = false;                       // profile never measured: its spec times efficiency learned elsewhere
  // The share of time_us the answering regime's latency terms (a + l steps(N)) take; the rest is its
  // bytes terms. Above 1/2 the call is latency-bound (model/expectation judges its time, not busbw).
  double latency_share = 0;
  std::string profile;     // the profile that answered (the query's, or the only one)
  int ranks_per_node = 0;  // the layout that answered
};

// One fitted curve family: an op on a profile and a ranks-per-node layout, across node counts.
struct GroupSummary {
  Op op = Op::allreduce;
  std::string profile;
  int ranks_per_node = 0;
  std::vector<int> nodes_fitted;
  std::uint64_t bytes_min = 0, bytes_max = 0;
  int regimes = 0;
  double residual_rms_log = 0;  // in-sample RMS of ln(fitted/measured)
  double cv_node_rms_log = 0;   // leave one node count out: RMS of ln(predicted/measured), -1 if not computed
  double cv_sizes_rms_log = 0;  // held-out sizes: RMS of ln(predicted/measured)
};

class Model {
 public:
  // Throws ParseError naming the file and the key ("m.json: model_version: is 2, this ccbench reads 1").
  static Model load(const std::filesystem::path& path);
  static Model from_json(const nlohmann::json& j, const std::string& where);
  nlohmann::json to_json() const;

  // Throws UsageError when the model cannot answer (op not fitted, unknown profile without a spec,
  // ranks per node never fitted and no spec to scale from).
  Prediction predict(const PredictQuery& query) const;

  std::vector<std::string> profiles() const;  // measured profiles, sorted
  // 0: fitted on the rows' medians; else the percentile of per-iteration times it was fitted on.
  double percentile() const;
  std::vector<GroupSummary> groups() const;

  struct Impl;
  Model();
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  Model(const Model&);
  Model& operator=(const Model&);

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend struct FitAccess;
};

}  // namespace ccbench::model
