// Times the model commands on the workload: 10 result files (node counts 2, 4, 8, 16, 32,
// two runs each; one trial per file, ccbench's default) x 3 ops x 30 sizes (8 B .. 4 GiB), drawn
// from the known two-regime model of tests/unit/model/synthetic.hpp with 2% noise.
//
//   fit      = load the files + observations + fit (BIC over 1-3 regimes, 200 refits, leave-one-
//              node-out and held-out-size cross-validation) + write the model file: what
//              `ccbench model fit` does. Target < 2 s.
//   predict  = load the model file + one prediction: what `ccbench model predict` does. Target < 10 ms.
// References timed in the same run: loading the 10 result files alone (every fit pays it), one
// plain fit (no refits, no cross-validation), parsing the model file's JSON alone.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>

#include "compare/load.hpp"
#include "core/result.hpp"
#include "model/fit.hpp"
#include "model/model.hpp"
#include "synthetic.hpp"

namespace fs = std::filesystem;
using namespace ccbench;

namespace {

double best_of(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path root = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "ccbench-model-bench";
  const fs::path inputs = root / "results";
  if (!fs::exists(inputs / "run9.json")) {
    fs::create_directories(inputs);
    std::mt19937_64 rng(3);
    const auto truth = model::synthetic::two_regime_truth();
    const auto sizes = model::synthetic::pow2_sizes(8, 4ULL << 30);  // 30 sizes
    int i = 0;
    for (int rep = 0; rep < 2; ++rep)
      for (int nodes : {2, 4, 8, 16, 32}) {
        const auto f = model::synthetic::make_file(truth, {Op::allreduce, Op::allgather, Op::reduce_scatter}, sizes,
                                                   nodes, 8, 1, "p5en.48xlarge", rng);
        write_file_atomically(inputs / ("run" + std::to_string(i++) + ".json"), to_json(f).dump());
      }
  }
  const fs::path model_file = root / "model.json";
  int regimes = 0;
  std::size_t rows = 0;

  auto load_rows = [&] {
    const auto side = compare::load_side("inputs", {inputs.string()});
    std::vector<model::Observation> obs;
    for (const auto& f : side.files) {
      auto o = model::observations(f);
      obs.insert(obs.end(), o.begin(), o.end());
    }
    return obs;
  };
  const double t_load = best_of(3, [&] { rows = load_rows().size(); });
  const double t_plain = best_of(3, [&] {
    model::FitOptions o;
    o.refits = 0;
    o.cross_validate = false;
    model::fit(load_rows(), o, {inputs.string()});
  });
  const double t_fit = best_of(3, [&] {
    model::FitOptions o;  // 200 refits, cross-validation on
    const auto m = model::fit(load_rows(), o, {inputs.string()});
    write_file_atomically(model_file, m.to_json().dump(1) + "\n");
    regimes = 0;
    for (const auto& g : m.groups()) regimes += g.regimes;
  });

  model::PredictQuery q{Op::allreduce, 1ULL << 30, 64, 8, ""};
  double predicted_us = 0;
  const double t_parse = best_of(20, [&] {
    std::ifstream in(model_file);
    std::stringstream ss;
    ss << in.rdbuf();
    const auto j = nlohmann::json::parse(ss.str());
    if (!j.contains("model_version")) std::abort();
  });
  const double t_predict = best_of(20, [&] { predicted_us = model::Model::load(model_file).predict(q).time_us; });
  const auto loaded = model::Model::load(model_file);
  const double t_predict_only = best_of(200, [&] { predicted_us = loaded.predict(q).time_us; });

  std::printf("model_bench: 10 files x 3 ops x 30 sizes (%zu rows), 200 refits, cross-validation on\n", rows);
  std::printf("  fit (load + fit + write):  %.3f s  target < 2 s: %s   (%d regimes over 3 groups)\n", t_fit,
              t_fit < 2.0 ? "met" : "MISSED", regimes);
  std::printf("    reference load alone:    %.3f s  ratio fit/load %.1f\n", t_load, t_fit / t_load);
  std::printf("    reference plain fit:     %.3f s  ratio fit/plain %.1f (no refits, no CV)\n", t_plain,
              t_fit / t_plain);
  std::printf("  predict (load model + 1):  %.2f ms  target < 10 ms: %s   (allreduce 1G on 64 nodes: %.0f us)\n",
              t_predict * 1e3, t_predict < 0.01 ? "met" : "MISSED", predicted_us);
  std::printf("    reference JSON parse:    %.2f ms  ratio predict/parse %.2f\n", t_parse * 1e3, t_predict / t_parse);
  std::printf("    one prediction, loaded:  %.3f ms\n", t_predict_only * 1e3);
  return t_fit < 2.0 && t_predict < 0.01 ? 0 : 1;
}
