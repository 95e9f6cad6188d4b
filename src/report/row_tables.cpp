#include "report/row_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "core/percentiles.hpp"
#include "report/console_table.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {

namespace {

// A table of the rows `has` picks: the columns that name a row, then `columns` (all numbers but
// those `text` marks), a row's cells from `cells`.
RowTable rows_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels,
                    const std::vector<std::string>& columns, const std::vector<bool>& text,
                    const std::function<bool(const ResultRow&)>& has,
                    const std::function<std::vector<std::string>(const ResultRow&)>& cells) {
  RowTable t;
  t.header = {"run", "op", "size", "place", "trial"};
  t.numeric = {false, false, true, false, true};
  for (std::size_t c = 0; c < columns.size(); ++c) {
    t.header.push_back(columns[c]);
    t.numeric.push_back(c >= text.size() || !text[c]);
  }
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (const ResultRow& r : files[f].results) {
      if (!has(r)) continue;
      std::vector<std::string> row = {labels[f], r.op, human_bytes(r.bytes), std::string(place_name(r.in_place)),
                                      std::to_string(r.trial)};
      for (auto& c : cells(r)) row.push_back(std::move(c));
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

std::string number(const std::optional<double>& v) { return v ? sig(*v) : std::string("—"); }

}  // namespace

RowTable percentile_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels) {
  const std::vector<double> levels = percentile_levels(files);
  if (levels.empty()) return {};
  std::vector<std::string> columns;
  for (const double p : levels) columns.push_back(percentiles::key(p) + " µs [95% CI]");
  return rows_table(
      files, labels, columns, {}, [](const ResultRow& r) { return r.extra.contains("percentiles_us"); },
      [&](const ResultRow& r) {
        std::vector<std::string> cells;
        for (const double p : levels) {
          const auto level = percentile_value(r, p);
          if (!level) {
            cells.emplace_back("—");
            continue;
          }
          cells.push_back(level->ci95_us ? fmt::format("{} [{}, {}]", sig(level->value_us), sig(level->ci95_us->first),
                                                       sig(level->ci95_us->second))
                                         : fmt::format("{} (no CI)", sig(level->value_us)));
        }
        return cells;
      });
}

RowTable matrix_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels) {
  // The bound column only when some row has one (a run with --link-gbps), as the text table.
  bool bound = false;
  for (const auto& f : files) {
    for (const auto& r : f.results) {
      if (const auto m = matrix_fields(r)) bound = bound || m->bound_us.has_value();
    }
  }
  std::vector<std::string> columns = {"imbalance", "most-loaded GB/s"};
  if (bound) columns.emplace_back("bound µs");
  return rows_table(
      files, labels, columns, {}, [](const ResultRow& r) { return matrix_fields(r).has_value(); },
      [&](const ResultRow& r) {
        const MatrixFields m = *matrix_fields(r);
        std::vector<std::string> cells = {number(m.imbalance), number(m.most_loaded_gbps)};
        if (bound) cells.push_back(number(m.bound_us));
        return cells;
      });
}

RowTable pattern_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels) {
  return rows_table(
      files, labels, {"pattern", "peer group", "block", "aggregate GB/s", "per-receiver GB/s"}, {true},
      [](const ResultRow& r) { return pattern_fields(r).has_value(); },
      [](const ResultRow& r) {
        const PatternFields p = *pattern_fields(r);
        const auto whole = [](const std::optional<double>& v) {
          return v && *v >= 0 ? fmt::format("{:.0f}", *v) : std::string("—");
        };
        const auto bytes = [](const std::optional<double>& v) {
          // Below 2^64, or the cast is undefined (a fuzzed file's 1e30).
          return v && *v >= 0 && *v < 0x1p64 ? human_bytes(static_cast<std::uint64_t>(*v)) : std::string("—");
        };
        return std::vector<std::string>{p.pattern.empty() ? std::string("—") : p.pattern, whole(p.peer_group),
                                        bytes(p.block_bytes), number(p.aggregate_gbps), number(p.per_receiver_gbps)};
      });
}

RowTable expected_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels) {
  // The reason column only when some row is not covered.
  bool uncovered = false;
  for (const auto& f : files)
    for (const auto& r : f.results)
      if (const auto e = expected_fields(r)) uncovered = uncovered || !e->covered();
  std::vector<std::string> columns = {"measured", "band", "predicted", "verdict", "shortfall", "basis"};
  std::vector<bool> text = {false, false, false, true, false, true};
  if (uncovered) {
    columns.emplace_back("why not covered");
    text.push_back(true);
  }
  return rows_table(
      files, labels, columns, text, [](const ResultRow& r) { return expected_fields(r).has_value(); },
      [uncovered](const ResultRow& r) {
        const ExpectedFields e = *expected_fields(r);
        std::vector<std::string> cells;
        if (!e.covered()) {
          cells = {"—", "—", "—", e.verdict.empty() ? "—" : e.verdict, "—", "—"};
        } else {
          const std::string unit = e.metric == "time_us" ? " µs" : " GB/s";
          const auto value = [&](const std::optional<double>& v) { return v ? sig(*v, 3) + unit : std::string("—"); };
          cells = {value(e.measured),
                   e.lo && e.hi ? fmt::format("{} [{}, {}]{}", e.band, sig(*e.lo, 3), sig(*e.hi, 3), unit) : "—",
                   value(e.predicted),
                   e.verdict,
                   e.shortfall_pct ? fmt::format("{:+.1f}%", *e.shortfall_pct) : "—",
                   e.basis.empty() ? "—" : e.basis};
        }
        if (uncovered) cells.push_back(e.covered() || e.reason.empty() ? "—" : e.reason);
        return cells;
      });
}

std::vector<std::string> expected_summaries(const std::vector<ResultFile>& files,
                                            const std::vector<std::string>& labels) {
  std::vector<std::string> out;
  for (std::size_t f = 0; f < files.size(); ++f) {
    std::map<std::string, int> counts;
    std::set<std::string> models, bands;
    int rows = 0;
    for (const auto& r : files[f].results) {
      const auto e = expected_fields(r);
      if (!e) continue;
      ++rows;
      ++counts[e->verdict.empty() ? "unknown" : e->verdict];
      if (!e->model.empty()) models.insert(e->model);
      if (!e->band.empty()) bands.insert(e->band);
    }
    if (rows == 0) continue;
    std::string parts;
    for (const char* v : {"normal", "below", "above", "not_covered", "unknown"}) {
      if (!counts.contains(v)) continue;
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", counts[v],
                           std::string_view(v) == "not_covered" ? "not covered" : v);
    }
    const auto joined = [](const std::set<std::string>& s) {
      std::string t;
      for (const auto& x : s) t += (t.empty() ? "" : ", ") + x;
      return t;
    };
    out.push_back(fmt::format("{}: {} row{} against {}{}: {}", labels[f], rows, rows == 1 ? "" : "s",
                              models.empty() ? std::string("a model") : joined(models),
                              bands.empty() ? "" : " (" + joined(bands) + " band)", parts));
  }
  return out;
}

}  // namespace ccbench::report
