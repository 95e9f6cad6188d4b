#include "cli/run_options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "sweep/config_file.hpp"
#include "sweep/flag_suggestion.hpp"
#include "sweep/run_flags.hpp"
#include "sweep/session_flags.hpp"

namespace ccbench::cli {
namespace {

template <typename T>
T parse_enum(const std::string& flag, const std::string& text, std::optional<T> (*parser)(std::string_view),
             const char* expected) {
  const auto value = parser(text);
  if (!value) throw UsageError(flag + ": unknown value '" + text + "' (expected " + expected + ")");
  return *value;
}

}  // namespace

bool parse_run_options(int argc, char** argv, RunConfig& config, bool print_help) {
  CLI::App app{"ccbench run: collective sweep (launch with mpirun or srun)", "ccbench run"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(36);

  std::string link_gbps, groups_spec = "none";
  std::string ops, dtype = "float", redop = "sum", in_place = "both", timing = "ccbench", config_path;
  SharedFlagText shared;
  add_backend_flag(app, config.backend, "mpi | nccl")->default_val(config.backend);
  app.add_option("--ops", ops, "comma list: " + op_names(all_collective_ops(), ","))
      ->default_str("allreduce,allgather,alltoall");
  add_shared_flags(app, config, shared, "collective");
  app.add_option("-d,--dtype", dtype, dtype_names(" "))
      ->default_str("float");
  app.add_option("-o,--redop", redop, redop_names(" "))->default_str("sum");
  app.add_option("-r,--root", config.root, "root rank of broadcast")->default_val(0);
  app.add_option("--in-place", in_place, "yes | no | both")->default_str("both");
  app.add_option("--timing", timing, "ccbench | nccl-tests (back-to-back, mean over ranks)")->default_str("ccbench");
  add_nccl_path_flag(app, config.nccl_path, "nccl: nvlink | efa | all");
  app.add_option("--groups", groups_spec,
                 "concurrent communicators: mod:N (same rank mod N together), div:N (blocks of N), none")
      ->default_str("none");
  app.add_flag("--per-rank", config.per_rank, "each rank's median op time and last arrivals in every row");
  app.add_option("-G,--cudagraph", config.graph_launches, "nccl: ops captured per CUDA graph launch")->default_val(0);
  app.add_option("--fabric-path", config.fabric_path, "record the fabric path (shm, tcp, efa, ...)");
  app.add_option("--fabric-generation", config.fabric_generation, "record the fabric generation (v3, v4, ...)");
  app.add_option("--link-gbps", link_gbps, "record the per-node link rate in Gbit/s");
  app.add_option("--config", config_path, "YAML file with the same keys (flags win)");
  app.add_option("--matrix", config.matrix_path, "alltoallv's N x N CSV of bytes, row = sender (sizes then unused)");
  app.add_option("--moe", config.moe,
                 "moe_dispatch, moe_combine, moe_pair from a seeded router: "
                 "EXPERTS,TOP_K,TOKENS_PER_RANK,HIDDEN[,uniform|zipf:S|hot:E:FRACTION]");

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

  if (!ops.empty()) {
    try {
      config.ops = parse_op_list(ops);
    } catch (const UsageError& e) {
      throw UsageError(std::string("--ops: ") + e.what());
    }
  }
  if (ops.empty() && (!config.matrix_path.empty() || !config.moe.empty())) {
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
  apply_shared_flags(config, shared);
  config.dtype = parse_enum<DType>("-d/--dtype", dtype, &parse_dtype, "int8, uint8, int32, int64, float, double, ...");
  config.redop = parse_enum<RedOp>("-o/--redop", redop, &parse_redop, redop_names().c_str());
  if (config.redop == RedOp::none) throw UsageError("-o/--redop: 'none' is not a reduction");
  if (in_place == "yes" || in_place == "1" || in_place == "true") {
    config.in_place = InPlaceMode::yes;
  } else if (in_place == "no" || in_place == "0" || in_place == "false") {
    config.in_place = InPlaceMode::no;
  } else if (in_place == "both") {
    config.in_place = InPlaceMode::both;
  } else {
    throw UsageError("--in-place: expected yes, no or both, got '" + in_place + "'");
  }
  if (timing == "ccbench") {
    config.timing = TimingMethod::ccbench;
  } else if (timing == "nccl-tests" || timing == "nccl_tests") {
    config.timing = TimingMethod::nccl_tests;
  } else {
    throw UsageError("--timing: expected ccbench or nccl-tests, got '" + timing + "'");
  }
  config.groups = groups::parse(groups_spec);
  if (!link_gbps.empty()) {
    config.link_gbps = parse_finite(link_gbps, "--link-gbps");
    if (config.link_gbps < 0) throw UsageError("--link-gbps must not be negative");
  }
  return true;
}

}  // namespace ccbench::cli
