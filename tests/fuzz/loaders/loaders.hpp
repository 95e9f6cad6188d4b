// Every loader of user-supplied files, for the fuzz drivers: one table, one line per loader.
// A loader may throw ParseError or UsageError (exit 2 with a message naming the file); anything else
// escaping it (another exception type, a crash, a sanitizer report, a hang) is a finding.
#pragma once

#include <filesystem>
#include <span>
#include <string_view>

namespace ccbench::fuzz {

struct Loader {
  std::string_view name;       // also the corpus folder tests/fuzz/corpus/<name>/
  std::string_view extension;  // the input is written to a file with this extension
  void (*load)(const std::filesystem::path& path);
};

std::span<const Loader> loaders();
const Loader* find_loader(std::string_view name);

}  // namespace ccbench::fuzz
