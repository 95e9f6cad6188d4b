#include "compare/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>
#include <thread>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"

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
    // ccbench congestion's summary beside its phase files is not a result file.
    if (entry.path().filename().string().ends_with(".impact.json")) continue;
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

// A JSON number exactly as RFC 8259 spells it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
// std::from_chars alone also takes "007", "1." and "inf", which the JSON parser rejects.
const char* json_number_end(const char* c, const char* end) {
  auto digits = [&](const char* p) {
    while (p < end && *p >= '0' && *p <= '9') ++p;
    return p;
  };
  if (c < end && *c == '-') ++c;
  if (c >= end) return nullptr;
  if (*c == '0') {
    ++c;
  } else if (*c >= '1' && *c <= '9') {
    c = digits(c);
  } else {
    return nullptr;
  }
  if (c < end && *c == '.') {
    const char* d = digits(c + 1);
    if (d == c + 1) return nullptr;
    c = d;
  }
  if (c < end && (*c == 'e' || *c == 'E')) {
    ++c;
    if (c < end && (*c == '+' || *c == '-')) ++c;
    const char* d = digits(c);
    if (d == c) return nullptr;
    c = d;
  }
  return c;
}

// Lifts every samples_us array out of the text: `rest` is the text with each of them emptied
// ("samples_us": []) and `samples` holds them in text order. Only a key spelled literally, outside
// any string, counts; any text with a \u escape, a number not spelled as JSON spells it, or
// anything unexpected returns false (the plain parser then decides).
bool lift_samples(const std::string& text, std::string& rest, std::vector<std::vector<double>>& samples) {
  static constexpr std::string_view kKey = "\"samples_us\"";
  if (text.find("\\u") != std::string::npos) return false;  // a key could be spelled with an escape
  rest.clear();
  rest.reserve(text.size() / 4);
  auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* copied = begin;  // text before this is in `rest`
  const char* c = begin;
  while (c < end) {
    if (*c != '"') {
      ++c;
      continue;
    }
    // A string starts here (we are outside any string).
    if (static_cast<std::size_t>(end - c) >= kKey.size() && std::string_view(c, kKey.size()) == kKey) {
      const char* p = c + kKey.size();
      while (p < end && is_space(*p)) ++p;
      if (p < end && *p == ':') {
        ++p;
        while (p < end && is_space(*p)) ++p;
        if (p >= end || *p != '[') return false;
        rest.append(copied, p + 1);
        ++p;
        auto& out = samples.emplace_back();
        out.reserve(1024);
        while (true) {
          while (p < end && is_space(*p)) ++p;
          if (p >= end) return false;
          if (*p == ']' && out.empty()) break;
          const char* number_end = json_number_end(p, end);
          if (number_end == nullptr) return false;
          double v = 0;
          const auto [next, ec] = std::from_chars(p, number_end, v);
          if (ec != std::errc() || next != number_end) return false;
          out.push_back(v);
          p = number_end;
          while (p < end && is_space(*p)) ++p;
          if (p >= end) return false;
          if (*p == ',') {
            ++p;
            continue;
          }
          if (*p == ']') break;
          return false;
        }
        rest += ']';
        copied = p + 1;
        c = p + 1;
        continue;
      }
    }
    // Skip the string, escapes included.
    ++c;
    while (c < end && *c != '"') c += *c == '\\' ? 2 : 1;
    if (c >= end) return false;
    ++c;
  }
  rest.append(copied, end);
  return true;
}

// load_result_file with a fast path for the bulk of a large file: the samples_us arrays (a thousand
// numbers a row) are lifted out of the text with std::from_chars before the JSON parser sees it.
// The fast path answers only when it is sure to agree with the plain parser (a test runs both over
// mutated files): every lifted array must be the samples_us of one row, in order, and every sample
// finite and at least kMinTimeUs; anything else (errors included) goes to load_result_file, which words them.
ResultFile load_file(const fs::path& path) {
  if (path.extension() == ".jsonl") return load_result_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return load_result_file(path);  // reports the error
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  check_json_depth(text, path.string());  // before anything walks the tree
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
  for (const auto& row : j["results"]) {
    if (!row.is_object() || !row.contains("samples_us") || row["samples_us"] != nlohmann::json::array()) {
      return load_result_file(path);
    }
  }
  for (const auto& row : samples) {
    for (double v : row) {
      if (!std::isfinite(v) || !(v >= kMinTimeUs)) return load_result_file(path);
    }
  }
  ResultFile file;
  try {
    // Rows were read with empty samples: a row that is only valid with its samples is re-read.
    file = file_from_json(j, path.string());
  } catch (const std::exception&) {
    return load_result_file(path);
  }
  for (std::size_t i = 0; i < file.results.size(); ++i) file.results[i].samples_us = std::move(samples[i]);
  return file;
}

}  // namespace

ResultFile load_result_file_fast(const fs::path& path) { return load_file(path); }

Side load_side(const std::string& name, const std::vector<std::string>& inputs) {
  Side side;
  side.name = name;
  side.inputs = inputs;
  if (inputs.empty()) throw UsageError(fmt::format("no {} result files given", name));
  std::vector<fs::path> paths;
  // A file read twice (a folder given twice, or a folder and a file in it) would count its launch
  // twice: 3 launches a side read as 6 turned an inconclusive comparison into a confirmed one.
  std::map<fs::path, std::string> given_by;  // canonical path -> the input that gave it first
  for (const auto& input : inputs) {
    for (auto& p : expand_input(input)) {
      std::error_code ec;
      fs::path key = fs::canonical(p, ec);
      if (ec) key = fs::absolute(p, ec).lexically_normal();
      const auto [it, inserted] = given_by.emplace(key, input);
      if (!inserted)
        throw UsageError(
            fmt::format("{} side: {} is read twice (from {} and from {}); each launch counts once: "
                        "give each file or folder once",
                        name, p.string(), it->second, input));
      paths.push_back(std::move(p));
    }
  }
  side.files.resize(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  // JSON parsing dominates a large comparison; files are independent, so spread them over cores.
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, paths.size());
  auto work = [&](std::size_t first) {
    for (std::size_t i = first; i < paths.size(); i += workers) {
      try {
        side.files[i] = load_file(paths[i]);
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
