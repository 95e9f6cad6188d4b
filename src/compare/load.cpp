#include "compare/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <thread>

#include "core/error.hpp"

namespace ccbench::compare {
namespace fs = std::filesystem;

std::vector<fs::path> expand_input(const fs::path& input) {
  std::error_code ec;
  if (fs::is_regular_file(input, ec)) return {input};
  if (!fs::is_directory(input, ec)) throw ParseError(fmt::format("{}: no such file or folder", input.string()));
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(input, ec)) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension();
    if (ext != ".json" && ext != ".jsonl") continue;
    if (entry.path().filename().string().starts_with(".")) continue;  // temporaries of atomic writes
    if (ext == ".jsonl") {
      auto sibling = entry.path();
      sibling.replace_extension(".json");
      if (fs::is_regular_file(sibling, ec)) continue;
    }
    found.push_back(entry.path());
  }
  if (ec) throw ParseError(fmt::format("{}: cannot list folder ({})", input.string(), ec.message()));
  if (found.empty())
    throw ParseError(fmt::format("{}: folder holds no result files (*.json, *.jsonl)", input.string()));
  std::sort(found.begin(), found.end());
  return found;
}

namespace {

void validate_samples(const ResultFile& file) {
  for (std::size_t i = 0; i < file.results.size(); ++i) {
    const auto& row = file.results[i];
    const std::string path = fmt::format("/results/{}", i);
    for (std::size_t s = 0; s < row.samples_us.size(); ++s) {
      const double v = row.samples_us[s];
      if (!std::isfinite(v) || !(v > 0.0)) {
        throw ParseError(fmt::format("{}: {}/samples_us/{}: must be a positive time in microseconds (got {})",
                                     file.source, path, s, v));
      }
    }
    if (row.samples_us.empty() && !(row.time_us.median > 0.0)) {
      throw ParseError(fmt::format("{}: {}: no samples_us and no positive time_us/median", file.source, path));
    }
    if (row.bytes == 0) throw ParseError(fmt::format("{}: {}/bytes: must be positive", file.source, path));
  }
}

}  // namespace

Side load_side(const std::string& name, const std::vector<std::string>& inputs) {
  Side side;
  side.name = name;
  side.inputs = inputs;
  if (inputs.empty()) throw UsageError(fmt::format("no {} result files given", name));
  std::vector<fs::path> paths;
  for (const auto& input : inputs) {
    auto more = expand_input(input);
    paths.insert(paths.end(), more.begin(), more.end());
  }
  side.files.resize(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  // JSON parsing dominates a large comparison; files are independent, so spread them over cores.
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, paths.size());
  auto work = [&](std::size_t first) {
    for (std::size_t i = first; i < paths.size(); i += workers) {
      try {
        side.files[i] = load_result_file(paths[i]);
        validate_samples(side.files[i]);
      } catch (const nlohmann::json::exception& e) {
        // A field of the wrong JSON type deep in a metadata section: still name the file.
        errors[i] = std::make_exception_ptr(ParseError(fmt::format("{}: {}", paths[i].string(), e.what())));
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return side;
}

}  // namespace ccbench::compare
