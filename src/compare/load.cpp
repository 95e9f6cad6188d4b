#include "compare/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <charconv>
#include <cmath>
#include <exception>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <thread>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace ccbench::compare {
namespace fs = std::filesystem;

std::vector<fs::path> expand_input(const fs::path& input) {
  std::error_code ec;
  if (fs::is_regular_file(input, ec)) return {input};
  if (!fs::is_directory(input, ec)) throw ParseError(fmt::format("{}: no such file or folder", input.string()));
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(input, ec)) {
    const auto ext = entry.path().extension();
    if (ext != ".json" && ext != ".jsonl") continue;
    if (entry.path().filename().string().starts_with(".")) continue;  // temporaries of atomic writes
    // One bad entry (a symlink loop, a dangling link, a FIFO named *.json) does not fail the folder.
    if (const std::string why = not_regular_file_reason(entry.path()); !why.empty()) {
      std::fprintf(stderr, "ccbench: warning: %s: %s; skipped\n", entry.path().c_str(), why.c_str());
      continue;
    }
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

// load_result_file with a fast path for the bulk of a large file: the samples_us arrays (a
// thousand numbers a row) are lifted out of the text with std::from_chars before the JSON parser
// sees it, so neither the parser nor the row validation handles them one JSON value at a time.
// Anything unexpected (a non-number, a NaN token, a row count that does not line up, a run that
// did not complete and may fall back to its stream, JSON lines) takes the plain path, which words
// the errors.
bool lift_samples(const std::string& text, std::string& rest, std::vector<std::vector<double>>& samples) {
  static constexpr std::string_view kKey = "\"samples_us\"";
  rest.clear();
  rest.reserve(text.size() / 4);
  std::size_t pos = 0;
  auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (true) {
    const std::size_t k = text.find(kKey, pos);
    if (k == std::string::npos) break;
    std::size_t p = k + kKey.size();
    while (p < text.size() && is_space(text[p])) ++p;
    if (p >= text.size() || text[p] != ':') return false;
    ++p;
    while (p < text.size() && is_space(text[p])) ++p;
    if (p >= text.size() || text[p] != '[') return false;
    rest.append(text, pos, p + 1 - pos);
    ++p;
    auto& out = samples.emplace_back();
    out.reserve(1024);
    const char* c = text.data() + p;
    const char* end = text.data() + text.size();
    while (true) {
      while (c < end && is_space(*c)) ++c;
      if (c >= end) return false;
      if (*c == ']' && out.empty()) break;
      if (!(*c == '-' || (*c >= '0' && *c <= '9'))) return false;
      double v = 0;
      const auto [next, ec] = std::from_chars(c, end, v);
      if (ec != std::errc()) return false;
      out.push_back(v);
      c = next;
      while (c < end && is_space(*c)) ++c;
      if (c >= end) return false;
      if (*c == ',') {
        ++c;
        continue;
      }
      if (*c == ']') break;
      return false;
    }
    rest += ']';
    pos = static_cast<std::size_t>(c - text.data()) + 1;
  }
  rest.append(text, pos, std::string::npos);
  return true;
}

ResultFile load_file(const fs::path& path) {
  if (path.extension() == ".jsonl") return load_result_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return load_result_file(path);  // reports the error
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::string rest;
  std::vector<std::vector<double>> samples;
  if (!lift_samples(text, rest, samples)) return load_result_file(path);
  const nlohmann::json j = nlohmann::json::parse(rest, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("results") || !j["results"].is_array() ||
      j["results"].size() != samples.size() ||
      (j.contains("run") &&
       (!j["run"].is_object() || !j["run"].contains("status") || j["run"]["status"] != "complete"))) {
    return load_result_file(path);
  }
  ResultFile file = file_from_json(j, path.string());
  for (std::size_t i = 0; i < file.results.size(); ++i) file.results[i].samples_us = std::move(samples[i]);
  return file;
}

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
        side.files[i] = load_file(paths[i]);
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
