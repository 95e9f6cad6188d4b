#include "loaders.hpp"

#include <set>

#include "compare/claim.hpp"
#include "core/error.hpp"
#include "model/model.hpp"
#include "model/workload.hpp"
#include "report/plan_table.hpp"
#include "launch/hosts.hpp"
#include "import/import.hpp"
#include "compare/load.hpp"
#include "core/result.hpp"
#include "report/renderers.hpp"
#include "sweep/config_file.hpp"

namespace ccbench::fuzz {
namespace {

void render_all(const std::filesystem::path& path) {
  report::ReportInput input;
  input.files.push_back(load_result_file(path));
  for (auto f : {report::Format::table, report::Format::markdown, report::Format::csv, report::Format::html,
                 report::Format::prometheus, report::Format::gbench}) {
    (void)report::render(f, input);
  }
}

void import_and_write(importer::Imported (*fn)(const std::filesystem::path&, const importer::ImportOptions&),
                      const std::filesystem::path& path) {
  importer::ImportOptions options;
  options.op = "allreduce";
  options.ranks = 2;
  const auto imported = fn(path, options);
  (void)importer::imported_text(imported.file);
}

// A model file as predict and plan use it: loaded, then asked one question per fitted layout.
void model_predict(const std::filesystem::path& path) {
  const model::Model m = model::Model::load(path);
  for (const auto& g : m.groups()) {
    for (std::uint64_t bytes : {std::uint64_t{8}, g.bytes_min, g.bytes_max, std::uint64_t{1} << 30}) {
      for (int nodes : {1, 2, 32}) {
        try {
          (void)m.predict({g.op, bytes, nodes, g.ranks_per_node, g.profile});
        } catch (const UsageError&) {
          // the model cannot answer this one: an answer, not a finding
        }
      }
    }
  }
}

void plan_render(const std::filesystem::path& path) {
  const auto plan = report::load_plan_document(path);
  (void)report::plan_text(plan);
  (void)report::plan_markdown(plan);
  (void)report::plan_html_page(plan);
}

void workload_steps(const std::filesystem::path& path) {
  (void)model::step_collectives(model::load_workload(path));
}

const std::set<std::string> kRunFlags = {"ops", "min-bytes", "max-bytes", "iters", "label", "dtype", "trials"};

// Adding a loader is one line here plus seeds in its corpus folder.
constexpr Loader kLoaders[] = {
    {"result_json", ".json", [](const auto& p) { (void)load_result_file(p); }},
    {"result_jsonl", ".jsonl", [](const auto& p) { (void)load_result_file(p); }},
    {"compare_side", ".json", [](const auto& p) { (void)compare::load_side("baseline", {p.string()}); }},
    {"report", ".json", &render_all},
    {"claim", ".yaml", [](const auto& p) { (void)compare::load_claim_file(p); }},
    {"config", ".yaml", [](const auto& p) { (void)config_file_tokens(p.string(), kRunFlags); }},
    {"nccl_tests_text", ".txt", [](const auto& p) { import_and_write(&importer::import_nccl_tests, p); }},
    {"nccl_tests_json", ".json", [](const auto& p) { import_and_write(&importer::import_nccl_tests, p); }},
    {"osu", ".txt", [](const auto& p) { import_and_write(&importer::import_osu, p); }},
    {"model", ".json", &model_predict},
    {"plan", ".json", &plan_render},
    {"workload", ".yaml", &workload_steps},
    {"hostfile", ".txt", [](const auto& p) { (void)launch::read_hostfile(p); }},
};

}  // namespace

std::span<const Loader> loaders() { return kLoaders; }

const Loader* find_loader(std::string_view name) {
  for (const auto& l : kLoaders) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

}  // namespace ccbench::fuzz
