// The inside of a Model, shared by fit.cpp (which builds it) and model.cpp (which loads, saves and
// predicts). Not part of the API.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/fit.hpp"
#include "model/model.hpp"

namespace ccbench::model {

struct CvNode {
  int nodes = 0;
  bool extrapolated = false;  // the held-out count was outside the ones fitted
  double rms_log = 0;
  double max_abs_log = 0;
  int rows = 0;
};

struct Group {
  Op op = Op::allreduce;
  std::string profile;
  int ranks_per_node = 1;
  double spec_gbps = 0;
  std::vector<int> nodes;
  std::uint64_t bytes_min = 0, bytes_max = 0;
  // The sizes measured at each fitted node count ({min, max}, in the order of `nodes`): a size
  // outside them is an extrapolation there even when another node count measured it.
  std::vector<std::array<std::uint64_t, 2>> bytes_by_nodes;
  int rows = 0;
  // The element types of the rows fitted (sorted); empty in a file written before they were
  // recorded: then any dtype is taken as covered.
  std::vector<std::string> dtypes;
  std::vector<Regime> regimes;
  std::vector<std::vector<Regime>> refits;
  std::vector<double> bic;  // index k: k + 1 regimes
  // Errors on log scale: RMS, and a robust sigma (1.4826 x median absolute error) that outliers do
  // not inflate; the bands use the robust one.
  double resid_rms_log = 0;  // in-sample ln(measured / fitted)
  double resid_sigma_log = 0;
  double cv_node_rms_log = -1;  // leave one node count out (-1: fewer than 2 node counts)
  double cv_node_sigma_log = -1;
  // Extrapolation in each direction, measured by holding out the largest (up) or the smallest
  // (down) node count: the RMS of its errors (rows within the training sizes; -1: not computed)
  // and how far that extrapolated, in doublings of nodes (0: not computed). One direction does not
  // speak for the other: at 2 nodes NCCL has algorithms it does not have at 16.
  double cv_node_up_sigma_log = -1, cv_node_up_reach_log2 = 0;
  double cv_node_down_sigma_log = -1, cv_node_down_reach_log2 = 0;
  std::vector<CvNode> cv_nodes;
  double cv_sizes_rms_log = -1;  // held-out interior sizes (-1: too few sizes)
  double cv_sizes_sigma_log = -1;
  double efficiency = 0;  // busbw at the largest size and node count / (spec_gbps / 8); 0 unknown
};

// The largest error on log scale a model file holds (e^10: a factor of 22026, far beyond any fit
// worth predicting with): the loader refuses a larger one (a hand edit would make every band inf),
// so the fit refuses to write one (fit.cpp), and what `model fit` writes always loads.
constexpr double kMaxLogError = 10;

// The sizes measured at or around a node count: its own at a fitted count; between two fitted
// counts, the sizes both measured; outside them, those of the nearest end. A size outside them is
// an extrapolation (model.cpp's bands; the judge of model/expectation).
std::pair<std::uint64_t, std::uint64_t> sizes_measured_near(const Group& g, int nodes);

struct Model::Impl {
  std::vector<Group> groups;
  nlohmann::json inputs = nlohmann::json::array();
  int refits = 0;
  double percentile = 0;  // 0: the rows' medians; else the level (in percent) of their percentiles_us
};

struct FitAccess {
  static Model make(std::unique_ptr<Model::Impl> impl) { return Model(std::move(impl)); }
  static const Model::Impl& impl(const Model& m) { return *m.impl_; }
};

}  // namespace ccbench::model
