// `ccbench model check MODEL RESULT...`: every row of result files judged against the model's band
// (src/model/expectation: normal, below, above, not covered), a table per file, the rows' `expected`
// objects with -o (docs/model.md, "Is my number normal? model check").
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "cli/model_command.hpp"
#include "compare/load.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/output_folders.hpp"
#include "core/result.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "model/expectation.hpp"
#include "sweep/flag_suggestion.hpp"

namespace ccbench::cli {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using model::Verdict;

// Exit codes of model check (docs/model.md): 0 every covered row normal or above, 1 some row
// below, 3 no row covered, 2 bad input (exit_code::usage).
constexpr int kSomeBelow = 1;
constexpr int kNothingCovered = 3;

struct Counts {
  int normal = 0, below = 0, above = 0, not_covered = 0;
  void add(Verdict v) {
    switch (v) {
      case Verdict::normal:
        ++normal;
        break;
      case Verdict::below:
        ++below;
        break;
      case Verdict::above:
        ++above;
        break;
      case Verdict::not_covered:
        ++not_covered;
        break;
    }
  }
  void add(const Counts& o) {
    normal += o.normal;
    below += o.below;
    above += o.above;
    not_covered += o.not_covered;
  }
  int rows() const { return normal + below + above + not_covered; }
  json to_json() const {
    return {{"rows", rows()}, {"normal", normal}, {"below", below}, {"above", above}, {"not_covered", not_covered}};
  }
  std::string text() const {
    std::vector<std::string> parts;
    for (const auto& [n, what] : {std::pair{normal, "normal"}, std::pair{below, "below"}, std::pair{above, "above"},
                                  std::pair{not_covered, "not covered"}})
      if (n > 0) parts.push_back(fmt::format("{} {}", n, what));
    std::string joined;
    for (const auto& p : parts) joined += (joined.empty() ? "" : ", ") + p;
    return fmt::format("{} row{}: {}", rows(), rows() == 1 ? "" : "s", joined.empty() ? "none" : joined);
  }
};

struct CheckedFile {
  const ResultFile* file = nullptr;
  model::RunShape shape;
  std::vector<model::RowExpectation> rows;  // one per file->results row
  Counts counts;
};

std::string gbps_text(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

// A value of the expectation's metric, with its unit.
std::string value_text(model::ExpectedMetric metric, double v) {
  return metric == model::ExpectedMetric::time_us ? format_time(v) : gbps_text(v) + " GB/s";
}

std::string band_text(const model::RowExpectation& e) {
  if (e.metric == model::ExpectedMetric::time_us) return fmt::format("[{}, {}]", format_time(e.lo), format_time(e.hi));
  return fmt::format("[{}, {}] GB/s", gbps_text(e.lo), gbps_text(e.hi));
}

std::string verdict_text(const model::RowExpectation& e) {
  if (e.verdict == Verdict::not_covered) return "not covered";
  std::string v(model::name(e.verdict));
  if (e.basis == model::Basis::from_spec) v += " (spec)";
  if (e.extrapolated) v += " (extrap.)";
  return v;
}

std::string shortfall_text(const model::RowExpectation& e) {
  return e.verdict == Verdict::not_covered ? std::string("-") : fmt::format("{:+.1f}%", e.shortfall_pct);
}

std::string file_title(const CheckedFile& c, const model::Expectation& ex) {
  std::set<std::string> bases;
  for (const auto& e : c.rows)
    if (e.verdict != Verdict::not_covered) bases.insert(std::string(model::name(e.basis)));
  std::string basis;
  for (const auto& b : bases) basis += (basis.empty() ? "" : ", ") + b;
  return fmt::format("{}: {}, {} node{} x {} ranks; model {}{}, {} band", c.file->source, c.shape.profile,
                     c.shape.nodes, c.shape.nodes == 1 ? "" : "s",
                     c.shape.ranks_per_node > 0 ? std::to_string(c.shape.ranks_per_node) : std::string("?"), ex.name(),
                     basis.empty() ? "" : " (" + basis + ")", model::name(ex.options().band));
}

// The distinct reasons of the not-covered rows, with how many rows each.
std::vector<std::pair<std::string, int>> reasons(const CheckedFile& c) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& e : c.rows) {
    if (e.verdict != Verdict::not_covered) continue;
    auto it = std::ranges::find(out, e.reason, &std::pair<std::string, int>::first);
    if (it == out.end()) {
      out.emplace_back(e.reason, 1);
    } else {
      ++it->second;
    }
  }
  return out;
}

