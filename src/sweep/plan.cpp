#include "sweep/plan.hpp"

#include <algorithm>
#include <optional>

#include "core/error.hpp"
#include "sweep/matrix_source.hpp"

namespace ccbench {

Plan make_plan(const RunConfig& config, const Backend& backend, int nranks, int rank) {
  Plan plan;
  const std::vector<std::uint64_t> sizes = expand_sizes(config.sizes);
  std::vector<bool> variants;
  if (config.in_place != InPlaceMode::yes) variants.push_back(false);
  if (config.in_place != InPlaceMode::no) variants.push_back(true);

  // The file's matrix, and the router's dispatch shared by the three moe ops (routed once).
  std::optional<MatrixSource> file_matrix, moe_matrix;
  // sendrecv's group: --peer-group, or every rank in one group (docs/method.md, "sendrecv patterns").
  const int peer_group =
      config.sendrecv_pattern == SendRecvPattern::ring ? 0 : (config.peer_group > 0 ? config.peer_group : nranks);
  const std::uint64_t block_elements = config.block_bytes / info(config.dtype).size_bytes;
  if (std::ranges::find(config.ops, Op::sendrecv) != config.ops.end()) {
    if (auto why = peer_group_problem(config.sendrecv_pattern, peer_group, nranks))
      throw UsageError("--peer-group: " + *why);
  }
  for (Op op : config.ops) {
    PlannedOp planned{op, {}};
    bool any_unsupported = false;
    if (info(op).buffers == OpBuffers::matrix) {
      // One case per matrix op, sized by its matrix: -b/-e do not apply (docs/method.md).
      std::optional<MatrixSource>& cached = op == Op::alltoallv ? file_matrix : moe_matrix;
      if (!cached) cached = matrix_source(config, op, nranks);
      const MatrixSource& source = *cached;
      PlannedSize size{0, {}};
      for (bool in_place : variants) {
        // --in-place both asks for the variants an op has: a matrix op has only out-of-place.
        if (in_place && config.in_place == InPlaceMode::both) continue;
        CaseSpec c;
        c.op = op;
        c.dtype = config.dtype;
        c.redop = RedOp::none;
        c.in_place = in_place;
        c.root = -1;
        c.nranks = nranks;
        c.rank = rank;
        auto matrix = std::make_shared<MatrixCase>(matrix_case(op, source.matrix, rank, info(config.dtype).size_bytes));
        matrix->source = source.source;
        c.layout = matrix_layout(*matrix, info(config.dtype).size_bytes);
        c.matrix = std::move(matrix);
        size.nominal_bytes = c.layout.bytes;
        if (auto why = backend.unsupported(c)) {
          plan.skipped.push_back({std::string(name(op)) + (in_place ? " in-place" : " out-of-place"), *why});
          continue;
        }
        plan.send_bytes = std::max(plan.send_bytes, backend.send_bytes_needed(c));
        plan.recv_bytes = std::max(plan.recv_bytes, backend.recv_bytes_needed(c));
        size.variants.push_back(c);
      }
      if (!size.variants.empty()) {
        plan.cases_per_trial += size.variants.size();
        planned.sizes.push_back(std::move(size));
        plan.ops.push_back(std::move(planned));
      }
      continue;
    }
    for (std::uint64_t nominal : sizes) {
      PlannedSize size{nominal, {}};
      for (bool in_place : variants) {
        CaseSpec c;
        c.op = op;
        c.dtype = config.dtype;
        c.redop = info(op).is_reduction ? config.redop : RedOp::none;
        c.in_place = in_place;
        c.root = is_rooted(op) ? config.root : -1;
        c.nranks = nranks;
        c.rank = rank;
        c.layout = layout_for(op, config.dtype, nominal, nranks);
        if (op == Op::sendrecv) {
          c.sendrecv_pattern = config.sendrecv_pattern;
          c.peer_group = peer_group;
          c.block_elements = block_elements;
          if (c.posts_blocks()) {
            const std::uint64_t receives =
                pattern_peers(c.sendrecv_pattern, peer_group, rank, nranks).receive_from.size();
            c.layout.count = whole_blocks_count(c.layout.count, block_elements);
            c.layout.bytes = c.layout.count * info(config.dtype).size_bytes;
            c.layout.send_elements = c.layout.count;
            c.layout.recv_elements = c.layout.count * receives;
          }
        }
        if (auto why = backend.unsupported(c)) {
          any_unsupported = true;
          Skip skip{std::string(name(op)) + (in_place ? " in-place" : " out-of-place"), *why};
          if (std::ranges::find_if(plan.skipped, [&](const Skip& s) { return s.what == skip.what; }) ==
              plan.skipped.end()) {
            plan.skipped.push_back(std::move(skip));
          }
          continue;
        }
        if (c.layout.count == 0) continue;
        plan.send_bytes = std::max(plan.send_bytes, backend.send_bytes_needed(c));
        plan.recv_bytes = std::max(plan.recv_bytes, backend.recv_bytes_needed(c));
        size.variants.push_back(c);
      }
      if (size.variants.empty()) {
        if (!any_unsupported) {
          plan.skipped.push_back({std::string(name(op)) + " " + format_bytes(nominal),
                                  op == Op::sendrecv && block_elements > 0 ? "smaller than one --block-bytes block"
                                                                           : "smaller than one element per rank"});
        }
        continue;
      }
      plan.cases_per_trial += size.variants.size();
      planned.sizes.push_back(std::move(size));
    }
    if (!planned.sizes.empty()) plan.ops.push_back(std::move(planned));
  }
  if (config.root < 0 || config.root >= nranks) {
    throw UsageError("--root " + std::to_string(config.root) + " is not a rank (0.." + std::to_string(nranks - 1) + ")");
  }
  if (plan.cases_per_trial == 0) {
    std::string why = "nothing to measure";
    for (const auto& s : plan.skipped) why += "; " + s.what + ": " + s.reason;
    throw UsageError(why);
  }
  return plan;
}

}  // namespace ccbench
