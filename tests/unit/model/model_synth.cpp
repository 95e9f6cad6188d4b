// Writes result files drawn from the known two-regime model (synthetic.hpp) for the command-line
// tests: `ccbench_model_synth OUTDIR known|one-size`.
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/result.hpp"
#include "synthetic.hpp"

int main(int argc, char** argv) {
  using namespace ccbench;
  if (argc != 3) {
    std::fprintf(stderr, "usage: ccbench_model_synth OUTDIR known|one-size\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const std::string mode = argv[2];
  std::filesystem::create_directories(dir);
  std::mt19937_64 rng(7);
  const auto truth = model::synthetic::two_regime_truth();
  if (mode == "one-size") {
    auto f = model::synthetic::make_file(truth, {Op::allreduce}, {1 << 20}, 2, 8, 3, "p5en.48xlarge", rng);
    write_file_atomically(dir / "one-size.json", to_json(f).dump(1));
    return 0;
  }
  const auto sizes = model::synthetic::pow2_sizes(1024, 512ULL << 20);
  for (int nodes : {2, 4, 8, 16}) {
    auto f = model::synthetic::make_file(truth, {Op::allreduce}, sizes, nodes, 8, 3, "p5en.48xlarge", rng);
    write_file_atomically(dir / ("known-" + std::to_string(nodes) + ".json"), to_json(f).dump(1));
  }
  return 0;
}