std::string render_text(const std::vector<CheckedFile>& files, const model::Expectation& ex) {
  std::string out;
  for (const auto& c : files) {
    out += file_title(c, ex) + "\n";
    out += fmt::format("  {:<15} {:>6} {:<6} {:>5} {:>14} {:>24} {:>14} {:<18} {:>9}\n", "op", "bytes", "place",
                       "trial", "measured", "band", "predicted", "verdict", "shortfall");
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
      const ResultRow& r = c.file->results[i];
      const auto& e = c.rows[i];
      const bool covered = e.verdict != Verdict::not_covered;
      out += fmt::format("  {:<15} {:>6} {:<6} {:>5} {:>14} {:>24} {:>14} {:<18} {:>9}\n", r.op, format_bytes(r.bytes),
                         r.in_place ? "in" : "out", r.trial, covered ? value_text(e.metric, e.measured) : "-",
                         covered ? band_text(e) : "-", covered ? value_text(e.metric, e.predicted) : "-",
                         verdict_text(e), shortfall_text(e));
    }
    out += "  " + c.counts.text() + "\n";
    for (const auto& [reason, n] : reasons(c))
      out += fmt::format("  not covered ({} row{}): {}\n", n, n == 1 ? "" : "s", reason);
  }
  return out;
}

// Markdown table cells: pipes escaped, newlines flattened.
std::string cell(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '\n' || ch == '\r') {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

std::string render_markdown(const std::vector<CheckedFile>& files, const model::Expectation& ex) {
  std::string out = "## ccbench model check\n\n";
  for (const auto& c : files) {
    out += "### " + cell(file_title(c, ex)) + "\n\n";
    out += "| op | size | place | trial | measured | band | predicted | verdict | shortfall |\n";
    out += "|---|---:|---|---:|---:|---:|---:|---|---:|\n";
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
      const ResultRow& r = c.file->results[i];
      const auto& e = c.rows[i];
      const bool covered = e.verdict != Verdict::not_covered;
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(r.op), format_bytes(r.bytes),
                         r.in_place ? "in" : "out", r.trial, covered ? value_text(e.metric, e.measured) : "—",
                         covered ? band_text(e) : "—", covered ? value_text(e.metric, e.predicted) : "—",
                         e.verdict == Verdict::below ? "**below**" : verdict_text(e), shortfall_text(e));
    }
    out += "\n" + c.counts.text() + ".\n\n";
    for (const auto& [reason, n] : reasons(c))
      out += fmt::format("> not covered ({} row{}): {}\n\n", n, n == 1 ? "" : "s", cell(reason));
  }
  return out;
}

json row_json(const ResultRow& r, const model::RowExpectation& e) {
  return {{"op", r.op},       {"bytes", r.bytes},
          {"dtype", r.dtype}, {"in_place", r.in_place},
          {"trial", r.trial}, {"expected", model::to_json(e)}};
}

json render_json(const std::vector<CheckedFile>& files, const model::Expectation& ex, const Counts& total, int code) {
  json out = {{"model", ex.name()},
              {"band", std::string(model::name(ex.options().band))},
              {"extrapolate", ex.options().extrapolate},
              {"files", json::array()}};
  for (const auto& c : files) {
    json f = {{"file", c.file->source},       {"profile", c.shape.profile},
              {"nodes", c.shape.nodes},       {"ranks_per_node", c.shape.ranks_per_node},
              {"counts", c.counts.to_json()}, {"rows", json::array()}};
    for (std::size_t i = 0; i < c.rows.size(); ++i) f["rows"].push_back(row_json(c.file->results[i], c.rows[i]));
    out["files"].push_back(std::move(f));
  }
  out["counts"] = total.to_json();
  out["exit_code"] = code;
  return out;
}

// -o: each result file as it was read, each row with its `expected` object. One file: PATH is the
// file; several: PATH is a folder, each file under its own name. The file's own JSON is kept (its
// numbers and nulls as they were) when its rows are the ones judged; a run that did not complete
// and was read from its .jsonl stream is written whole from what was loaded.
void write_annotated(const std::vector<CheckedFile>& files, const std::string& path) {
  const auto annotated = [](const CheckedFile& c) {
    json doc;
    try {
      doc = json::parse(read_input_file(c.file->source));
    } catch (const std::exception&) {
      doc = nullptr;
    }
    const auto results = doc.is_object() ? doc.find("results") : doc.end();
    if (!doc.is_object() || results == doc.end() || !results->is_array() || results->size() != c.rows.size()) {
      ResultFile f = *c.file;
      for (std::size_t i = 0; i < f.results.size(); ++i) f.results[i].extra["expected"] = model::to_json(c.rows[i]);
      return to_json(f).dump(1) + "\n";
    }
    for (std::size_t i = 0; i < c.rows.size(); ++i) (*results)[i]["expected"] = model::to_json(c.rows[i]);
    return doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  };
  const auto write = [](const std::string& target, const std::string& text) {
    try {
      write_file_atomically(target, text);
    } catch (const std::system_error& e) {
      throw UsageError(fmt::format("-o {}: not written: {} ({})", target, e.what(), e.code().message()));
    }
  };
  if (files.size() == 1) {
    write(path, annotated(files.front()));
    return;
  }
  std::set<std::string> names;
  for (const auto& c : files) {
    const std::string n = fs::path(c.file->source).filename().string();
    if (!names.insert(n).second)
      throw UsageError(fmt::format("-o {}: two inputs are named {}; check them one at a time", path, n));
  }
  for (const auto& c : files) write((fs::path(path) / fs::path(c.file->source).filename()).string(), annotated(c));
}

