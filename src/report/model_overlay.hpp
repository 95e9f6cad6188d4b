// A fitted model's curves drawn over the measured points (`ccbench report --model FILE`). The CLI
// asks the model (src/model) for the predictions; the renderers only draw them, so src/report does
// not depend on the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ccbench::report {

struct ReportInput;

struct ModelCurvePoint {
  std::uint64_t bytes = 0;
  double time_us = 0, time_lo_us = 0, time_hi_us = 0;           // 90% band
  double busbw_gbps = 0, busbw_lo_gbps = 0, busbw_hi_gbps = 0;  // from the time band
  bool extrapolated = false;
};

// The model's curve for one layout that some input file measured.
struct ModelCurve {
  std::string op;       // "allreduce"
  std::string profile;  // the model's profile (instance type, else label or fabric path)
  int nodes = 0;
  int ranks_per_node = 0;
  bool from_spec = false;
  std::string model;  // the model file, for captions
  // The files (indexes into ReportInput::files) whose rows this curve describes.
  std::vector<std::size_t> files;
  std::vector<ModelCurvePoint> points;  // ascending bytes
};

// Sections for the renderers; empty when the input has no curves.
std::string model_overlay_html(const ReportInput& input);
std::string model_overlay_markdown(const ReportInput& input);
std::string model_overlay_text(const ReportInput& input);

}  // namespace ccbench::report
