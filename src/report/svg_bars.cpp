#include "report/svg_bars.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/svg_chart.hpp"

namespace ccbench::report {

namespace {

constexpr double kLeft = 180, kRight = 18, kTop = 34, kAxis = 48, kLegendRow = 18;

double usable(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

}  // namespace

std::string svg_stacked_bars(const BarChartSpec& spec, const std::vector<BarSegment>& segments,
                             const std::vector<Bar>& bars) {
  double total = 0;
  for (const auto& b : bars) {
    double end = usable(b.offset);
    for (const double v : b.values) end += usable(v);
    total = std::max(total, end);
  }
  if (!(total > 0)) total = 1;
  const double width = spec.width;
  const double plot_w = width - kLeft - kRight;
  const double plot_bottom = kTop + static_cast<double>(std::max<std::size_t>(bars.size(), 1)) * spec.row_height;
  const double height = plot_bottom + kAxis + kLegendRow * (1 + static_cast<double>(segments.size() / 4));
  const auto px = [&](double v) { return kLeft + v / total * plot_w; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bars\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n"
      "<title>{2}</title>\n<text x=\"{3:.1f}\" y=\"20\" text-anchor=\"middle\" font-size=\"13\" "
      "font-weight=\"bold\">{2}</text>\n",
      width, height, xml_escape(spec.title), width / 2);
  const double step = nice_step(total, 6);
  for (double v = 0; v <= total + step * 1e-6; v += step) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#dddddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4:g}</text>\n",
        px(v), kTop, plot_bottom, plot_bottom + 16, v);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", kLeft + plot_w / 2,
                     plot_bottom + 34, xml_escape(spec.x_label));
  svg += "<g class=\"rows\">\n";
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = kTop + static_cast<double>(i) * spec.row_height;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
                       y + spec.row_height * 0.7, xml_escape(b.label));
    double at = usable(b.offset);
    for (std::size_t s = 0; s < segments.size() && s < b.values.size(); ++s) {
      const double v = usable(b.values[s]);
      if (v <= 0) continue;
      svg += fmt::format(
          "<rect class=\"segment\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{}</title></rect>\n",
          px(at), y + 2, std::max(0.5, px(at + v) - px(at)), spec.row_height - 4.0, segments[s].color,
          xml_escape(fmt::format("{}\n{}: {:.4g} s", b.tooltip, segments[s].name, v)));
      at += v;
    }
  }
  svg += "</g>\n<g class=\"legend\">\n";
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const double lx = kLeft + static_cast<double>(s % 4) * plot_w / 4;
    const double ly = plot_bottom + kAxis + static_cast<double>(s / 4) * kLegendRow;
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\">{}</text>\n",
        lx, ly - 8, segments[s].color, lx + 20, ly + 1, xml_escape(segments[s].name));
  }
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace ccbench::report
