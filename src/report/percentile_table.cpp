#include "report/percentile_table.hpp"

#include <fmt/format.h>

#include "core/percentiles.hpp"
#include "report/console_table.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {

PercentileTable percentile_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels) {
  PercentileTable t;
  const std::vector<double> levels = percentile_levels(files);
  if (levels.empty()) return t;
  t.header = {"run", "op", "size", "place", "trial"};
  for (const double p : levels) t.header.push_back(percentiles::key(p) + " µs [95% CI]");
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (const ResultRow& r : files[f].results) {
      if (!r.extra.contains("percentiles_us")) continue;
      std::vector<std::string> cells = {labels[f], r.op, human_bytes(r.bytes), std::string(place_name(r.in_place)),
                                        std::to_string(r.trial)};
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
      t.rows.push_back(std::move(cells));
    }
  }
  return t;
}

}  // namespace ccbench::report
