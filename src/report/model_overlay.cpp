// The model overlay: measured busbw points, the fitted curve and its 90% band, per layout.
#include "report/model_overlay.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "report/renderers.hpp"
#include "report/report_common.hpp"
#include "report/svg_chart.hpp"

namespace ccbench::report {

namespace {

std::string caption(const ModelCurve& c) {
  return fmt::format("{} on {}, {} node{} x {} ranks{}", c.op, c.profile, c.nodes, c.nodes == 1 ? "" : "s",
                     c.ranks_per_node, c.from_spec ? " (model from spec)" : "");
}

// The measured out-of-place busbw of one file for the curve's op, by size.
std::map<std::uint64_t, double> measured(const ResultFile& file, const std::string& op) {
  std::map<std::uint64_t, double> out;
  for (const auto& s : build_series(file)) {
    if (s.key.op != op || s.key.in_place) continue;
    for (const auto& p : s.points) out.emplace(p.bytes, p.busbw_gbps);
    break;
  }
  return out;
}

std::string band_text(const ModelCurvePoint& p) {
  return fmt::format("{} [{}, {}]{}", sig(p.busbw_gbps, 3), sig(p.busbw_lo_gbps, 3), sig(p.busbw_hi_gbps, 3),
                     p.extrapolated ? " (extrapolated)" : "");
}

struct Rows {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

Rows comparison_rows(const ReportInput& input, const ModelCurve& c, const std::vector<std::string>& labels) {
  Rows t;
  t.header.push_back("size");
  std::vector<std::map<std::uint64_t, double>> meas;
  for (std::size_t f : c.files) {
    t.header.push_back(labels[f] + " busbw GB/s");
    meas.push_back(measured(input.files[f], c.op));
  }
  t.header.push_back("model busbw GB/s [90% band]");
  t.header.push_back("measured / model");
  for (const auto& p : c.points) {
    std::vector<std::string> row{human_bytes(p.bytes)};
    std::optional<double> first;
    for (const auto& m : meas) {
      const auto it = m.find(p.bytes);
      row.push_back(it == m.end() ? "—" : sig(it->second, 3));
      if (it != m.end() && !first) first = it->second;
    }
    row.push_back(band_text(p));
    row.push_back(first && p.busbw_gbps > 0 ? sig(*first / p.busbw_gbps, 3) : "—");
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

std::string model_overlay_html(const ReportInput& input) {
  if (input.model_curves.empty()) return "";
  const auto labels = display_labels(input.files);
  std::string out =
      "<section class=\"model\">\n<h2>Model</h2>\n<p class=\"sub\">Points: measured busbw (out-of-place). Dashed: "
      "the fitted model's prediction; shaded: its 90% band.</p>\n";
  for (const auto& c : input.model_curves) {
    std::vector<ChartSeries> series;
    for (std::size_t f : c.files) {
      ChartSeries s{labels[f], series_color(f), false, {}};
      for (const auto& [bytes, busbw] : measured(input.files[f], c.op)) {
        if (busbw > 0) {
          s.points.push_back({static_cast<double>(bytes), busbw, kNaN, kNaN,
                              fmt::format("{}: {} GB/s", human_bytes(bytes), sig(busbw, 3))});
        }
      }
      series.push_back(std::move(s));
    }
    ChartSeries model{fmt::format("model ({})", c.model), series_color(input.files.size()), true, {}};
    for (const auto& p : c.points) {
      if (p.busbw_gbps > 0) {
        model.points.push_back({static_cast<double>(p.bytes), p.busbw_gbps, p.busbw_lo_gbps, p.busbw_hi_gbps,
                                fmt::format("{}: {} GB/s", human_bytes(p.bytes), band_text(p))});
      }
    }
    series.push_back(std::move(model));
    ChartSpec spec;
    spec.title = caption(c);
    spec.x_label = "size (bytes)";
    spec.y_label = "busbw (GB/s)";
    out += fmt::format("<h3>{}</h3>\n{}\n", xml_escape(caption(c)), svg_line_chart(spec, series));
  }
  return out + "</section>\n";
}

std::string model_overlay_markdown(const ReportInput& input) {
  if (input.model_curves.empty()) return "";
  const auto labels = display_labels(input.files);
  std::string out = "## Model\n\n";
  for (const auto& c : input.model_curves) {
    const Rows t = comparison_rows(input, c, labels);
    out += fmt::format("### {} (model: {})\n\n|", caption(c), c.model);
    for (const auto& h : t.header) out += " " + h + " |";
    out += "\n|";
    for (std::size_t i = 0; i < t.header.size(); ++i) out += "---:|";
    out += "\n";
    for (const auto& r : t.rows) {
      out += "|";
      for (const auto& cell : r) out += " " + cell + " |";
      out += "\n";
    }
    out += "\n";
  }
  return out;
}

std::string model_overlay_text(const ReportInput& input) {
  if (input.model_curves.empty()) return "";
  const auto labels = display_labels(input.files);
  std::string out;
  for (const auto& c : input.model_curves) {
    const Rows t = comparison_rows(input, c, labels);
    std::vector<std::size_t> width(t.header.size());
    for (std::size_t i = 0; i < t.header.size(); ++i) width[i] = t.header[i].size();
    for (const auto& r : t.rows) {
      for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    }
    out += fmt::format("\n# Model: {} (model: {})\n", caption(c), c.model);
    auto line = [&](const std::vector<std::string>& cells) {
      std::string s = "#";
      for (std::size_t i = 0; i < cells.size(); ++i) s += fmt::format("  {:>{}}", cells[i], width[i]);
      return s + "\n";
    };
    out += line(t.header);
    for (const auto& r : t.rows) out += line(r);
  }
  return out;
}

}  // namespace ccbench::report
