// The live table of `ccbench run` (ConsoleReporter) over the engine and a fake backend: the column
// sets after nccl-tests' follow from the plan before any row exists (a matrix op's, with its bound
// under --link-gbps; a patterned sendrecv's), and the lines are those `ccbench report --format
// table` prints of the same rows.
#include "sweep/console_reporter.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fake_backend.hpp"
#include "report/renderers.hpp"
#include "sweep/channel.hpp"
#include "sweep/engine.hpp"
#include "sweep/plan.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench {
namespace {

using testing::FakeBackend;

// Passes rows to the console reporter and keeps them for the report.
class Tee final : public SweepObserver {
 public:
  explicit Tee(SweepObserver& console) : console_(console) {}
  std::vector<ResultRow> rows;
  void on_op_begin(int trial, Op op) override { console_.on_op_begin(trial, op); }
  void on_result(const ResultRow& row) override {
    console_.on_result(row);
    rows.push_back(row);
  }
  void on_size_done(int trial, Op op, std::span<const ResultRow> done) override {
    console_.on_size_done(trial, op, done);
  }

 private:
  SweepObserver& console_;
};

struct Live {
  std::string table;
  std::vector<ResultRow> rows;
};

// The sweep `config` asks for on 4 ranks (the plan's; the engine runs on one), its live table.
Live run_live(const RunConfig& config) {
  FakeBackend backend;
  LocalChannel channel;
  const Plan plan = make_plan(config, backend, 4, 0);
  Watchdog watchdog(0, [](const Watchdog::Event&) {});
  std::FILE* table = std::tmpfile();
  ConsoleReporter console(plan, config, "", table, stderr);
  Tee tee(console);
  Engine(config, plan, backend, channel, watchdog, tee).run();
  Live live{std::string(static_cast<std::size_t>(std::ftell(table)), '\0'), tee.rows};
  std::rewind(table);
  EXPECT_EQ(std::fread(live.table.data(), 1, live.table.size(), table), live.table.size());
  std::fclose(table);
  return live;
}

RunConfig quiet(RunConfig config) {
  config.warmup = 0;
  config.batch = 1;
  config.iters = 12;
  config.timeout_s = 0;
  config.progress = "never";
  return config;
}

// The report's table of the same rows, its per-file header lines and op titles' " (fake)" aside.
std::string report_table_of(const std::vector<ResultRow>& rows) {
  report::ReportInput in;
  in.files.resize(1);
  in.files[0].results = rows;
  std::string text = report::render_table(in);
  text = text.substr(text.find("#\n# "));  // the file's title lines
  for (std::size_t at; (at = text.find(" (fake)")) != std::string::npos;) text.erase(at, 7);
  return text.substr(0, text.size() - 1);  // the blank line after the file
}

TEST(ConsoleReporter, MatrixOpsGetTheirColumnsWithTheBoundUnderLinkGbps) {
  RunConfig config;
  config.ops = {Op::moe_dispatch, Op::allreduce};
  config.moe = "8,2,16,4,hot:0:0.5";
  config.sizes = {1024, 1024, 2.0, 0};
  config.in_place = InPlaceMode::no;
  config.link_gbps = 100;
  const Live live = run_live(quiet(config));
  ASSERT_EQ(live.rows.size(), 2u);
  ASSERT_TRUE(live.rows[0].extra.contains("matrix"));
  const std::string dispatch = live.table.substr(0, live.table.find("# allreduce"));
  EXPECT_NE(dispatch.find("  imbal    loaded     bound  imbal    loaded     bound\n"), std::string::npos) << dispatch;
  // The allreduce beside it keeps nccl-tests' columns.
  const std::string allreduce = live.table.substr(live.table.find("# allreduce"));
  EXPECT_EQ(allreduce.find("imbal"), std::string::npos) << allreduce;
  EXPECT_EQ(live.table, report_table_of(live.rows));
  // Without --link-gbps no row has a bound, and no bound column.
  config.link_gbps = 0;
  const Live unbound = run_live(quiet(config));
  EXPECT_NE(unbound.table.find("  imbal    loaded  imbal    loaded\n"), std::string::npos) << unbound.table;
  EXPECT_EQ(unbound.table, report_table_of(unbound.rows));
}

TEST(ConsoleReporter, PatternedSendrecvGetsItsColumnsAndRingKeepsNcclTestsOnes) {
  RunConfig config;
  config.ops = {Op::sendrecv};
  config.sizes = {4096, 8192, 2.0, 0};
  config.in_place = InPlaceMode::no;
  config.sendrecv_pattern = SendRecvPattern::many_to_one;
  const Live live = run_live(quiet(config));
  ASSERT_EQ(live.rows.size(), 2u);
  EXPECT_NE(live.table.find("       agg      recv       agg      recv\n"), std::string::npos) << live.table;
  EXPECT_EQ(live.table, report_table_of(live.rows));
  config.sendrecv_pattern = SendRecvPattern::ring;
  const Live ring = run_live(quiet(config));
  EXPECT_EQ(ring.table.find("agg"), std::string::npos) << ring.table;
  EXPECT_EQ(ring.table, report_table_of(ring.rows));
}

}  // namespace
}  // namespace ccbench
