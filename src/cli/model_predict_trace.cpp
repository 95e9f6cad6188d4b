// `ccbench model predict MODEL... --trace TRACE.json [--ranks-per-node R] [--profiles A,B]
// [--migrate FROM:TO] [--format text|json]`: every call of a job's trace priced on each profile, the
// step's communication time with its 90% band, and a migration's delta (docs/model.md, "Pricing a
// trace"). The pricing is src/model/trace_price; this file reads the flags and prints.
//
// Exit codes: 0 priced (point-to-point calls without a fabric curve, reduce and barrier listed as
// not priced, with the reason); 2 a bad flag, a model or trace file that does not load (the message
// names the file and field), a collective a profile cannot price, a --migrate profile not priced.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/model_command.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "model/model.hpp"
#include "model/plan.hpp"
#include "model/trace_price.hpp"
#include "trace/trace.hpp"

namespace ccbench::cli {
namespace {

// The job's ranks per node when not given: the one layout the models' collectives were fitted on.
int fitted_ranks_per_node(const std::vector<model::Model>& models) {
  std::set<int> layouts;
  for (const auto& m : models)
    for (const auto& g : m.groups())
      if (info(g.op).family == OpFamily::collective) layouts.insert(g.ranks_per_node);
  if (layouts.size() != 1)
    throw UsageError(
        fmt::format("--ranks-per-node: give the job's ranks per node (the models' collectives were "
                    "fitted with {})",
                    layouts.empty() ? std::string("none") : fmt::format("{}", fmt::join(layouts, ", "))));
  return *layouts.begin();
}

std::string band(const model::Interval& x) {
  return fmt::format("{} [{}, {}]", format_time(x.value), format_time(x.lo), format_time(x.hi));
}

std::string ratio_band(const model::Interval& x) {
  if (!std::isfinite(x.value)) return "-";
  return fmt::format("{:.3g}x [{:.3g}, {:.3g}]", x.value, x.lo, x.hi);
}

void print_text(const model::TraceStep& step, const std::vector<model::TraceProfile>& profiles,
                const std::optional<model::TraceMigration>& migration) {
  const int nodes = (step.world_size + step.ranks_per_node - 1) / step.ranks_per_node;
  std::printf("Trace: %s (%s), %d ranks = %d nodes x %d, %lld step%s\n", step.source.c_str(), step.format.c_str(),
              step.world_size, nodes, step.ranks_per_node, static_cast<long long>(step.steps),
              step.steps == 1 ? "" : "s");
  if (step.calls_outside_steps > 0)
    std::printf("  %llu calls outside the traced steps (no step marker): not in the step\n",
                static_cast<unsigned long long>(step.calls_outside_steps));
  std::printf("\nCall sites of one step (calls per step: per rank issuing them):\n");
  std::printf("  %3s %-14s %-9s %12s %-10s %5s %5s %12s %14s %5s\n", "#", "op", "dtype", "count", "group", "size",
              "nodes", "bytes (S)", "calls per step", "ranks");
  for (std::size_t i = 0; i < step.sites.size(); ++i) {
    const model::TraceSite& s = step.sites[i];
    const bool p2p = s.op == trace::CallOp::send || s.op == trace::CallOp::recv;
    const std::string op =
        p2p ? fmt::format("{} ({})", trace::name(s.op), s.nodes == 1 ? "node" : "net") : std::string(trace::name(s.op));
    std::printf("  %3zu %-14s %-9s %12llu %-10s %5d %5d %12s %14.4g %5zu\n", i + 1, op.c_str(),
                std::string(name(s.dtype)).c_str(), static_cast<unsigned long long>(s.count), s.group.c_str(),
                s.group_size, s.nodes, format_bytes(s.bytes).c_str(), s.calls_per_step, s.calls_by_rank.size());
  }
  std::printf("\nCommunication time per step (90%% band; the slowest rank's priced calls):\n");
  std::printf("  %-20s %-36s %5s %8s %s\n", "profile", "step", "rank", "unpriced", "notes");
  for (const auto& p : profiles) {
    std::string marks = p.from_spec ? "from spec" : "";
    if (p.extrapolated) marks += marks.empty() ? "extrapolated" : ", extrapolated";
    std::printf("  %-20s %-36s %5d %8d %s\n", p.profile.c_str(), band(p.step_us).c_str(), p.critical_rank, p.unpriced,
                marks.c_str());
  }
  // Columns padded between profiles, none after the last.
  const auto print_row = [](std::string line) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::printf("%s\n", line.c_str());
  };
  std::printf("\nPer call site, per step and rank issuing it (90%% band):\n");
  std::string columns = fmt::format("  {:>3}", "#");
  for (const auto& p : profiles) columns += fmt::format(" {:<36}", p.profile);
  print_row(columns);
  for (std::size_t i = 0; i < step.sites.size(); ++i) {
    std::string line = fmt::format("  {:>3}", i + 1);
    for (const auto& p : profiles)
      line += fmt::format(" {:<36}", p.sites[i].priced ? band(p.sites[i].step_us) : std::string("not priced"));
    print_row(line);
  }
  // Each profile's notes, one line per note with the sites it applies to (as plan's).
  bool header = false;
  for (const auto& p : profiles) {
    std::vector<std::pair<std::string, std::vector<std::size_t>>> notes;
    for (std::size_t i = 0; i < p.sites.size(); ++i) {
      if (p.sites[i].note.empty()) continue;
      auto it = std::ranges::find(notes, p.sites[i].note, &std::pair<std::string, std::vector<std::size_t>>::first);
      if (it == notes.end()) it = notes.insert(notes.end(), {p.sites[i].note, {}});
      it->second.push_back(i + 1);
    }
    for (const auto& [note, sites] : notes) {
      if (!header) std::printf("\nNotes:\n  %-20s %-10s %s\n", "profile", "#", "note");
      header = true;
      std::printf("  %-20s %-10s %s\n", p.profile.c_str(), fmt::format("{}", fmt::join(sites, ", ")).c_str(),
                  note.c_str());
    }
  }
  if (migration) {
    std::printf("\nMigration %s -> %s (%d call sites priced on both):\n", migration->from.c_str(),
                migration->to.c_str(), migration->sites_compared);
    std::printf("  step %s -> %s\n", band(migration->from_step_us).c_str(), band(migration->to_step_us).c_str());
    std::printf("  change per step %s (90%% interval), ratio %s\n", band(migration->delta_us).c_str(),
                ratio_band(migration->ratio).c_str());
  }
}

}  // namespace

