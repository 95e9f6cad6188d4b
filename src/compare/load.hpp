// Stage 1 of compare: result files and folders of them -> the runs of one side.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace ccbench::compare {

struct Side {
  std::string name;                 // "baseline" or "candidate"
  std::vector<std::string> inputs;  // as given on the command line
  std::vector<ResultFile> files;    // in a stable order (inputs order, folders sorted by name)
};

// The result files an input names: the file itself, or a folder's *.json and *.jsonl files (not
// recursive). A folder's out.jsonl is skipped when out.json is there: loading out.json already
// falls back to its stream when the run did not complete. Throws ParseError for a missing path or
// a folder without result files.
std::vector<std::filesystem::path> expand_input(const std::filesystem::path& input);

// load_result_file (core/result.hpp, the one parser of a result file) with a fast path for large
// files; it gives the same file or the same error on every input.
ResultFile load_result_file_fast(const std::filesystem::path& path);

// Loads every file of a side (in parallel). Throws ParseError naming the file and the JSON path.
Side load_side(const std::string& name, const std::vector<std::string>& inputs);

}  // namespace ccbench::compare
