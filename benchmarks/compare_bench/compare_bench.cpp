// Times `ccbench compare` on the workload: two folders of 10 trial files, each 3 ops x 30
// sizes x 1000 samples, compared with 10,000 bootstrap resamples. Writes the folders once (under
// $TMPDIR or the first argument), then times load + compare a few times and prints the best.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>

#include "compare/compare.hpp"
#include "compare/load.hpp"
#include "core/bandwidth.hpp"
#include "core/result.hpp"
#include "core/stats.hpp"
#include "core/types.hpp"

namespace fs = std::filesystem;
using namespace ccbench;

namespace {

void write_side(const fs::path& dir, double ratio, std::uint64_t seed) {
  fs::create_directories(dir);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (int t = 0; t < 10; ++t) {
    ResultFile f;
    f.run.status = "complete";
    f.system = {{"instance_type", "p5en.48xlarge"}, {"ranks", 16}, {"ranks_per_node", 8}};
    f.fabric = {{"generation", "v3"}, {"link_gbps", 3200}};
    f.config = {{"timing", {{"method", "ccbench"}}}, {"iters", "auto"}};
    const double trial = std::exp(0.01 * noise(rng));
    for (const char* op : {"allreduce", "allgather", "alltoall"}) {
      for (int s = 0; s < 30; ++s) {
        ResultRow r;
        r.op = op;
        r.dtype = "float";
        r.redop = "sum";
        r.bytes = 1024ull * static_cast<std::uint64_t>(1 + s) * static_cast<std::uint64_t>(1 + s);
        r.ranks = 16;
        r.trial = t;
        const double med = (20.0 + static_cast<double>(r.bytes) / 3e5) * trial / ratio;
        r.samples_us.reserve(1000);
        for (int i = 0; i < 1000; ++i) r.samples_us.push_back(med * std::exp(0.02 * noise(rng)));
        r.time_us.median = stats::summarize(r.samples_us).median;
        r.ci_target_met = true;
        f.results.push_back(std::move(r));
      }
    }
    write_file_atomically(dir / ("trial" + std::to_string(t) + ".json"), to_json(f).dump());
  }
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path root = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "ccbench-compare-bench";
  if (!fs::exists(root / "cand" / "trial9.json")) {
    std::printf("writing %s (2 x 10 files x 90 rows x 1000 samples)...\n", root.c_str());
    write_side(root / "base", 1.0, 1);
    write_side(root / "cand", 1.05, 2);
  }
  compare::CompareOptions o;
  o.baseline = {(root / "base").string()};
  o.candidate = {(root / "cand").string()};
  o.resamples = 10000;
  o.gate = compare::Gate{};
  if (const char* r = std::getenv("CCBENCH_BENCH_RESAMPLES")) o.resamples = std::atoi(r);
  double best = 1e9, best_load = 0, best_compare = 0, cpu_load = 0, cpu_compare = 0;
  std::string verdict;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    const auto b = compare::load_side("baseline", o.baseline);
    const auto c = compare::load_side("candidate", o.candidate);
    const double load = seconds_since(t0);
    const double c1 = cpu_seconds();
    const auto t1 = std::chrono::steady_clock::now();
    const auto result = compare::compare_sides(b, c, o);
    const double cmp = seconds_since(t1);
    const double c2 = cpu_seconds();
    const double total = seconds_since(t0);
    verdict = std::string(compare::name(result.verdict)) + " rows=" + std::to_string(result.rows.size()) +
              " geomean=" + std::to_string(result.summary.geomean.ratio);
    if (total < best) {
      best = total;
      best_load = load;
      best_compare = cmp;
      cpu_load = c1 - c0;
      cpu_compare = c2 - c1;
    }
  }
  std::printf("compare_bench: 2 x 10 trials x 3 ops x 30 sizes x 1000 samples, %d resamples\n", o.resamples);
  std::printf("  %s\n", verdict.c_str());
  std::printf("  best of 3: total %.3f s (load %.3f s, compare %.3f s); target < 2 s: %s\n", best, best_load,
              best_compare, best < 2.0 ? "met" : "MISSED");
  std::printf("  CPU time (all threads): load %.3f s, compare %.3f s\n", cpu_load, cpu_compare);
  return best < 2.0 ? 0 : 1;
}
