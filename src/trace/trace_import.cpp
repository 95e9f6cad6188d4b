#include "trace/trace_import.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>

#include "core/error.hpp"
#include "trace/trace_writer.hpp"

namespace ccbench::trace {

namespace {
constexpr std::array<std::string_view, 4> kFormatNames = {"pytorch-et", "nccl-log", "nccl-inspector",
                                                          "pytorch-profiler"};
static_assert(kFormatNames.size() == static_cast<std::size_t>(ImportFormat::pytorch_profiler) + 1);
}  // namespace

void fail(const std::string& where, const std::string& what) { throw ParseError(fmt::format("{}: {}", where, what)); }

std::string_view name(ImportFormat format) { return kFormatNames[static_cast<std::size_t>(format)]; }
std::optional<ImportFormat> parse_import_format(std::string_view text) {
  for (std::size_t i = 0; i < kFormatNames.size(); ++i)
    if (kFormatNames[i] == text) return static_cast<ImportFormat>(i);
  return std::nullopt;
}
std::vector<std::string_view> import_format_names() { return {kFormatNames.begin(), kFormatNames.end()}; }

std::optional<int> rank_from_file_name(const std::filesystem::path& file) {
  const std::string stem = file.stem().string();
  std::size_t end = stem.size();
  while (end > 0 && !std::isdigit(static_cast<unsigned char>(stem[end - 1]))) --end;
  if (end == 0) return std::nullopt;
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(stem[begin - 1]))) --begin;
  if (end - begin > 7) return std::nullopt;
  return std::stoi(stem.substr(begin, end - begin));
}

ImportSummary import_trace(ImportFormat format, const std::vector<std::filesystem::path>& files,
                           const std::filesystem::path& out, const ImportOptions& options) {
  TraceWriter writer(out);
  ImportSummary summary;
  switch (format) {
    case ImportFormat::pytorch_et:
      summary = import_pytorch_et(files, writer, options);
      break;
    case ImportFormat::nccl_log:
      summary = import_nccl_log(files, writer, options);
      break;
    case ImportFormat::nccl_inspector:
      summary = import_nccl_inspector(files, writer, options);
      break;
    case ImportFormat::pytorch_profiler:
      summary = import_pytorch_profiler(files, writer, options);
      break;
  }
  // The writer counts what it wrote: the importers do not keep a count of their own.
  summary.calls = writer.calls_written();
  return summary;
}

}  // namespace ccbench::trace
