// Importers: other tools' traces and logs -> a ccbench trace (docs/replay.md "Trace format" says
// what each source can and cannot say). One file per rank in, the rank read from the file or its
// name; one trace out, written as it is read (trace_writer.hpp). Bad input is a ParseError naming
// the file, the line or record and the field (exit 2).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::trace {

enum class ImportFormat : std::uint8_t { pytorch_et, nccl_log, nccl_inspector, pytorch_profiler };
std::string_view name(ImportFormat format);
std::optional<ImportFormat> parse_import_format(std::string_view text);
std::vector<std::string_view> import_format_names();

struct ImportOptions {
  std::string tool_version;
};

struct ImportSummary {
  int ranks = 0;
  std::uint64_t calls = 0;
  std::vector<std::string> not_in_source;
};

// Reads `files` and writes the trace at `out` (replaced only once the whole trace is written).
ImportSummary import_trace(ImportFormat format, const std::vector<std::filesystem::path>& files,
                           const std::filesystem::path& out, const ImportOptions& options);

// The rank a file's name states: the last run of digits in its name without the extension
// ("eg_rank3.json" -> 3); nullopt when there is none.
std::optional<int> rank_from_file_name(const std::filesystem::path& file);

// The importers, one per source (import_pytorch_et.cpp, import_nccl_log.cpp, import_nccl_inspector.cpp,
// import_pytorch_profiler.cpp).
class TraceWriter;
ImportSummary import_pytorch_et(const std::vector<std::filesystem::path>& files, TraceWriter& writer,
                                const ImportOptions& options);
ImportSummary import_nccl_log(const std::vector<std::filesystem::path>& files, TraceWriter& writer,
                              const ImportOptions& options);
ImportSummary import_nccl_inspector(const std::vector<std::filesystem::path>& files, TraceWriter& writer,
                                    const ImportOptions& options);
ImportSummary import_pytorch_profiler(const std::vector<std::filesystem::path>& files, TraceWriter& writer,
                                      const ImportOptions& options);

// Throws the ParseError every importer reports bad input with: "WHERE: WHAT" (WHERE names the file
// and its line or record).
[[noreturn]] void fail(const std::string& where, const std::string& what);

}  // namespace ccbench::trace
