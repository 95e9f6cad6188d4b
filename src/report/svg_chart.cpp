#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ccbench::report {

namespace {

constexpr double kLeft = 70, kRight = 18, kTop = 34, kBottom = 48;
constexpr double kLegendRow = 18;

struct Axis {
  bool log = true;
  double lo = 0, hi = 1;  // in transformed units (log10 / log2 / linear)
  double pixel_lo = 0, pixel_hi = 1;
  double base = 10;

  double transform(double v) const { return log ? std::log(v) / std::log(base) : v; }
  double to_pixel(double v) const {
    const double t = (transform(v) - lo) / (hi - lo);
    return pixel_lo + t * (pixel_hi - pixel_lo);
  }
};

std::string bytes_tick(double v) {
  const auto b = static_cast<std::uint64_t>(std::llround(v));
  static constexpr const char* kSuffix[] = {"", "K", "M", "G", "T"};
  int unit = 0;
  std::uint64_t q = b;
  while (q >= 1024 && q % 1024 == 0 && unit < 4) {
    q /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", q, kSuffix[unit]);
}

std::string number_tick(double v) { return fmt::format("{:g}", v); }

}  // namespace

double nice_step(double span, int target) {
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string series_color(std::size_t index) {
  // Okabe-Ito without its yellow (too pale on white), then a few darker extras.
  static constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                             "#56B4E9", "#000000", "#8C564B", "#7F7F7F", "#17BECF"};
  return kPalette[index % std::size(kPalette)];
}

std::string svg_line_chart(const ChartSpec& spec, const std::vector<ChartSeries>& series) {
  // Data extent (positive values only on log axes).
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  auto usable_x = [&](double x) { return std::isfinite(x) && (!spec.log_x || x > 0); };
  auto usable_y = [&](double y) { return std::isfinite(y) && (!spec.log_y || y > 0); };
  for (const auto& s : series) {
    for (const auto& p : s.points) {
      if (!usable_x(p.x) || !usable_y(p.y)) continue;
      xmin = std::min(xmin, p.x);
      xmax = std::max(xmax, p.x);
      for (const double y : {p.y, p.lo, p.hi}) {
        if (usable_y(y)) {
          ymin = std::min(ymin, y);
          ymax = std::max(ymax, y);
        }
      }
    }
  }
  if (spec.reference_y) {
    ymin = std::min(ymin, *spec.reference_y);
    ymax = std::max(ymax, *spec.reference_y);
  }
  if (spec.target_band) {
    ymin = std::min(ymin, spec.target_band->first);
    ymax = std::max(ymax, spec.target_band->second);
  }
  const bool empty = !(xmin <= xmax) || !(ymin <= ymax);
  if (empty) {
    xmin = spec.log_x ? 1 : 0;
    xmax = spec.log_x ? 1024 : 1;
    ymin = spec.log_y ? 1 : 0;
    ymax = spec.log_y ? 10 : 1;
  }

  // Two legend columns when every name fits in half the width (about 6.5 px a character at 11 px).
  std::size_t longest = 0;
  for (const auto& s : series) longest = std::max(longest, s.name.size());
  const int legend_columns =
      series.size() > 1 && static_cast<double>(longest + 6) * 6.5 < (spec.width - kLeft) / 2 ? 2 : 1;
  const auto legend_rows = static_cast<double>((series.size() + legend_columns - 1) / legend_columns);
  const double width = spec.width;
  const double plot_bottom = spec.height - kBottom;
  const double total_height = spec.height + legend_rows * kLegendRow + (series.empty() ? 0 : 6);

  Axis x{spec.log_x, 0, 1, kLeft, width - kRight, spec.x_is_bytes ? 2.0 : 10.0};
  if (spec.log_x) {
    x.lo = std::floor(x.transform(xmin));
    x.hi = std::ceil(x.transform(xmax));
    if (x.hi <= x.lo) {
      x.lo -= 1;
      x.hi += 1;
    }
  } else {
    x.lo = xmin;
    x.hi = xmax > xmin ? xmax : xmin + 1;
  }
  Axis y{spec.log_y, 0, 1, plot_bottom, kTop, 10.0};
  if (spec.log_y) {
    y.lo = std::floor(std::log10(ymin));
    y.hi = std::ceil(std::log10(ymax));
    if (y.hi <= y.lo) y.hi = y.lo + 1;
  } else {
    const double pad = std::max((ymax - ymin) * 0.08, std::fabs(ymax) * 0.02 + 1e-9);
    const double step = nice_step(ymax - ymin + 2 * pad, 6);
    y.lo = std::floor((ymin - pad) / step) * step;
    y.hi = std::ceil((ymax + pad) / step) * step;
  }

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\" aria-label=\"{2}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      width, total_height, xml_escape(spec.title));
  svg += fmt::format("<title>{}</title>\n", xml_escape(spec.title));
  svg += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width, total_height);
  svg += fmt::format("<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
                     (kLeft + width - kRight) / 2, xml_escape(spec.title));

