#include "core/bandwidth.hpp"

namespace ccbench {

namespace {
// nccl-tests keeps every rank's block a whole 16 bytes: this many elements (one for wider types).
std::uint64_t per_rank_granule_elements(std::uint64_t element_bytes) {
  return element_bytes >= 16 ? 1 : 16 / element_bytes;
}
}  // namespace

std::uint64_t per_rank_count(std::uint64_t total_count, std::uint64_t element_bytes, int nranks) {
  const auto n = static_cast<std::uint64_t>(nranks < 1 ? 1 : nranks);
  return (total_count / n) & ~(per_rank_granule_elements(element_bytes) - 1);
}

OpLayout layout_for(Op op, DType dtype, std::uint64_t nominal_bytes, int nranks) {
  const std::uint64_t elt = info(dtype).size_bytes;
  const auto n = static_cast<std::uint64_t>(nranks < 1 ? 1 : nranks);
  OpLayout layout;
  const OpBuffers buffers = info(op).buffers;
  if (buffers == OpBuffers::whole) {
    layout.count = nominal_bytes / elt;
    layout.send_elements = layout.count;
    layout.recv_elements = layout.count;
    layout.bytes = layout.count * elt;
    return layout;
  }
  // No size maps onto a matrix op: its counts are the matrix's (the plan's matrix_case).
  if (buffers == OpBuffers::matrix) return layout;
  // S is a total over the ranks: each rank's block is `count` elements.
  layout.count = per_rank_count(nominal_bytes / elt, elt, nranks);
  layout.bytes = layout.count * n * elt;
  layout.send_elements = buffers == OpBuffers::gather ? layout.count : layout.count * n;
  layout.recv_elements = buffers == OpBuffers::scatter ? layout.count : layout.count * n;
  return layout;
}

std::uint64_t whole_size_granule_bytes(Op op, DType dtype, int nranks) {
  const std::uint64_t elt = info(dtype).size_bytes;
  const auto n = static_cast<std::uint64_t>(nranks < 1 ? 1 : nranks);
  if (info(op).buffers == OpBuffers::whole || info(op).buffers == OpBuffers::matrix) return elt;
  return per_rank_granule_elements(elt) * elt * n;
}

double bus_factor(Op op, int nranks) {
  const double n = nranks < 1 ? 1.0 : static_cast<double>(nranks);
  switch (info(op).bus) {
    case BusFactor::allreduce_ring:
      return 2.0 * (n - 1.0) / n;
    case BusFactor::ring:
      return (n - 1.0) / n;
    case BusFactor::off_rank:  // an even matrix's share; a measured row takes its own matrix's (matrix_busbw_gbps)
      return (n - 1.0) / n;
    case BusFactor::both_directions:
      return 2.0;
    case BusFactor::one:
      return 1.0;
  }
  return 1.0;
}

double algbw_gbps(std::uint64_t bytes, double time_us) {
  if (!(time_us > 0.0)) return 0.0;
  return static_cast<double>(bytes) / (time_us * 1e-6) / 1e9;
}

double busbw_gbps(Op op, int nranks, std::uint64_t bytes, double time_us) {
  return algbw_gbps(bytes, time_us) * bus_factor(op, nranks);
}

double matrix_busbw_gbps(double mean_off_rank_send_bytes, double time_us) {
  if (!(time_us > 0.0)) return 0.0;
  return mean_off_rank_send_bytes / (time_us * 1e-6) / 1e9;
}

}  // namespace ccbench
