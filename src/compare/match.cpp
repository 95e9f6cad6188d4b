#include "compare/match.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "core/percentiles.hpp"
#include "core/stats.hpp"

namespace ccbench::compare {

bool time_only_op(const std::string& op) { return op == "checkpoint_commit"; }

bool Scope::contains(const std::string& op, std::uint64_t bytes) const {
  if (bytes < min_bytes || bytes > max_bytes) return false;
  if (ops.empty()) return !time_only_op(op);
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

namespace {

// Rows in the byte range that the default scope left out because they carry a time only.
std::size_t time_only_rows(const Side& side, const Scope& scope) {
  if (!scope.ops.empty()) return 0;
  std::size_t n = 0;
  for (const auto& f : side.files) {
    for (const auto& row : f.results) {
      n += time_only_op(row.op) && row.bytes >= scope.min_bytes && row.bytes <= scope.max_bytes ? 1 : 0;
    }
  }
  return n;
}

struct Accumulated {
  std::map<int, std::vector<double>> trials;  // dense trial id -> samples
  SideSize info;
};

// --statistic pNN is asked of rows measured with --percentiles: the level must be among the row's.
void require_percentile(const ResultFile& file, std::size_t index, const ResultRow& row, double percent) {
  const std::string key = percentiles::key(percent);
  const auto& levels = row.extra.contains("percentiles_us") ? row.extra["percentiles_us"] : nlohmann::json();
  if (levels.is_object() && levels.contains(key)) return;
  throw UsageError(
      fmt::format("--statistic {}: {}: /results/{} ({} {} B) has no percentiles_us.{} (measure with "
                  "--percentiles {}: run, fabric, congestion or replay)",
                  key, file.source, index, row.op, row.bytes, key, key.substr(1)));
}

}  // namespace

std::string matrix_identity(const ResultRow& row) {
  // sendrecv --pattern / --block-bytes: other peers or blocks are other traffic, as another matrix.
  const auto kv = row.extra.find("sendrecv_pattern");
  if (kv != row.extra.end() && kv->is_object()) {
    const auto field = [&](const char* key) { return kv->contains(key) ? (*kv)[key].dump() : std::string("null"); };
    return "sendrecv pattern " + field("pattern") + " peer_group " + field("peer_group") + " block_bytes " +
           field("block_bytes");
  }
  const auto matrix = row.extra.find("matrix");
  if (matrix == row.extra.end() || !matrix->is_object()) return "";
  const auto source = matrix->find("source");
  if (source == matrix->end() || !source->is_object()) return "";
  const auto text = [&](const char* key) {
    const auto v = source->find(key);
    return v != source->end() ? (v->is_string() ? v->get<std::string>() : v->dump()) : std::string();
  };
  if (source->contains("sha256")) return "matrix sha256 " + text("sha256");
  if (source->contains("moe")) return "moe " + text("moe") + " seed " + text("seed");
  return "matrix " + source->dump();
}

namespace {

std::map<RowKey, Accumulated> accumulate(const Side& side, const Scope& scope, std::optional<double> row_percentile,
                                         int& trial_count) {
  std::map<RowKey, Accumulated> out;
  std::map<std::pair<std::size_t, int>, int> dense;  // (file index, trial) -> dense id
  for (std::size_t f = 0; f < side.files.size(); ++f) {
    for (std::size_t index = 0; index < side.files[f].results.size(); ++index) {
      const ResultRow& row = side.files[f].results[index];
      if (!scope.contains(row.op, row.bytes)) continue;
      if (row_percentile) require_percentile(side.files[f], index, row, *row_percentile);
      const auto [it, inserted] = dense.try_emplace({f, row.trial}, static_cast<int>(dense.size()));
      RowKey key{row.op, row.dtype, row.redop, row.in_place, row.bytes, row.ranks, matrix_identity(row)};
      auto& acc = out[key];
      auto& samples = acc.trials[it->second];
      if (row.samples_us.empty()) {
        samples.push_back(row.time_us.median);
        acc.info.summary = true;
      } else {
        samples.insert(samples.end(), row.samples_us.begin(), row.samples_us.end());
      }
      acc.info.summary = acc.info.summary || row.samples_kind == "summary";
      acc.info.rows += 1;
      acc.info.rows_ci_not_met += (row.samples_kind == "raw" && !row.ci_target_met) ? 1 : 0;
      acc.info.wrong += row.wrong;
      if (acc.info.backend.empty()) acc.info.backend = row.backend;
    }
  }
  trial_count = static_cast<int>(dense.size());
  return out;
}

SideSize finish(Accumulated&& acc, std::optional<double> row_percentile) {
  SideSize s = std::move(acc.info);
  s.percentile = row_percentile;
  std::size_t total = 0;
  for (const auto& [id, samples] : acc.trials) total += samples.size();
  s.pooled.reserve(total);
  for (auto& [id, samples] : acc.trials) {
    s.pooled.insert(s.pooled.end(), samples.begin(), samples.end());
    std::sort(samples.begin(), samples.end());
    s.trial_ids.push_back(id);
    s.trial_medians.push_back(row_percentile ? stats::quantile_sorted(samples, *row_percentile / 100.0)
                                             : stats::median_sorted(samples));
  }
  std::sort(s.pooled.begin(), s.pooled.end());
  return s;
}

}  // namespace

Matched match_sides(const Side& baseline, const Side& candidate, const Scope& scope,
                    std::optional<double> row_percentile) {
  Matched m;
  auto base = accumulate(baseline, scope, row_percentile, m.baseline_trials);
  auto cand = accumulate(candidate, scope, row_percentile, m.candidate_trials);
  m.time_only_left_out = time_only_rows(baseline, scope) + time_only_rows(candidate, scope);
  for (auto& [key, acc] : base) {
    auto it = cand.find(key);
    if (it == cand.end()) {
      m.only_in_baseline.push_back(key);
      continue;
    }
    m.sizes.push_back({key, finish(std::move(acc), row_percentile), finish(std::move(it->second), row_percentile)});
  }
  for (const auto& [key, acc] : cand) {
    if (!base.contains(key)) m.only_in_candidate.push_back(key);
  }
  return m;
}

}  // namespace ccbench::compare