  // Grid and ticks.
  std::string grid, labels;
  auto hline = [&](double py, const char* stroke, double opacity) {
    grid += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-opacity=\"{}\"/>\n", kLeft,
        py, width - kRight, py, stroke, opacity);
  };
  auto vline = [&](double px, const char* stroke, double opacity) {
    grid += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-opacity=\"{}\"/>\n", px,
        kTop, px, plot_bottom, stroke, opacity);
  };
  auto ylabel = [&](double py, const std::string& text) {
    labels += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, py + 4,
                          xml_escape(text));
  };
  if (spec.log_y) {
    const int decades = static_cast<int>(y.hi - y.lo);
    for (int d = static_cast<int>(y.lo); d <= static_cast<int>(y.hi); ++d) {
      const double v = std::pow(10.0, d);
      hline(y.to_pixel(v), "#999999", 0.6);
      ylabel(y.to_pixel(v), number_tick(v));
      if (d == static_cast<int>(y.hi)) break;
      for (int m = 2; m <= 9; ++m) {
        const double mv = m * v;
        hline(y.to_pixel(mv), "#cccccc", 0.5);
        if (decades <= 2 && (m == 2 || m == 5)) ylabel(y.to_pixel(mv), number_tick(mv));
      }
    }
  } else {
    const double step = nice_step(y.hi - y.lo, 6);
    for (double v = y.lo; v <= y.hi + step * 1e-6; v += step) {
      hline(y.to_pixel(v), "#999999", 0.5);
      ylabel(y.to_pixel(v), number_tick(std::fabs(v) < step * 1e-6 ? 0 : v));
    }
  }
  if (spec.log_x) {
    const double span = x.hi - x.lo;
    // Labels on multiples of a 1-2-5 step of the exponent, so 1K, 1M and 1G (2^10, 2^20, 2^30) get theirs.
    int step = 20;
    for (const int candidate : {10, 5, 2, 1}) {
      if (span / candidate <= 8) step = candidate;
    }
    for (int e = static_cast<int>(x.lo); e <= static_cast<int>(x.hi); ++e) {
      const double v = std::pow(x.base, e);
      const bool major = e % step == 0;
      vline(x.to_pixel(v), major ? "#999999" : "#dddddd", major ? 0.6 : 0.5);
      if (major) {
        labels += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x.to_pixel(v),
                              plot_bottom + 16, xml_escape(spec.x_is_bytes ? bytes_tick(v) : number_tick(v)));
      }
    }
  } else {
    const double step = nice_step(x.hi - x.lo, 8);
    for (double v = std::ceil(x.lo / step) * step; v <= x.hi + step * 1e-6; v += step) {
      vline(x.to_pixel(v), "#999999", 0.5);
      labels += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x.to_pixel(v),
                            plot_bottom + 16, number_tick(v));
    }
  }
  svg += "<g class=\"grid\">\n" + grid + "</g>\n";
  svg += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#333333\"/>\n", kLeft,
      kTop, width - kRight - kLeft, plot_bottom - kTop);
  svg += "<g class=\"ticks\" fill=\"#333333\">\n" + labels + "</g>\n";
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", (kLeft + width - kRight) / 2,
                     plot_bottom + 34, xml_escape(spec.x_label));
  svg += fmt::format(
      "<text x=\"14\" y=\"{0:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0:.1f})\">{1}</text>\n",
      (kTop + plot_bottom) / 2, xml_escape(spec.y_label));

  if (spec.target_band) {
    const double y1 = y.to_pixel(spec.target_band->second), y2 = y.to_pixel(spec.target_band->first);
    svg += fmt::format(
        "<rect class=\"target\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#009E73\" "
        "fill-opacity=\"0.12\"/>\n",
        kLeft, y1, width - kRight - kLeft, std::max(1.0, y2 - y1));
  }
  if (spec.reference_y) {
    const double py = y.to_pixel(*spec.reference_y);
    svg += fmt::format(
        "<line class=\"reference\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333333\" "
        "stroke-dasharray=\"2 3\"/>\n",
        kLeft, py, width - kRight, py);
  }

  // Bands first (under every line), then lines and markers.
  std::string bands, lines;
  for (const auto& s : series) {
    std::vector<const ChartPoint*> pts;
    for (const auto& p : s.points) {
      if (usable_x(p.x) && usable_y(p.y)) pts.push_back(&p);
    }
    // A band polygon per run of consecutive points that all have bounds.
    std::vector<const ChartPoint*> run;
    auto flush = [&] {
      if (run.size() >= 2) {
        std::string poly;
        for (const auto* p : run) poly += fmt::format("{:.1f},{:.1f} ", x.to_pixel(p->x), y.to_pixel(p->hi));
        for (auto it = run.rbegin(); it != run.rend(); ++it) {
          poly += fmt::format("{:.1f},{:.1f} ", x.to_pixel((*it)->x), y.to_pixel((*it)->lo));
        }
        poly.pop_back();
        bands +=
            fmt::format("<polygon class=\"band\" points=\"{}\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\"/>\n",
                        poly, s.color);
      }
      run.clear();
    };
    for (const auto* p : pts) {
      if (usable_y(p->lo) && usable_y(p->hi)) {
        run.push_back(p);
      } else {
        flush();
      }
    }
    flush();
    if (pts.empty()) continue;
    std::string line;
    for (const auto* p : pts) line += fmt::format("{:.1f},{:.1f} ", x.to_pixel(p->x), y.to_pixel(p->y));
    line.pop_back();
    lines +=
        fmt::format("<polyline class=\"series\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                    line, s.color, s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    for (const auto* p : pts) {
      lines += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.6\" fill=\"{}\"><title>{}</title></circle>\n",
                           x.to_pixel(p->x), y.to_pixel(p->y), s.color, xml_escape(p->tooltip));
    }
  }
  svg += "<g class=\"bands\">\n" + bands + "</g>\n<g class=\"lines\">\n" + lines + "</g>\n";
  if (empty) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#666666\">no data</text>\n",
                       (kLeft + width - kRight) / 2, (kTop + plot_bottom) / 2);
  }

  // Legend under the plot.
  svg += "<g class=\"legend\">\n";
  const double column_width = (width - kLeft) / legend_columns;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double lx = kLeft + static_cast<double>(i % legend_columns) * column_width;
    const double ly = spec.height + 4 + static_cast<double>(i / legend_columns) * kLegendRow;
    std::string name = series[i].name;
    const std::size_t max_chars = static_cast<std::size_t>(column_width / 6.5) - 5;
    if (name.size() > max_chars) name = name.substr(0, max_chars - 1) + "…";
    svg += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2.5\"{}/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        lx, ly, lx + 22, ly, series[i].color, series[i].dashed ? " stroke-dasharray=\"6 4\"" : "", lx + 28, ly + 4,
        xml_escape(name));
  }
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace ccbench::report
