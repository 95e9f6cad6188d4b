// The rows' flag sets (cli/flag_sets/): every measuring command has one, the command prints (and so
// parses with) exactly it, and a flag the row declares is the one the command's parse checks.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "cli/checkpoint_options.hpp"
#include "cli/flag_sets/flag_set.hpp"
#include "cli/measuring_commands.hpp"
#include "cli/run_options.hpp"
#include "core/error.hpp"

namespace ccbench::cli {
namespace {

struct Output {
  std::string text;
  int exit_code = -1;
};

// `ccbench-measure NAME --help`, the real binary (from a shell: MPI starts as a singleton), bounded
// by `timeout` so a hang fails the test instead of stalling it.
Output measure_help(std::string_view name) {
  const std::string command =
      "timeout 60 " CCBENCH_BUILD_DIR "/ccbench-measure " + std::string(name) + " --help 2>/dev/null";
  Output out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.text.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The flags as CLI11's help prints them, in order: "-b,--min-bytes", "--ops", ... (positionals,
// printed under their own heading, are not options).
std::vector<std::string> printed_flags(const std::string& help) {
  std::vector<std::string> flags;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  -", 0) != 0) continue;
    flags.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return flags;
}

std::vector<std::string> declared_flags(const CLI::App& app) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : app.get_options()) {
    if (!option->get_snames().empty() || !option->get_lnames().empty()) flags.push_back(option->get_name(false, true));
  }
  return flags;
}

TEST(FlagSets, EveryRowHasOneNamedAfterItsCommand) {
  const std::set<std::string> want{"run", "fabric", "info", "congestion", "checkpoint", "replay"};
  std::set<std::string> seen;
  for (const auto& row : measuring_commands()) {
    SCOPED_TRACE(std::string(row.name));
    seen.emplace(row.name);
    ASSERT_NE(row.flags, nullptr);
    const std::unique_ptr<CLI::App> app = row.flags();
    ASSERT_NE(app, nullptr);
    EXPECT_EQ(app->get_name(), "ccbench " + std::string(row.name));
    EXPECT_FALSE(declared_flags(*app).empty());
  }
  EXPECT_EQ(seen, want);
}

// The factory's flags are those the command itself prints, in the same order, with the same text.
TEST(FlagSets, AreWhatCcbenchMeasurePrintsForHelp) {
  for (const auto& row : measuring_commands()) {
    SCOPED_TRACE(std::string(row.name));
    const Output out = measure_help(row.name);
    ASSERT_EQ(out.exit_code, 0) << out.text;
    const std::unique_ptr<CLI::App> app = row.flags();
    const std::vector<std::string> declared = declared_flags(*app);
    EXPECT_EQ(printed_flags(out.text), declared);
    EXPECT_EQ(out.text, app->help());
  }
}

// The Markdown reference has one row per declared option (flags and positionals).
TEST(FlagSets, MarkdownReferenceHasARowPerOption) {
  for (const auto& row : measuring_commands()) {
    SCOPED_TRACE(std::string(row.name));
    const std::unique_ptr<CLI::App> app = row.flags();
    const std::string table = flag_reference_markdown(*app);
    std::size_t rows = 0;
    std::istringstream lines(table);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("| `", 0) == 0) ++rows;
    }
    EXPECT_EQ(rows, app->get_options().size());
  }
  const std::unique_ptr<CLI::App> run = measuring_commands().front().flags();
  ASSERT_EQ(run->get_name(), "ccbench run");
  const std::string table = flag_reference_markdown(*run);
  EXPECT_NE(table.find("| `--timing` | TEXT | ccbench | ccbench \\| nccl-tests (back-to-back, mean over ranks) |\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| `--per-rank` |  |  | each rank's median op time and last arrivals in every row |\n"),
            std::string::npos)
      << table;
}

const measure::MeasuringCommand& row_of(std::string_view name) {
  for (const auto& row : measuring_commands()) {
    if (row.name == name) return row;
  }
  throw std::runtime_error("no row " + std::string(name));
}

std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

// What a parse prints for --help (rank 0's help), from std::cout.
template <typename Parse>
std::string help_printed_by(Parse parse, std::vector<std::string> args) {
  std::vector<char*> argv = argv_of(args);
  std::ostringstream captured;
  std::streambuf* const saved = std::cout.rdbuf(captured.rdbuf());
  bool parsed = true;
  try {
    parsed = parse(static_cast<int>(args.size()), argv.data());
  } catch (...) {
    std::cout.rdbuf(saved);
    throw;
  }
  std::cout.rdbuf(saved);
  EXPECT_FALSE(parsed);
  return captured.str();
}

template <typename Parse>
std::string usage_error(Parse parse, std::vector<std::string> args) {
  std::vector<char*> argv = argv_of(args);
  try {
    parse(static_cast<int>(args.size()), argv.data());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FlagSets, RunParsesTheRowsFlags) {
  const auto parse = [](int argc, char** argv) {
    RunConfig config;
    return parse_run_options(argc, argv, config, true);
  };
  EXPECT_EQ(help_printed_by(parse, {"ccbench run", "--help"}), row_of("run").flags()->help());
  // --timing is declared in the row; its value is checked by run's parse, naming the flag.
  ASSERT_NE(row_of("run").flags()->get_option_no_throw("--timing"), nullptr);
  EXPECT_EQ(usage_error(parse, {"ccbench run", "--timing", "bogus"}),
            "--timing: expected ccbench or nccl-tests, got 'bogus'");
}

TEST(FlagSets, CheckpointParsesTheRowsFlags) {
  const auto parse = [](int argc, char** argv) {
    RunConfig config;
    CheckpointOptions opt;
    return parse_checkpoint_options(argc, argv, config, opt, true);
  };
  EXPECT_EQ(help_printed_by(parse, {"ccbench checkpoint", "--help"}), row_of("checkpoint").flags()->help());
  ASSERT_NE(row_of("checkpoint").flags()->get_option_no_throw("--layout"), nullptr);
  EXPECT_EQ(usage_error(parse, {"ccbench checkpoint", "--target", "/nonexistent/ckpt", "--shard-bytes", "4K",
                                "--layout", "bogus"}),
            "--layout: 'bogus' is not file-per-rank or shared-file");
}

}  // namespace
}  // namespace ccbench::cli
