// Inline SVG line charts for the HTML report: log or linear axes, one polyline per series, a shaded
// band per series (a confidence interval), markers with native tooltips, a legend. No script: the
// chart is static markup any browser renders, and the page stays self-contained.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/report_common.hpp"

namespace ccbench::report {

struct ChartPoint {
  double x = 0, y = 0;
  double lo = kNaN, hi = kNaN;  // band; NaN draws none
  std::string tooltip;
};

struct ChartSeries {
  std::string name;
  std::string color;
  bool dashed = false;
  std::vector<ChartPoint> points;  // ascending x
};

struct ChartSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = true;
  bool x_is_bytes = true;  // tick labels 8, 1K, 1M, ... at powers of two
  bool log_y = true;
  std::optional<double> reference_y;                     // a horizontal rule (a ratio of 1)
  std::optional<std::pair<double, double>> target_band;  // a shaded horizontal band (a claim)
  int width = 600;
  int height = 340;  // plot and axes; the legend adds below
};

std::string svg_line_chart(const ChartSpec& spec, const std::vector<ChartSeries>& series);

// The n-th colour of a palette that stays distinguishable for common colour-vision deficiencies.
std::string series_color(std::size_t index);

// A 1-2-5 tick step giving at most about `target` intervals over a span (linear axes, bars).
double nice_step(double span, int target);

// Escapes &, <, >, " and ' for XML/HTML text and attributes.
std::string xml_escape(std::string_view text);

}  // namespace ccbench::report
