// Google Benchmark's JSON output format, so its tools/compare.py (and dashboards built for it) can
// read ccbench results.
//
// Mapping: one benchmark per result row, named op/dtype/redop/place/bytes (the name is what
// compare.py matches across two files). Trials become repetitions (run_type "iteration",
// repetition_index = trial), which is what compare.py's U test resamples. real_time is the median
// time in microseconds; cpu_time repeats it (host CPU time is not measured; compare.py requires the
// field). bytes_per_second is algbw; busbw and the CI ride along as user counters.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>

#include "core/percentiles.hpp"
#include "core/run_metadata.hpp"
#include "report/console_table.hpp"
#include "report/renderers.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {

std::string render_gbench(const ReportInput& input) {
  using nlohmann::json;
  json context = json::object();
  if (!input.files.empty()) {
    const ResultFile& first = input.files.front();
    std::string host;
    if (first.system.contains("hosts") && first.system["hosts"].is_array() && !first.system["hosts"].empty()) {
      host = json_text(first.system["hosts"][0].value("hostname", json()));
    }
    std::string command;
    for (const auto& c : first.run.command) command += (command.empty() ? "" : " ") + c;
    context = {
        {"date", first.run.started_at},
        {"host_name", host},
        {"executable", command.empty() ? std::string("ccbench") : command},
        // Only an integer: a ranks of 1e30 went through get<int>() (UB; found by the sanitizer fuzz run).
        {"num_cpus",
         first.system.contains("ranks") && first.system["ranks"].is_number_integer() ? first.system["ranks"] : json(0)},
        {"mhz_per_cpu", 0},
        {"cpu_scaling_enabled", false},
        {"caches", json::array()},
        {"load_avg", json::array()},
        {"library_build_type", "release"},
        {"ccbench_label", first.run.label},
        {"ccbench_instance_type", RunMetadata(first).text("instance_type")},
        {"ccbench_source", first.source},
    };
  }
  const auto labels = display_labels(input.files);
  const bool several = input.files.size() > 1;
  json benchmarks = json::array();
  // family = op/dtype/redop/place; instance = size within the family (compare.py sorts by these).
  std::map<std::string, int> family_index;
  std::map<std::string, std::tuple<int, int>> instance_index;  // name -> (family, instance)
  std::map<std::string, int> family_instances;
  for (std::size_t fi = 0; fi < input.files.size(); ++fi) {
    const ResultFile& file = input.files[fi];
    auto key = [](const ResultRow& r) {
      return r.op + "/" + r.dtype + "/" + r.redop + (r.in_place ? "/in/" : "/out/") + std::to_string(r.bytes);
    };
    std::map<std::string, int> reps;  // trials of each benchmark in this file
    for (const auto& r : file.results) ++reps[key(r)];
    for (const ResultRow& r : file.results) {
      // With several files, the label keeps names apart; with one, names match across separate reports.
      const std::string family = (several ? labels[fi] + ":" : std::string()) + r.op + "/" + r.dtype + "/" + r.redop +
                                 (r.in_place ? "/in" : "/out");
      const std::string name = family + "/" + std::to_string(r.bytes);
      const auto fam_it = family_index.try_emplace(family, static_cast<int>(family_index.size())).first;
      auto [inst_it, new_instance] = instance_index.try_emplace(name, fam_it->second, family_instances[family]);
      if (new_instance) ++family_instances[family];
      const std::uint64_t iterations = r.samples_us.size() * static_cast<std::uint64_t>(r.batch < 1 ? 1 : r.batch);
      json b = {
          {"name", name},
          {"family_index", std::get<0>(inst_it->second)},
          {"per_family_instance_index", std::get<1>(inst_it->second)},
          {"run_name", name},
          {"run_type", "iteration"},
          {"repetitions", reps[key(r)]},
          {"repetition_index", r.trial},
          {"threads", 1},
          {"iterations", iterations},
          {"real_time", r.time_us.median},
          {"cpu_time", r.time_us.median},
          {"time_unit", "us"},
          {"bytes_per_second", r.algbw_gbps * 1e9},
          {"busbw_gbps", r.busbw_gbps},
          {"algbw_gbps", r.algbw_gbps},
          {"time_ci95_lo_us", has_ci95(r) ? nlohmann::json(r.time_us.ci95_lo) : nlohmann::json(nullptr)},
          {"time_ci95_hi_us", has_ci95(r) ? nlohmann::json(r.time_us.ci95_hi) : nlohmann::json(nullptr)},
          {"wrong", r.wrong},
          {"ranks", r.ranks},
          {"backend", r.backend},
      };
      // run --percentiles: each level's value and CI as user counters (p99_us, p99_ci95_us).
      for (const double p : percentile_levels(file.results)) {
        const auto level = percentile_value(r, p);
        if (!level) continue;
        const std::string k = percentiles::key(p);
        b[k + "_us"] = level->value_us;
        b[k + "_ci95_us"] =
            level->ci95_us ? json::array({level->ci95_us->first, level->ci95_us->second}) : json(nullptr);
      }
      // Matrix ops and patterned sendrecv: their load and rates as user counters, named as the
      // CSV columns (Google Benchmark's counters are numbers: the pattern's name is in the CSV).
      const auto counter = [&b](const char* counter_name, const std::optional<double>& v) {
        if (v) b[counter_name] = *v;
      };
      if (const auto m = matrix_fields(r)) {
        counter("matrix_imbalance", m->imbalance);
        counter("matrix_most_loaded_gbps", m->most_loaded_gbps);
        counter("matrix_bound_us", m->bound_us);
      }
      if (const auto p = pattern_fields(r)) {
        counter("sendrecv_aggregate_gbps", p->aggregate_gbps);
        counter("sendrecv_per_receiver_gbps", p->per_receiver_gbps);
      }
      benchmarks.push_back(std::move(b));
    }
  }
  return json{{"context", context}, {"benchmarks", benchmarks}}.dump(2) + "\n";
}

}  // namespace ccbench::report