// Before any work: -o names a file for one input, a folder (made when missing) for several.
void prepare_output(const std::string& path, std::size_t files) {
  if (files == 1) {
    prepare_output_file(path, "-o");
    return;
  }
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec))
    throw UsageError(fmt::format(
        "-o {}: {} result files are checked, so -o names a folder (one file each); this is a file", path, files));
  try {
    create_missing_folders(path, "-o");
  } catch (const std::system_error& e) {
    throw UsageError(fmt::format("-o {}: {} ({})", path, e.what(), e.code().message()));
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("-o {}: {}", path, e.what()));
  }
}

int check_main(int argc, char** argv) {
  CLI::App app{"Judge every row of result files against a model's band: normal, below, above or not covered.",
               "ccbench model check"};
  std::string model_path, format = "text", out, band_text_flag = "99";
  std::vector<std::string> inputs;
  bool extrapolate = false;
  app.add_option("MODEL", model_path, "model file (ccbench model fit, or configs/expect/PROFILE.json)")->required();
  app.add_option("RESULTS", inputs, "result files or folders of them")->required();
  app.add_option("--format", format, "text|markdown|json")->check(CLI::IsMember({"text", "markdown", "json"}));
  app.add_option("-o,--out", out,
                 "write the result file with each row's `expected` object (several inputs: a folder, one file each)");
  app.add_option("--band", band_text_flag, "the band a row is judged against: 99 (default) or 90 (percent)");
  app.add_flag("--extrapolate", extrapolate,
               "also judge rows outside the fitted node counts and sizes, against the widened band");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench model check: %s\n", ccbench::parse_error_text(app, e).c_str());
    return exit_code::usage;
  }
  return run_reporting_errors("ccbench model check", [&]() -> int {
    model::JudgeOptions options;
    const auto band = model::parse_band(band_text_flag);
    if (!band) throw UsageError(fmt::format("--band: {} is not a band; 90 or 99 (percent)", band_text_flag));
    options.band = *band;
    options.extrapolate = extrapolate;
    // Inputs that are not folders must be regular files (a FIFO would block), named before any read.
    for (const auto& in : inputs) {
      std::error_code ec;
      if (!fs::is_directory(in, ec)) require_regular_file(in);
    }
    require_regular_file(model_path);
    const model::Expectation ex = model::Expectation::load(model_path, options);
    const compare::Side side = compare::load_side("inputs", inputs);
    if (!out.empty()) {
      std::vector<std::string> read = inputs;
      read.push_back(model_path);
      if (side.files.size() == 1) {
        refuse_output_among_inputs(out, "-o", read);
      } else {  // each file under its own name in the folder -o names
        for (const auto& f : side.files)
          refuse_output_among_inputs((fs::path(out) / fs::path(f.source).filename()).string(), "-o", read);
      }
      prepare_output(out, side.files.size());
    }
    std::vector<CheckedFile> checked;
    Counts total;
    for (const auto& f : side.files) {
      CheckedFile c;
      c.file = &f;
      c.shape = model::run_shape(f);  // a file without its node count: exit 2 naming it
      for (const auto& row : f.results) {
        c.rows.push_back(ex.judge(c.shape, row));
        c.counts.add(c.rows.back().verdict);
      }
      total.add(c.counts);
      checked.push_back(std::move(c));
    }
    const int code = total.rows() == total.not_covered ? kNothingCovered : total.below > 0 ? kSomeBelow : 0;
    if (format == "json") {
      std::printf("%s\n", render_json(checked, ex, total, code).dump(1).c_str());
    } else if (format == "markdown") {
      std::fputs(render_markdown(checked, ex).c_str(), stdout);
    } else {
      std::fputs(render_text(checked, ex).c_str(), stdout);
    }
    if (!out.empty()) write_annotated(checked, out);
    if (code == kNothingCovered) {
      std::set<std::string> distinct;
      std::string first;
      for (const auto& c : checked)
        for (const auto& e : c.rows) {
          if (first.empty()) first = e.reason;
          distinct.insert(e.reason);
        }
      std::fprintf(
          stderr, "ccbench model check: no row is covered: %s%s\n",
          first.empty() ? "the inputs hold no rows" : first.c_str(),
          distinct.size() > 1 ? fmt::format(" (and {} other reasons, listed above)", distinct.size() - 1).c_str() : "");
    }
    return code;
  });
}

const bool registered = register_model_subcommand(
    {"check", "judge result rows against a model's band: normal, below, above, not covered", &check_main});

}  // namespace
}  // namespace ccbench::cli
