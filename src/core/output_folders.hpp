// The one rule for every output file a command writes (`run -J`, `import --out`, `report --out`,
// `compare --out`, `model fit -o`, ...): missing folders above it are created, each named on
// stderr, unless the outermost would sit directly under / (docs/hardening.md "Writing files").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

// Creates the folders missing along `dir`, outermost first, printing "ccbench: FLAG: created the
// folder X" for each. Refuses (std::runtime_error, nothing created) when the outermost missing one
// would sit directly under /: `/nonexistent/dir/x.json` is a typo, `/tmp/ci/today/x.json` or
// `results/ci/x.json` paths a script means. A folder that cannot be made is a std::system_error.
void create_missing_folders(const std::filesystem::path& dir, std::string_view flag);

// Checks, before any work, that FLAG's file PATH can be written, creating its missing folders as
// above: not a folder, and its folder takes a new file (the atomic write puts a temporary file
// beside the target). A path that exists and is not a regular file (/dev/stdout, a FIFO) is
// written directly and passes. Failures are UsageError "FLAG PATH: reason" (exit 2).
void prepare_output_file(const std::string& path, std::string_view flag);

// Refuses (UsageError, exit 2) an output that is one of the command's inputs, after resolving links:
// FLAG PATH is the same file as an input file, or a result file (*.json, *.jsonl) in an input folder
// (the folders every reader expands). Written, it would replace what the command reads, and a failed
// run would leave neither (issue 37 item 7: `trace import --out`, `import --out`, `report --out`,
// `replay -J TRACE`, `run --config X -J X`). An output that does not exist yet is no input.
void refuse_output_among_inputs(const std::string& path, std::string_view flag, const std::vector<std::string>& inputs);

}  // namespace ccbench
