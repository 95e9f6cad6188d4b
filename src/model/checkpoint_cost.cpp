#include "model/checkpoint_cost.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ccbench::model {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

double young_interval_s(double delta_s, double mtbf_s) {
  require(std::isfinite(delta_s) && delta_s > 0, "checkpoint time must be a positive number");
  require(std::isfinite(mtbf_s) && mtbf_s > 0, "MTBF must be a positive number");
  return std::sqrt(2.0 * delta_s * mtbf_s);
}

double daly_interval_s(double delta_s, double mtbf_s) {
  const double young = young_interval_s(delta_s, mtbf_s);
  // Beyond delta = 2M the series no longer converges; Daly takes M itself.
  if (delta_s >= 2.0 * mtbf_s) return mtbf_s;
  const double x = delta_s / (2.0 * mtbf_s);
  return young * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta_s;
}

JobCost job_cost(double tau_s, double delta_s, double restart_s, double mtbf_s) {
  require(std::isfinite(tau_s) && tau_s > 0, "checkpoint interval must be a positive number");
  require(std::isfinite(delta_s) && delta_s >= 0, "checkpoint time must be a number >= 0");
  require(std::isfinite(restart_s) && restart_s >= 0, "restart time must be a number >= 0");
  require(std::isfinite(mtbf_s) && mtbf_s > 0, "MTBF must be a positive number");
  JobCost c;
  const double failures = std::expm1((tau_s + delta_s) / mtbf_s);
  c.segment_wall_s = mtbf_s * std::exp(restart_s / mtbf_s) * failures;
  require(std::isfinite(c.segment_wall_s), "the expected wall time overflows: the job never finishes a segment");
  c.goodput = tau_s / c.segment_wall_s;
  c.checkpoint_fraction = delta_s / c.segment_wall_s;
  c.restart_fraction = std::min(failures * restart_s / c.segment_wall_s, 1.0 - c.goodput - c.checkpoint_fraction);
  c.rework_fraction = 1.0 - c.goodput - c.checkpoint_fraction - c.restart_fraction;
  return c;
}

}  // namespace ccbench::model
