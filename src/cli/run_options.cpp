#include "cli/run_options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "cli/flag_sets/run.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/output_folders.hpp"
#include "core/result.hpp"
#include "core/sendrecv_pattern.hpp"
#include "core/sizes.hpp"
#include "sweep/config_file.hpp"
#include "sweep/flag_suggestion.hpp"
#include "sweep/percentiles_flag.hpp"

namespace ccbench::cli {
namespace {

template <typename T>
T parse_enum(const std::string& flag, const std::string& text, std::optional<T> (*parser)(std::string_view),
             const char* expected) {
  const auto value = parser(text);
  if (!value) throw UsageError(flag + ": unknown value '" + text + "' (expected " + expected + ")");
  return *value;
}

// --pattern, --peer-group, --block-bytes (docs/method.md, "sendrecv patterns"). Whether the group
// divides the rank count is checked by the plan, which knows the ranks.
void apply_sendrecv_pattern_flags(const CLI::App& app, const RunFlags& flags, RunConfig& config) {
  config.sendrecv_pattern = parse_enum<SendRecvPattern>("--pattern", flags.sendrecv_pattern, &parse_sendrecv_pattern,
                                                        "ring, pairwise, many-to-one or one-to-many");
  for (const char* flag : {"--pattern", "--peer-group", "--block-bytes"}) {
    if (app.get_option(flag)->count() == 0) continue;
    for (Op op : config.ops) {
      if (op != Op::sendrecv) {
        throw UsageError(std::string(flag) + ": applies to --ops sendrecv only, not " + std::string(name(op)));
      }
    }
  }
  if (app.get_option("--peer-group")->count() > 0) {
    if (config.sendrecv_pattern == SendRecvPattern::ring) {
      throw UsageError(
          "--peer-group: the ring pattern takes no peer group (--pattern pairwise, many-to-one or "
          "one-to-many)");
    }
    if (config.peer_group < 2) {
      throw UsageError("--peer-group: " + std::to_string(config.peer_group) + " ranks; a group needs at least 2");
    }
  }
  if (!flags.block_bytes.empty()) {
    config.block_bytes = bytes_flag("--block-bytes", flags.block_bytes, {1});
    const std::uint64_t element_bytes = info(config.dtype).size_bytes;
    if (config.block_bytes % element_bytes != 0) {
      throw UsageError("--block-bytes: " + std::to_string(config.block_bytes) + " is not a whole number of " +
                       std::string(name(config.dtype)) + " elements (" + std::to_string(element_bytes) + " bytes)");
    }
  }
}

}  // namespace

bool parse_run_options(int argc, char** argv, RunConfig& config, bool print_help, ExpectFlags* expect) {
  RunFlags flags;  // the row's flag set (cli/flag_sets/run.hpp): every flag of run is declared there
  CLI::App& app = flags;
  std::string& config_path = flags.config_path;

  std::set<std::string> known;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& name : opt->get_lnames()) known.insert(name);
  }

  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) config_path = argv[i + 1];
    if (arg.rfind("--config=", 0) == 0) config_path = arg.substr(9);
  }
  if (!config_path.empty()) args = config_file_tokens(config_path, known);
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::reverse(args.begin(), args.end());  // CLI11 consumes a reversed vector

  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    if (print_help) std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(parse_error_text(app, e));
  }
  config = std::move(flags.config);
  if (flags.stop_below > 0 && flags.expect_model.empty())
    throw UsageError("--stop-below: needs --expect MODEL (the band a row is below)");
  if (flags.expect_band != "99" && flags.expect_band != "90" && flags.expect_band != "99%" &&
      flags.expect_band != "90%")
    throw UsageError("--expect-band: " + flags.expect_band + " is not a band; 90 or 99 (percent)");
  if (expect != nullptr) *expect = {flags.expect_model, flags.expect_band, flags.stop_below};
  if (!config.json_path.empty())  // the result file and its stream never replace a file the run reads
    for (const auto& written : {config.json_path, jsonl_path_for(config.json_path).string()})
      refuse_output_among_inputs(written, "-J/--json", {config_path, config.matrix_path, flags.expect_model});

  if (!flags.ops.empty()) {
    try {
      config.ops = parse_op_list(flags.ops);
    } catch (const UsageError& e) {
      throw UsageError(std::string("--ops: ") + e.what());
    }
  }
  if (flags.ops.empty() && (!config.matrix_path.empty() || !config.moe.empty())) {
    // --matrix / --moe alone: their ops (docs/method.md, "alltoallv and MoE").
    config.ops.clear();
    if (!config.matrix_path.empty()) config.ops.push_back(Op::alltoallv);
    if (!config.moe.empty()) config.ops.insert(config.ops.end(), {Op::moe_dispatch, Op::moe_combine, Op::moe_pair});
  }
  bool any_swept = false;
  for (Op op : config.ops) {
    if (!info(op).is_collective()) throw UsageError("--ops: " + std::string(name(op)) + " is a `ccbench fabric` test");
    any_swept = any_swept || info(op).buffers != OpBuffers::matrix;
    if (op == Op::alltoallv && config.matrix_path.empty()) throw UsageError("--ops alltoallv needs --matrix FILE.csv");
    if (info(op).buffers == OpBuffers::matrix && op != Op::alltoallv && config.moe.empty()) {
      throw UsageError("--ops " + std::string(name(op)) +
                       " needs --moe EXPERTS,TOP_K,TOKENS_PER_RANK,HIDDEN[,ROUTING]");
    }
  }
  if (!any_swept) {
    // A matrix op's size is its matrix: a size range given for nothing to sweep is a mistake.
    for (const auto& [flag, shown] :
         {std::pair{"--min-bytes", "-b/--min-bytes"}, std::pair{"--max-bytes", "-e/--max-bytes"},
          std::pair{"--step-factor", "-f/--step-factor"}, std::pair{"--step-bytes", "-i/--step-bytes"}}) {
      if (app.get_option(flag)->count() > 0) {
        throw UsageError(std::string(shown) + ": the matrix ops (" + op_names(config.ops) +
                         ") take their sizes from --matrix / --moe; sizes apply to swept ops only");
      }
    }
  }
  apply_shared_flags(config, flags.shared);
  config.dtype =
      parse_enum<DType>("-d/--dtype", flags.dtype, &parse_dtype, "int8, uint8, int32, int64, float, double, ...");
  config.redop = parse_enum<RedOp>("-o/--redop", flags.redop, &parse_redop, redop_names().c_str());
  if (config.redop == RedOp::none) throw UsageError("-o/--redop: 'none' is not a reduction");
  if (flags.in_place == "yes" || flags.in_place == "1" || flags.in_place == "true") {
    config.in_place = InPlaceMode::yes;
  } else if (flags.in_place == "no" || flags.in_place == "0" || flags.in_place == "false") {
    config.in_place = InPlaceMode::no;
  } else if (flags.in_place == "both") {
    config.in_place = InPlaceMode::both;
  } else {
    throw UsageError("--in-place: expected yes, no or both, got '" + flags.in_place + "'");
  }
  if (flags.timing == "ccbench") {
    config.timing = TimingMethod::ccbench;
  } else if (flags.timing == "nccl-tests" || flags.timing == "nccl_tests") {
    config.timing = TimingMethod::nccl_tests;
  } else {
    throw UsageError("--timing: expected ccbench or nccl-tests, got '" + flags.timing + "'");
  }
  config.groups = groups::parse(flags.groups_spec);
  config.registration = buffer_registration_flag(flags.registration);
  apply_sendrecv_pattern_flags(app, flags, config);
  apply_percentiles_flag(config, flags.percentiles);
  if (!flags.link_gbps.empty()) {
    config.link_gbps = parse_finite(flags.link_gbps, "--link-gbps");
    if (config.link_gbps < 0) throw UsageError("--link-gbps must not be negative");
  }
  return true;
}

}  // namespace ccbench::cli
