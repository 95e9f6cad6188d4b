#include "congestion_run/instruments.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>

#include "core/pattern.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "sweep/session.hpp"

namespace ccbench::congestion_run {
namespace {

using namespace ccbench::congestion;

// The measured tests: allreduce at --lat-bytes and --bw-bytes, alltoall at --bw-bytes.
Plan measured_plan(const RunConfig& base, const Backend& backend, int nranks, int rank, const CongestionOptions& opt) {
  Plan plan;
  const auto add = [&](Op op, std::uint64_t bytes) {
    RunConfig c = base;
    c.ops = {op};
    c.sizes = SizeRange{bytes, bytes, 2.0, 0};
    const Plan one = make_plan(c, backend, nranks, rank);
    for (const auto& s : one.skipped) plan.skipped.push_back(s);
    for (const auto& o : one.ops) {
      if (!plan.ops.empty() && plan.ops.back().op == o.op) {
        for (const auto& size : o.sizes) plan.ops.back().sizes.push_back(size);
      } else {
        plan.ops.push_back(o);
      }
    }
    plan.send_bytes = std::max(plan.send_bytes, one.send_bytes);
    plan.recv_bytes = std::max(plan.recv_bytes, one.recv_bytes);
    plan.cases_per_trial += one.cases_per_trial;
  };
  add(Op::allreduce, opt.lat);
  if (opt.bw != opt.lat) add(Op::allreduce, opt.bw);
  add(Op::alltoall, opt.bw);
  return plan;
}

// One congestor op of a pattern on this rank's group.
CaseSpec congestor_case(const RunConfig& base, const Backend& backend, const PatternRoles& roles, int world_rank,
                        std::uint64_t bytes, Plan& plan) {
  for (std::size_t g = 0; g < roles.groups.size(); ++g) {
    const auto& group = roles.groups[g];
    const auto it = std::find(group.begin(), group.end(), world_rank);
    if (it == group.end()) continue;
    RunConfig c = base;
    c.ops = {roles.pattern == Pattern::alltoall ? Op::alltoall : Op::broadcast};
    c.sizes = SizeRange{bytes, bytes, 2.0, 0};
    c.root = 0;
    if (roles.roots[g] >= 0) {
      c.root = static_cast<int>(std::find(group.begin(), group.end(), roles.roots[g]) - group.begin());
    }
    plan = make_plan(c, backend, static_cast<int>(group.size()), static_cast<int>(it - group.begin()));
    return plan.ops.at(0).sizes.at(0).variants.at(0);
  }
  throw std::logic_error("congestor_case: rank in no group");
}

std::unique_ptr<Backend> backend_for(ControlChannel& world, const RunConfig& config, int color,
                                     const MakeBackend& make_backend) {
  BackendOptions options;
  options.local_rank = world.local_rank();
  options.local_size = world.local_size();
  options.channel = &world;
  options.group_color = color;
  return make_backend(config.backend, options);
}

// The measured channel and backend, then one active channel and backend per pattern.
void make_channels_and_backends(Instruments& in, ControlChannel& world, const RunConfig& config, const Layout& layout,
                                const MakeBackend& make_backend) {
  const int rank = world.rank();
  const bool measured = layout.is_measured(rank);
  in.measured_channel = world.split(measured ? kMeasuredColor : kIdleColor);
  in.measured_backend = backend_for(world, config, measured ? kMeasuredColor : kIdleColor, make_backend);
  for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
    const int color = layout.patterns[p].color[static_cast<std::size_t>(rank)];
    in.active[p] = color >= kFirstActiveColor;
    in.active_channels.push_back(world.split(in.active[p] ? 0 : 1));
    in.pattern_backends.push_back(backend_for(world, config, color, make_backend));
  }
}

void plan_cases(Instruments& in, int rank, const RunConfig& config, const CongestionOptions& opt,
                const Layout& layout) {
  if (layout.is_measured(rank)) {
    in.plan =
        measured_plan(config, *in.measured_backend, in.measured_channel->size(), in.measured_channel->rank(), opt);
  }
  for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
    if (in.active[p]) {
      in.pattern_cases[p] =
          congestor_case(config, *in.pattern_backends[p], layout.patterns[p], rank, opt.congestor, in.pattern_plans[p]);
    }
  }
}

