// Inline SVG stacked horizontal bars for the HTML report (the checkpoint chart's phases per rank):
// one bar per row, its segments laid end to end from the row's offset, a legend of the segments.
// Static markup like svg_chart.hpp: no script, native tooltips.
#pragma once

#include <string>
#include <vector>

namespace ccbench::report {

struct BarSegment {
  std::string name;  // legend
  std::string color;
};

struct Bar {
  std::string label;           // left of the bar
  double offset = 0;           // blank before the first segment (a rank's start after the barrier)
  std::vector<double> values;  // one per segment, in the segments' order; negative or NaN counts 0
  std::string tooltip;
};

struct BarChartSpec {
  std::string title;
  std::string x_label;
  int width = 600;
  int row_height = 18;
};

std::string svg_stacked_bars(const BarChartSpec& spec, const std::vector<BarSegment>& segments,
                             const std::vector<Bar>& bars);

}  // namespace ccbench::report
