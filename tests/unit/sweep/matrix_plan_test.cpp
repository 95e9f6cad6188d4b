// The matrix ops in run's plan and flags: one case per op whatever -b/-e say, the same size and
// count on every rank (each rank posts its own counts), out of place only under --in-place both, the
// source recorded;
// --matrix / --moe choosing the ops and the usage errors naming the flag.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/run_options.hpp"
#include "core/error.hpp"
#include "fake_backend.hpp"
#include "sweep/plan.hpp"

namespace ccbench {
namespace {

using testing::FakeBackend;

// 8 experts on 4 ranks, top-2 of 16 tokens of 4 floats: every rank sends 16 x 2 x 4 x 4 = 512 bytes.
TEST(MatrixPlan, OneOutOfPlaceCasePerMoeOpTheSameOnEveryRank) {
  FakeBackend backend;
  RunConfig config;
  config.ops = {Op::moe_dispatch, Op::moe_combine, Op::moe_pair};
  config.moe = "8,2,16,4,zipf:1";
  config.sizes = {8, 64 << 20, 2.0, 0};  // not used by a matrix op
  for (int rank = 0; rank < 4; ++rank) {
    const Plan plan = make_plan(config, backend, 4, rank);
    ASSERT_EQ(plan.ops.size(), 3u);
    EXPECT_EQ(plan.cases_per_trial, 3u);
    EXPECT_TRUE(plan.skipped.empty());
    for (const PlannedOp& op : plan.ops) {
      ASSERT_EQ(op.sizes.size(), 1u);
      ASSERT_EQ(op.sizes[0].variants.size(), 1u);
      const CaseSpec& c = op.sizes[0].variants[0];
      EXPECT_FALSE(c.in_place);
      const std::uint64_t bytes = op.op == Op::moe_pair ? 1024u : 512u;
      EXPECT_EQ(c.layout.bytes, bytes) << name(op.op);
      EXPECT_EQ(c.layout.count, bytes / 4) << name(op.op);
      // Each rank routes all its tokens (dispatch, and the pair's first half); the combine sends back
      // what the rank received.
      if (op.op != Op::moe_combine) EXPECT_EQ(c.matrix->counts.send_elements * 4, 512u);
      EXPECT_EQ(c.matrix->source.at("moe"), "8,2,16,4,zipf:1");
      EXPECT_EQ(c.matrix->source.at("seed"), 1);
    }
  }
  // --in-place yes is the backends' to refuse (backends/backend.cpp, matrix_unsupported): run.matrix
  // checks it under mpirun.
}

TEST(MatrixPlan, MatrixFileRecordedWithItsSha256) {
  const std::string path = ::testing::TempDir() + "/three.csv";
  std::ofstream(path) << "0,8,16\n4,12,4\n40,0,0\n";
  FakeBackend backend;
  RunConfig config;
  config.ops = {Op::alltoallv, Op::allreduce};
  config.matrix_path = path;
  config.sizes = {8, 16, 2.0, 0};
  const Plan plan = make_plan(config, backend, 3, 2);
  ASSERT_EQ(plan.ops.size(), 2u);
  EXPECT_EQ(plan.ops[1].sizes.size(), 2u);  // allreduce still sweeps 8 and 16 bytes
  const CaseSpec& c = plan.ops[0].sizes[0].variants[0];
  EXPECT_EQ(c.layout.bytes, 28u);
  EXPECT_EQ(c.layout.send_elements, 10u);  // rank 2 sends 40 bytes
  EXPECT_EQ(c.layout.recv_elements, 5u);   // and receives 16 + 4
  EXPECT_EQ(c.matrix->source.at("sha256"), "d9e4db617a1b222f254a1b8228176151a3c5cd41c3117a94435c5dea57104d77");
  EXPECT_EQ(c.matrix->source.at("file"), path);
}

RunConfig parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ccbench");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  RunConfig config;
  cli::parse_run_options(static_cast<int>(args.size()), argv.data(), config, false);
  return config;
}

std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MatrixFlags, MatrixAndMoeChooseTheirOps) {
  EXPECT_EQ(parse({"--matrix", "m.csv"}).ops, (std::vector<Op>{Op::alltoallv}));
  EXPECT_EQ(parse({"--moe", "8,2,16,4"}).ops, (std::vector<Op>{Op::moe_dispatch, Op::moe_combine, Op::moe_pair}));
  EXPECT_EQ(parse({"--moe", "8,2,16,4", "--ops", "moe_pair,allreduce", "-e", "1M"}).ops,
            (std::vector<Op>{Op::moe_pair, Op::allreduce}));
}

TEST(MatrixFlags, ErrorsNameTheFlag) {
  EXPECT_EQ(error_of({"--ops", "alltoallv"}), "--ops alltoallv needs --matrix FILE.csv");
  EXPECT_EQ(error_of({"--ops", "moe_combine"}),
            "--ops moe_combine needs --moe EXPERTS,TOP_K,TOKENS_PER_RANK,HIDDEN[,ROUTING]");
  EXPECT_EQ(error_of({"--matrix", "m.csv", "-b", "1K"}),
            "-b/--min-bytes: the matrix ops (alltoallv) take their sizes from --matrix / --moe; sizes apply to swept "
            "ops only");
}

}  // namespace
}  // namespace ccbench
