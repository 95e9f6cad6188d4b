// ccbench_screen_simulation [--seeds N] [--slowdown F] [--busbw-cv CV] [--latency-cv CV]
//                           [--failed K] [--concurrency K] [--min-hosts N] [--max-hosts N]
// For n = 8 ... 1024 hosts with k bad ones: rounds, tests, modelled wall time, and the rates of
// missed and falsely blamed hosts over N seeded fleets (docs/screen.md, "Simulation").
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "screen/simulate.hpp"

using namespace ccbench::screen;

int main(int argc, char** argv) {
  int seeds = 50, failed = 0, concurrency = 0, min_hosts = 8, max_hosts = 1024;
  double slowdown = 0.55, busbw_cv = 0.03, latency_cv = 0.10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--seeds")
      seeds = std::atoi(v);
    else if (flag == "--slowdown")
      slowdown = std::atof(v);
    else if (flag == "--busbw-cv")
      busbw_cv = std::atof(v);
    else if (flag == "--latency-cv")
      latency_cv = std::atof(v);
    else if (flag == "--failed")
      failed = std::atoi(v);
    else if (flag == "--concurrency")
      concurrency = std::atoi(v);
    else if (flag == "--min-hosts")  // rows of n = 8 ... 1024 outside [min, max] are skipped
      min_hosts = std::atoi(v);
    else if (flag == "--max-hosts")
      max_hosts = std::atoi(v);
    else {
      std::fprintf(stderr, "ccbench_screen_simulation: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::printf(
      "# %d fleets per row; slow hosts at %.2f of the busbw; noise per test: busbw CV %.3f, latency CV %.3f;"
      " %d failed host(s); concurrency %s\n",
      seeds, slowdown, busbw_cv, latency_cv, failed,
      concurrency == 0 ? "unlimited" : std::to_string(concurrency).c_str());
  std::printf("# test time model: 2 s launch + 0.05 s per host + 4 s measuring (failed: + 30 s watchdog instead)\n");
  std::printf(
      "| n | k slow | rounds | tests | all pairs n(n-1)/2 | tests / (n log2 n) | wall (model) | missed | falsely "
      "blamed |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int n = 8; n <= 1024; n *= 2) {
    if (n < min_hosts || n > max_hosts) continue;
    for (int k : {1, std::max(2, n / 16)}) {
      double rounds = 0, tests = 0, wall = 0;
      long missed = 0, blamed = 0, bad = 0, good = 0;
      for (int s = 1; s <= seeds; ++s) {
        SimulationConfig c;
        c.hosts = n;
        c.slow_hosts = k;
        c.failed_hosts = failed;
        c.slowdown = slowdown;
        c.busbw_cv = busbw_cv;
        c.latency_cv = latency_cv;
        c.concurrency = concurrency;
        c.seed = static_cast<std::uint64_t>(s);
        const SimulationResult r = simulate(c);
        rounds += r.rounds;
        tests += r.tests;
        wall += r.wall_s;
        missed += r.missed;
        blamed += r.false_blamed;
        bad += r.bad;
        good += n - r.bad;
      }
      std::printf("| %d | %d | %.1f | %.1f | %d | %.2f | %.0f s | %ld / %ld (%.2f%%) | %ld / %ld (%.3f%%) |\n", n, k,
                  rounds / seeds, tests / seeds, n * (n - 1) / 2, tests / seeds / (n * std::log2(n)), wall / seeds,
                  missed, bad, 100.0 * static_cast<double>(missed) / static_cast<double>(bad), blamed, good,
                  100.0 * static_cast<double>(blamed) / static_cast<double>(good));
    }
  }
  return 0;
}