int predict_trace(const TracePredictFlags& flags) {
  return run_reporting_errors("ccbench model predict", [&] {
    std::optional<std::pair<std::string, std::string>> migration;
    if (!flags.migrate.empty()) migration = model::parse_migrate(flags.migrate);
    std::vector<model::Model> models;
    for (const auto& f : flags.models) models.push_back(model::Model::load(f));
    const int ranks_per_node = flags.ranks_per_node > 0 ? flags.ranks_per_node : fitted_ranks_per_node(models);
    const trace::Trace traced = trace::load(flags.trace);
    const auto names = model::profiles_to_price(models, flags.profiles, migration);
    const model::Pricer price = model::first_measured(models);
    const model::TraceStep step = model::trace_step(traced, ranks_per_node, flags.trace);
    std::vector<model::TraceProfile> priced;
    for (const auto& profile : names) {
      priced.push_back(model::price_trace(step, profile, price));
      model::require_collectives_priced(step, priced.back());
    }
    std::optional<model::TraceMigration> moved;
    if (migration) moved = model::migrate(step, priced, *migration);
    if (flags.format == "json") {
      std::printf("%s\n", model::to_json(step, priced, moved).dump(1).c_str());
    } else {
      print_text(step, priced, moved);
    }
    return exit_code::ok;
  });
}

}  // namespace ccbench::cli
