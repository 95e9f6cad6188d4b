#include "replay/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/types.hpp"

namespace ccbench::replay {
namespace {

std::string call_where(const std::string& path, int rank, std::size_t index) {
  return fmt::format("{}: ranks[{}].calls[{}]", path, rank, index);
}

// The layout of a traced call on a communicator of `n` ranks, in the terms of `run`'s backends
// (core/bandwidth.hpp): `count` is the collective's count argument (per rank for allgather,
// per peer for alltoall, the share for reduce_scatter), `bytes` what `run` calls S.
OpLayout traced_layout(Op op, std::uint64_t traced_count, std::uint64_t element_bytes, int n) {
  const auto ranks = static_cast<std::uint64_t>(n);
  OpLayout layout;
  switch (info(op).buffers) {
    case OpBuffers::whole:
      layout.count = traced_count;
      layout.send_elements = traced_count;
      layout.recv_elements = traced_count;
      layout.bytes = traced_count * element_bytes;
      break;
    case OpBuffers::gather:  // allgather: the count is what each rank contributes
      layout.count = traced_count;
      layout.send_elements = traced_count;
      layout.recv_elements = traced_count * ranks;
      layout.bytes = traced_count * ranks * element_bytes;
      break;
    case OpBuffers::scatter:  // reduce_scatter: the count is the whole input
      layout.count = traced_count / ranks;
      layout.send_elements = traced_count;
      layout.recv_elements = layout.count;
      layout.bytes = traced_count * element_bytes;
      break;
    case OpBuffers::exchange:  // alltoall: the count is the whole input, one block per peer
      layout.count = traced_count / ranks;
      layout.send_elements = traced_count;
      layout.recv_elements = traced_count;
      layout.bytes = traced_count * element_bytes;
      break;
    case OpBuffers::matrix:  // alltoallv: from the call's matrix, once its communicator is known
      break;
  }
  return layout;
}

// A collective as the group's members must issue it alike: op, element type, root, and the count
// (an alltoallv's differs by rank with its counts).
std::string collective_text(const trace::Call& call) {
  std::string text = fmt::format("{} {}", trace::name(call.op), info(call.dtype).name);
  if (call.op != trace::CallOp::alltoallv) text += fmt::format(" x{}", call.count);
  if (trace::info(call.op).takes_root) text += fmt::format(" root {}", call.root.value_or(0));
  return text;
}

// Every member of a group must issue the group's collectives alike and in the same order, or the
// replay's collectives would not match and hang. A trace whose source does not name a group (every
// call taken as on the world) and whose ranks issue a subgroup's calls is such a trace.
void check_groups_issued_alike(const trace::Trace& trace, const std::string& path) {
  for (const trace::Group& group : trace.groups) {
    struct Issued {
      int rank;
      std::vector<std::size_t> index;  // into the rank's calls
    };
    std::vector<Issued> members;
    for (const int member : group.ranks) {
      const auto it = std::find_if(trace.ranks.begin(), trace.ranks.end(),
                                   [&](const trace::RankCalls& r) { return r.rank == member; });
      if (it == trace.ranks.end()) continue;
      Issued issued{member, {}};
      for (std::size_t i = 0; i < it->calls.size(); ++i) {
        const trace::Call& call = it->calls[i];
        if (call.group == group.id && !trace::info(call.op).takes_peer) issued.index.push_back(i);
      }
      members.push_back(std::move(issued));
    }
    const auto calls_of = [&](int rank) -> const std::vector<trace::Call>& {
      return std::find_if(trace.ranks.begin(), trace.ranks.end(),
                          [&](const trace::RankCalls& r) { return r.rank == rank; })
          ->calls;
    };
    for (std::size_t m = 1; m < members.size(); ++m) {
      const Issued& first = members.front();
      const Issued& other = members[m];
      const auto describe = [&](const Issued& issued, std::size_t k) {
        if (k >= issued.index.size()) return fmt::format("rank {} issues no more ({} in all)", issued.rank, k);
        return fmt::format("ranks[{}].calls[{}] is {}", issued.rank, issued.index[k],
                           collective_text(calls_of(issued.rank)[issued.index[k]]));
      };
      const std::size_t n = std::max(first.index.size(), other.index.size());
      for (std::size_t k = 0; k < n; ++k) {
        const bool same = k < first.index.size() && k < other.index.size() &&
                          collective_text(calls_of(first.rank)[first.index[k]]) ==
                              collective_text(calls_of(other.rank)[other.index[k]]);
        if (same) continue;
        throw UsageError(fmt::format(
            "{}: group '{}': its ranks do not issue its collectives alike: collective {} on it: {}, {} (replayed, "
            "they would not match; the source may not name the group the calls were on: see the trace's "
            "not_in_source)",
            path, group.id, k, describe(first, k), describe(other, k)));
      }
    }
  }
}

// The n-th send from trace rank a to b on a group pairs with the n-th receive at b from a (MPI's
// non-overtaking order). A send or receive without its partner would hang the replay, and a pair
// whose element types or counts differ would not carry what the receive expects.
void check_sends_match_receives(const trace::Trace& trace, const std::string& path) {
  struct Posted {
    int rank;
    std::size_t index;
    const trace::Call* call;
  };
  struct Pair {
    std::vector<Posted> sends, recvs;
  };
  std::map<std::tuple<std::string, int, int>, Pair> pairs;  // (group, sender, receiver) in trace ranks
  for (const trace::RankCalls& rank : trace.ranks) {
    for (std::size_t i = 0; i < rank.calls.size(); ++i) {
      const trace::Call& call = rank.calls[i];
      if (call.op != trace::CallOp::send && call.op != trace::CallOp::recv) continue;
      const auto group = std::find_if(trace.groups.begin(), trace.groups.end(),
                                      [&](const trace::Group& g) { return g.id == call.group; });
      const int peer = group->ranks[static_cast<std::size_t>(call.peer.value_or(0))];
      if (call.op == trace::CallOp::send) {
        pairs[{call.group, rank.rank, peer}].sends.push_back({rank.rank, i, &call});
      } else {
        pairs[{call.group, peer, rank.rank}].recvs.push_back({rank.rank, i, &call});
      }
    }
  }
  const auto text = [](const trace::Call& call) { return fmt::format("{} x{}", info(call.dtype).name, call.count); };
  for (const auto& [key, pair] : pairs) {
    const auto& [group, sender, receiver] = key;
    const std::size_t n = std::max(pair.sends.size(), pair.recvs.size());
    for (std::size_t k = 0; k < n; ++k) {
      if (k >= pair.recvs.size()) {
        const Posted& send = pair.sends[k];
        throw UsageError(fmt::format(
            "{}: send {} from trace rank {} to trace rank {} on group '{}' ({}) has no matching recv: rank {} "
            "posts {} recvs from rank {} (the n-th send from a rank to a peer pairs with the peer's n-th recv "
            "from it; replayed, it would hang)",
            call_where(path, send.rank, send.index), k, sender, receiver, group, text(*send.call), receiver,
            pair.recvs.size(), sender));
      }
      if (k >= pair.sends.size()) {
        const Posted& recv = pair.recvs[k];
        throw UsageError(fmt::format(
            "{}: recv {} at trace rank {} from trace rank {} on group '{}' ({}) has no matching send: rank {} "
            "posts {} sends to rank {} (the n-th send from a rank to a peer pairs with the peer's n-th recv "
            "from it; replayed, it would hang)",
            call_where(path, recv.rank, recv.index), k, receiver, sender, group, text(*recv.call), sender,
            pair.sends.size(), receiver));
      }
      const Posted& send = pair.sends[k];
      const Posted& recv = pair.recvs[k];
      if (send.call->dtype != recv.call->dtype || send.call->count != recv.call->count) {
        throw UsageError(
            fmt::format("{}: send {} from trace rank {} to trace rank {} on group '{}' is {}, its matching recv "
                        "ranks[{}].calls[{}] is {}: a send and its recv must match in element type and count",
                        call_where(path, send.rank, send.index), k, sender, receiver, group, text(*send.call),
                        recv.rank, recv.index, text(*recv.call)));
      }
    }
  }
}

// alltoallv: the k-th call of every member on a group is one call; its matrix (group order, row =
// sender) is every member's traced counts of that call. Keyed by (trace rank, call index).
using CallMatrices = std::map<std::pair<int, std::size_t>, std::shared_ptr<const TrafficMatrix>>;
CallMatrices alltoallv_matrices(const trace::Trace& trace, const std::string& trace_path) {
  CallMatrices call_matrix;
  for (int g = 0; g < static_cast<int>(trace.groups.size()); ++g) {
    const trace::Group& group = trace.groups[static_cast<std::size_t>(g)];
    const auto n = static_cast<int>(group.ranks.size());
    std::vector<std::vector<std::pair<int, std::size_t>>> calls_of_member(static_cast<std::size_t>(n));
    for (const trace::RankCalls& rank : trace.ranks) {
      const auto member = std::find(group.ranks.begin(), group.ranks.end(), rank.rank);
      if (member == group.ranks.end()) continue;
      for (std::size_t i = 0; i < rank.calls.size(); ++i) {
        const trace::Call& call = rank.calls[i];
        if (call.op == trace::CallOp::alltoallv && call.group == group.id) {
          calls_of_member[static_cast<std::size_t>(member - group.ranks.begin())].push_back({rank.rank, i});
        }
      }
    }
    const std::size_t calls = calls_of_member.empty() ? 0 : calls_of_member[0].size();
    for (int m = 0; m < n; ++m) {
      if (calls_of_member[static_cast<std::size_t>(m)].size() != calls) {
        throw UsageError(
            fmt::format("{}: group '{}': trace rank {} issues {} alltoallv calls and trace rank {} {}: "
                        "every member must issue each one",
                        trace_path, group.id, group.ranks[static_cast<std::size_t>(m)],
                        calls_of_member[static_cast<std::size_t>(m)].size(), group.ranks[0], calls));
      }
    }
    for (std::size_t k = 0; k < calls; ++k) {
      auto matrix = std::make_shared<TrafficMatrix>();
      matrix->ranks = n;
      const auto& [first_rank, first_index] = calls_of_member[0][k];
      const DType dtype = trace.ranks[static_cast<std::size_t>(first_rank)].calls[first_index].dtype;
      for (int m = 0; m < n; ++m) {
        const auto& [trace_rank, index] = calls_of_member[static_cast<std::size_t>(m)][k];
        const trace::Call& call = trace.ranks[static_cast<std::size_t>(trace_rank)].calls[index];
        if (call.dtype != dtype) {
          throw UsageError(fmt::format("{}: field 'dtype': {} where trace rank {}'s matching alltoallv has {}",
                                       call_where(trace_path, trace_rank, index), info(call.dtype).name, first_rank,
                                       info(dtype).name));
        }
        for (const std::uint64_t elements : call.counts) matrix->bytes.push_back(elements * info(dtype).size_bytes);
      }
      for (int m = 0; m < n; ++m) call_matrix[calls_of_member[static_cast<std::size_t>(m)][k]] = matrix;
    }
  }
  return call_matrix;
}

// A call's group-order matrix in its communicator's order (ascending world rank, through the rank
// map), as this rank's side of it.
std::shared_ptr<const MatrixCase> in_communicator_order(const TrafficMatrix& grouped, const std::vector<int>& members,
                                                        const std::vector<int>& world_ranks, const RankMap& map,
                                                        int comm_rank, std::uint64_t element_bytes) {
  const int n = static_cast<int>(world_ranks.size());
  std::vector<int> position(static_cast<std::size_t>(n));  // communicator rank -> group position
  for (int c = 0; c < n; ++c) {
    const int t = map.trace_rank[static_cast<std::size_t>(world_ranks[static_cast<std::size_t>(c)])];
    position[static_cast<std::size_t>(c)] =
        static_cast<int>(std::find(members.begin(), members.end(), t) - members.begin());
  }
  TrafficMatrix ordered{n, std::vector<std::uint64_t>(grouped.bytes.size(), 0)};
  for (int from = 0; from < n; ++from) {
    for (int to = 0; to < n; ++to) {
      ordered.bytes[static_cast<std::size_t>(from * n + to)] =
          grouped.at(position[static_cast<std::size_t>(from)], position[static_cast<std::size_t>(to)]);
    }
  }
  return std::make_shared<MatrixCase>(matrix_case(Op::alltoallv, ordered, comm_rank, element_bytes));
}

}  // namespace

RankMap identity_map(int trace_world_size, int world_size) {
  if (world_size != trace_world_size) {
    throw UsageError(
        fmt::format("the trace has {} ranks and the job {}: give --ranks-map (one trace rank per job rank, e.g. {})",
                    trace_world_size, world_size, trace_world_size == 2 && world_size == 4 ? "0,1,0,1" : "0,1,..."));
  }
  RankMap map;
  for (int r = 0; r < world_size; ++r) {
    map.trace_rank.push_back(r);
    map.copy.push_back(0);
  }
  return map;
}

RankMap parse_rank_map(std::string_view text, int trace_world_size, int world_size) {
  const std::vector<std::string_view> items = split_commas(text);
  if (static_cast<int>(items.size()) != world_size) {
    throw UsageError(fmt::format("--ranks-map '{}': {} entries for a job of {} ranks (one trace rank per job rank)",
                                 text, items.size(), world_size));
  }
  RankMap map;
  std::vector<int> seen(static_cast<std::size_t>(trace_world_size), 0);
  for (const std::string_view item : items) {
    double value = -1;
    try {
      value = parse_finite(item, "--ranks-map");
    } catch (const UsageError&) {
    }
    if (value != std::floor(value) || value < 0 || value >= trace_world_size) {
      throw UsageError(
          fmt::format("--ranks-map '{}': '{}' is not a rank of the trace (0 to {})", text, item, trace_world_size - 1));
    }
    const int rank = static_cast<int>(value);
    map.trace_rank.push_back(rank);
    map.copy.push_back(seen[static_cast<std::size_t>(rank)]++);
  }
  map.copies = seen.empty() ? 0 : seen[0];
  for (int r = 0; r < trace_world_size; ++r) {
    if (seen[static_cast<std::size_t>(r)] != map.copies) {
      throw UsageError(fmt::format(
          "--ranks-map '{}': trace rank {} appears {} times and rank 0 {}: every trace rank must appear equally "
          "often (each set of them replays the whole trace)",
          text, r, seen[static_cast<std::size_t>(r)], map.copies));
    }
  }
  return map;
}

double Gaps::wait_us(const std::optional<double>& gap_us) const {
  if (mode == Mode::none || !gap_us || !(*gap_us > 0)) return 0;
  return mode == Mode::scaled ? *gap_us * scale : *gap_us;
}

std::string_view name(Gaps::Mode mode) {
  switch (mode) {
    case Gaps::Mode::traced:
      return "traced";
    case Gaps::Mode::none:
      return "none";
    case Gaps::Mode::scaled:
      return "scaled";
  }
  return "traced";
}

Gaps parse_gaps(std::string_view text) {
  if (text == "traced") return {};
  if (text == "none") return {Gaps::Mode::none, 0.0};
  double scale = -1;
  try {
    scale = parse_finite(text, "--gaps");
  } catch (const UsageError&) {
  }
  if (!(scale >= 0) || scale > 1e6) {
    throw UsageError(fmt::format(
        "--gaps '{}': expected traced, none or a factor on the traced gaps (a number from 0 to 1e6)", text));
  }
  return {Gaps::Mode::scaled, scale};
}

std::optional<Op> replayed_op(trace::CallOp op) {
  switch (op) {
    case trace::CallOp::allreduce:
      return Op::allreduce;
    case trace::CallOp::allgather:
      return Op::allgather;
    case trace::CallOp::reduce_scatter:
      return Op::reduce_scatter;
    case trace::CallOp::alltoall:
      return Op::alltoall;
    case trace::CallOp::broadcast:
      return Op::broadcast;
    case trace::CallOp::reduce:
      return Op::reduce;
    case trace::CallOp::barrier:  // an allreduce of one float (kBarrierDType): make_plan
      return Op::allreduce;
    case trace::CallOp::alltoallv:
      return Op::alltoallv;
    default:
      return std::nullopt;
  }
}

ReplayPlan make_plan(const trace::Trace& trace, const RankMap& map, const std::string& trace_path) {
  ReplayPlan plan;
  plan.trace_world_size = trace.world_size;
  plan.world_size = static_cast<int>(map.trace_rank.size());
  plan.map = map;

  // World rank of (trace rank, copy).
  std::map<std::pair<int, int>, int> world_of;
  for (int w = 0; w < plan.world_size; ++w) {
    world_of[{map.trace_rank[static_cast<std::size_t>(w)], map.copy[static_cast<std::size_t>(w)]}] = w;
  }
  // One communicator per (group, copy), split once up front.
  std::map<std::pair<int, int>, int> comm_of;
  for (int g = 0; g < static_cast<int>(trace.groups.size()); ++g) {
    for (int c = 0; c < map.copies; ++c) {
      Communicator comm{g, c, {}};
      for (const int member : trace.groups[static_cast<std::size_t>(g)].ranks) {
        comm.world_ranks.push_back(world_of.at({member, c}));
      }
      std::sort(comm.world_ranks.begin(), comm.world_ranks.end());
      comm_of[{g, c}] = static_cast<int>(plan.communicators.size());
      plan.communicators.push_back(std::move(comm));
    }
  }
  std::map<std::string, int> group_index;
  for (int g = 0; g < static_cast<int>(trace.groups.size()); ++g) {
    group_index[trace.groups[static_cast<std::size_t>(g)].id] = g;
  }

  const CallMatrices call_matrix = alltoallv_matrices(trace, trace_path);

  // Call sites in order of first appearance over the trace's ranks; calls per step per rank.
  std::map<std::tuple<trace::CallOp, DType, std::uint64_t, std::string>, int> site_of;
  std::vector<std::map<int, int>> site_calls_by_rank;  // site -> trace rank -> calls
  std::vector<std::vector<PlannedCall>> per_trace_rank(static_cast<std::size_t>(trace.world_size));
  std::vector<std::int64_t> steps_seen;
  for (const trace::RankCalls& rank : trace.ranks) {
    auto& out = per_trace_rank[static_cast<std::size_t>(rank.rank)];
    for (std::size_t i = 0; i < rank.calls.size(); ++i) {
      const trace::Call& call = rank.calls[i];
      const bool point_to_point = call.op == trace::CallOp::send || call.op == trace::CallOp::recv;
      const std::optional<Op> op = point_to_point ? std::optional<Op>(Op::allreduce) : replayed_op(call.op);
      if (!op) {
        throw UsageError(
            fmt::format("{}: field 'op': {} is not replayed yet (replay runs allreduce, allgather, "
                        "reduce_scatter, alltoall, alltoallv, broadcast, reduce, barrier, send and recv)",
                        call_where(trace_path, rank.rank, i), trace::name(call.op)));
      }
      const int g = group_index.at(call.group);
      const trace::Group& group = trace.groups[static_cast<std::size_t>(g)];
      const int n = static_cast<int>(group.ranks.size());
      const OpBuffers buffers = info(*op).buffers;
      if (!point_to_point && (buffers == OpBuffers::scatter || buffers == OpBuffers::exchange) &&
          call.count % static_cast<std::uint64_t>(n) != 0) {
        throw UsageError(fmt::format("{}: field 'count': {} {} elements do not split over the {} ranks of group '{}'",
                                     call_where(trace_path, rank.rank, i), call.count, trace::name(call.op), n,
                                     call.group));
      }
      // alltoallv: one site per matrix total, the same on every member (each member's own count differs).
      std::shared_ptr<const TrafficMatrix> matrix;
      std::uint64_t site_count = call.count;
      std::uint64_t site_bytes = trace::send_bytes(call);
      if (call.op == trace::CallOp::alltoallv) {
        matrix = call_matrix.at({rank.rank, i});
        const MatrixLoad load = load_of(*matrix);
        site_bytes = load.total_bytes / static_cast<std::uint64_t>(n);
        site_count = site_bytes / info(call.dtype).size_bytes;
      }
      const auto key = std::make_tuple(call.op, call.dtype, site_count, call.group);
      auto [it, added] = site_of.emplace(key, static_cast<int>(plan.sites.size()));
      if (added) {
        plan.sites.push_back(CallSite{call.op, *op, call.dtype, site_count, call.group, n, site_bytes, 0});
        site_calls_by_rank.emplace_back();
      }
      ++site_calls_by_rank[static_cast<std::size_t>(it->second)][rank.rank];
      if (call.step && std::find(steps_seen.begin(), steps_seen.end(), *call.step) == steps_seen.end()) {
        steps_seen.push_back(*call.step);
      }
      PlannedCall planned;
      planned.site = it->second;
      planned.communicator = g;  // the group for now; the copy's communicator below
      planned.op = *op;
      // A barrier is an allreduce of one float on its group: one of zero bytes need not wait for
      // the other members (Open MPI returns from a count of 0 before communicating).
      const bool barrier = call.op == trace::CallOp::barrier;
      planned.dtype = barrier ? kBarrierDType : call.dtype;
      planned.redop = call.redop.value_or(RedOp::sum);
      planned.root = call.root.value_or(0);  // a rank in the trace's group order for now
      planned.comm_size = n;
      planned.layout = traced_layout(*op, barrier ? 1 : call.count, info(planned.dtype).size_bytes, n);
      planned.point_to_point = point_to_point;
      planned.send = call.op == trace::CallOp::send;
      planned.peer = call.peer.value_or(0);  // a rank in the trace's group order for now
      planned.gap_us = call.gap_us;
      if (matrix) planned.matrix = std::make_shared<MatrixCase>(MatrixCase{*matrix, {}, {}, {}, {}});  // group order
      out.push_back(planned);
    }
  }
  for (std::size_t s = 0; s < plan.sites.size(); ++s) {
    for (const auto& [rank, calls] : site_calls_by_rank[s]) {
      plan.sites[s].calls_per_step = std::max(plan.sites[s].calls_per_step, calls);
    }
  }
  plan.traced_steps = steps_seen.empty() ? 1 : static_cast<int>(steps_seen.size());
  check_groups_issued_alike(trace, trace_path);  // after the calls' own checks: those name the call
  check_sends_match_receives(trace, trace_path);

  // Each world rank: its trace rank's calls on its copy's communicators, the roots and its own
  // rank translated from the trace's group order to the communicator's (ascending world rank).
  plan.calls.resize(static_cast<std::size_t>(plan.world_size));
  for (int w = 0; w < plan.world_size; ++w) {
    const int trace_rank = map.trace_rank[static_cast<std::size_t>(w)];
    const int copy = map.copy[static_cast<std::size_t>(w)];
    auto& out = plan.calls[static_cast<std::size_t>(w)];
    out = per_trace_rank[static_cast<std::size_t>(trace_rank)];
    for (PlannedCall& call : out) {
      const int g = call.communicator;
      const Communicator& comm = plan.communicators[static_cast<std::size_t>(comm_of.at({g, copy}))];
      call.communicator = comm_of.at({g, copy});
      const auto comm_rank_of = [&](int world) {
        return static_cast<int>(std::find(comm.world_ranks.begin(), comm.world_ranks.end(), world) -
                                comm.world_ranks.begin());
      };
      const int root_trace = trace.groups[static_cast<std::size_t>(g)].ranks[static_cast<std::size_t>(call.root)];
      call.root = comm_rank_of(world_of.at({root_trace, copy}));
      call.comm_rank = comm_rank_of(w);
      if (call.point_to_point) {
        const int peer_trace = trace.groups[static_cast<std::size_t>(g)].ranks[static_cast<std::size_t>(call.peer)];
        call.peer = comm_rank_of(world_of.at({peer_trace, copy}));
      }
      if (call.comm_rank == static_cast<int>(comm.world_ranks.size())) {
        throw UsageError(fmt::format("{}: trace rank {} calls on group '{}', which does not hold it", trace_path,
                                     trace_rank, trace.groups[static_cast<std::size_t>(g)].id));
      }
      if (call.matrix) {
        const std::uint64_t element_bytes = info(call.dtype).size_bytes;
        auto side = in_communicator_order(call.matrix->matrix, trace.groups[static_cast<std::size_t>(g)].ranks,
                                          comm.world_ranks, map, call.comm_rank, element_bytes);
        call.layout = matrix_layout(*side, element_bytes);
        call.matrix = std::move(side);
      }
    }
  }
  return plan;
}

}  // namespace ccbench::replay