// Buffers that cannot fit are named by their flag before anything is allocated (an allocation of
// --bw-bytes 1T said only "std::bad_alloc"). Returns the error, "" when every plan fits.
std::string buffers_error(const Instruments& in, ControlChannel& world, const CongestionOptions& opt,
                          const Layout& layout) {
  const auto fits = [&](const Plan& p, const Backend& b) {
    const std::uint64_t need = buffer_bytes_needed(p);
    const std::uint64_t budget = b.memory_budget_bytes(world.local_size());
    return need != std::numeric_limits<std::uint64_t>::max() && (budget == 0 || need <= budget);
  };
  const auto too_big = [&](const std::string& flag, const Plan& p, const Backend& b) {
    const std::uint64_t need = buffer_bytes_needed(p);
    const std::uint64_t budget = b.memory_budget_bytes(world.local_size());
    return fmt::format(
        "{}: needs {:.1f} MiB of buffers per rank, but only {:.1f} MiB is available per rank ({} "
        "ranks on this node)",
        flag, static_cast<double>(need) / 1048576.0, static_cast<double>(budget) / 1048576.0, world.local_size());
  };
  if (layout.is_measured(world.rank()) && !fits(in.plan, *in.measured_backend)) {
    return too_big(opt.bw >= opt.lat ? "--bw-bytes " + format_bytes(opt.bw) : "--lat-bytes " + format_bytes(opt.lat),
                   in.plan, *in.measured_backend);
  }
  for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
    if (in.active[p] && !fits(in.pattern_plans[p], *in.pattern_backends[p])) {
      return too_big("--congestor-bytes " + format_bytes(opt.congestor), in.pattern_plans[p], *in.pattern_backends[p]);
    }
  }
  return "";
}

// The measured buffers, and each active pattern's buffers filled with its data pattern.
void allocate_and_fill(Instruments& in, int rank, const RunConfig& config, const Layout& layout) {
  if (layout.is_measured(rank)) in.measured_backend->allocate(in.plan.send_bytes, in.plan.recv_bytes);
  for (std::size_t p = 0; p < layout.patterns.size(); ++p) {
    if (!in.active[p]) continue;
    in.pattern_backends[p]->allocate(in.pattern_plans[p].send_bytes, in.pattern_plans[p].recv_bytes);
    pattern::Params params;
    params.nranks = in.pattern_cases[p].nranks;
    params.seed = config.seed;
    params.exact_limit = info(in.pattern_cases[p].dtype).exact_int_limit;
    params.is_signed = info(in.pattern_cases[p].dtype).is_signed;
    params.root = in.pattern_cases[p].root;
    in.pattern_backends[p]->fill(in.pattern_cases[p], params);
  }
}

}  // namespace

void Instruments::release() {
  pattern_backends.clear();
  measured_backend.reset();
  active_channels.clear();
  measured_channel.reset();
}

Instruments set_up_instruments(ControlChannel& world, const RunConfig& config, const CongestionOptions& opt,
                               const Layout& layout, const MakeBackend& make_backend) {
  Instruments in;
  in.pattern_cases.resize(layout.patterns.size());
  in.active.assign(layout.patterns.size(), false);
  in.pattern_plans.resize(layout.patterns.size());
  std::string error;
  try {
    make_channels_and_backends(in, world, config, layout, make_backend);
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_or_throw(world, error);
  try {
    plan_cases(in, world.rank(), config, opt, layout);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (error.empty()) error = buffers_error(in, world, opt, layout);
  agree_or_throw(world, error);
  try {
    allocate_and_fill(in, world.rank(), config, layout);
  } catch (const std::bad_alloc&) {
    error = fmt::format("--bw-bytes {} / --congestor-bytes {}: cannot allocate the buffers on rank {}",
                        format_bytes(opt.bw), format_bytes(opt.congestor), world.rank());
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_or_throw(world, error);
  return in;
}

}  // namespace ccbench::congestion_run
