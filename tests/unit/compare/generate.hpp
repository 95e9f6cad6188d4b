// In-memory result files with known ratios for the compare tests (the same model as gen_results.py).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compare/load.hpp"

namespace ccbench::testing {

struct RunModel {
  std::vector<std::string> ops = {"allreduce", "allgather", "alltoall"};
  std::vector<std::uint64_t> sizes = {1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1024 << 20};
  int trials = 6;
  int samples = 40;
  int ranks = 16;
  int ranks_per_node = 8;
  std::function<double(const std::string&, std::uint64_t)> ratio = [](const std::string&, std::uint64_t) {
    return 1.0;
  };
  double sigma = 0.02;
  double trial_sigma = 0.005;
  std::uint64_t seed = 1;
  std::string instance_type = "p5en.48xlarge";
  std::string generation = "v3";
  std::optional<double> link_gbps = 3200;
  std::string timing = "ccbench";
};

ResultFile make_result_file(const RunModel& model);
compare::Side make_side(const std::string& name, const RunModel& model);

}  // namespace ccbench::testing
