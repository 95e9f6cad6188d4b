// Text tables in the layout nccl-tests users read every day, the same lines `ccbench run` prints
// live (report/console_table.hpp): per run, per op and trial, out-of-place and in-place side by
// side, with the CI each row reached.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/host_load_note.hpp"
#include "core/run_metadata.hpp"
#include "report/console_table.hpp"
#include "report/plan_table.hpp"
#include "report/renderers.hpp"
#include "report/report_common.hpp"
#include "report/row_tables.hpp"

namespace ccbench::report {

std::string render_table(const ReportInput& input) {
  std::string out;
  const auto labels = display_labels(input.files);
  for (std::size_t f = 0; f < input.files.size(); ++f) {
    const ResultFile& file = input.files[f];
    out += fmt::format("# ccbench report: {}{}\n", labels[f], file.source.empty() ? "" : " (" + file.source + ")");
    out +=
        fmt::format("# instance {} | nodes {} | ranks {} | fabric {} {} | status {}\n",
                    meta(file, "system", "instance_type"), meta(file, "system", "nodes"), meta(file, "system", "ranks"),
                    meta(file, "fabric", "path"), meta(file, "fabric", "generation"), file.run.status);
    if (const auto busy = busy_host_note(file.system)) out += "# " + *busy + "\n";
    // A --groups run: its layout, and the aggregate busbw of all groups as the last columns.
    const bool grouped =
        std::ranges::any_of(file.results, [](const ResultRow& r) { return r.extra.contains("groups"); });
    if (const auto g = file.config.find("groups"); g != file.config.end() && g->is_object()) {
      const auto text = [&](const char* key) { return g->contains(key) ? metadata_text((*g)[key]) : std::string("?"); };
      out += fmt::format("# groups {} | {} concurrent groups of {} ranks | up to {} node(s) per group\n", text("spec"),
                         text("count"), text("ranks_per_group"), text("nodes_per_group"));
    }
    // One table per (op, backend, dtype, redop) and trial, in the order the rows appear.
    using TableKey = std::tuple<std::string, std::string, std::string, std::string, int>;
    std::vector<TableKey> order;
    std::map<TableKey, std::map<std::uint64_t, std::pair<const ResultRow*, const ResultRow*>>> tables;
    std::set<int> trials;
    for (const ResultRow& r : file.results) {
      trials.insert(r.trial);
      const TableKey key{r.op, r.backend, r.dtype, r.redop, r.trial};
      auto [it, inserted] = tables.try_emplace(key);
      if (inserted) order.push_back(key);
      auto& slot = it->second[r.bytes];
      (r.in_place ? slot.second : slot.first) = &r;
    }
    // Ops together, trials in order within an op.
    std::vector<std::string> ops;
    for (const auto& k : order) {
      if (std::ranges::find(ops, std::get<0>(k)) == ops.end()) ops.push_back(std::get<0>(k));
    }
    std::ranges::stable_sort(order, {}, [&](const TableKey& k) {
      return std::pair{std::ranges::find(ops, std::get<0>(k)) - ops.begin(), std::get<4>(k)};
    });
    const int ntrials = static_cast<int>(trials.size());
    // --groups and --percentiles columns for every table of the file, as the run printed them; a
    // matrix op's or a patterned sendrecv's for the tables whose rows hold those fields.
    TableColumns file_columns;
    file_columns.groups = grouped;
    file_columns.percentiles = percentile_levels(file.results);
    for (const auto& key : order) {
      const auto& [op, backend, dtype, redop, trial] = key;
      TableColumns columns = file_columns;
      for (const auto& [bytes, pair] : tables[key]) {
        for (const ResultRow* r : {pair.first, pair.second}) {
          if (r != nullptr) columns.include(*r);
        }
      }
      out += table_header(op + " (" + backend + ")", trial, ntrials, columns);
      for (const auto& [bytes, pair] : tables[key]) out += table_row(pair.first, pair.second, columns);
    }
    // Rows judged against a model: the counts under the file's tables.
    if (std::ranges::any_of(file.results, [](const ResultRow& r) { return r.extra.contains("expected"); }))
      for (const auto& line : expected_summaries({file}, {labels[f]})) out += "# expected: " + line + "\n";
    out += "\n";
  }
  out += model_overlay_text(input);
  if (input.plan) {
    out += '\n';
    out += plan_text(*input.plan);
  }
  return out;
}

}  // namespace ccbench::report
