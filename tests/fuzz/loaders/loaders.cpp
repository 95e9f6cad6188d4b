#include "loaders.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>

#include "checkpoint/s3/client.hpp"
#include "checkpoint/s3/http.hpp"
#include "checkpoint/s3/protocol.hpp"
#include "checkpoint/s3/s3_storage.hpp"
#include "checkpoint/step_dirs.hpp"
#include "checkpoint/storage.hpp"
#include "compare/claim.hpp"
#include "core/input_file.hpp"
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

// The S3 engine's response parsers (checkpoint/s3/protocol.cpp) behind the calls that use them: a
// server that answers every request with the file's bytes and `status`. A StorageError is the
// engine refusing a bad answer (exit 2 in a run), not a finding; anything else escaping is.
class ReplayServer final : public checkpoint::s3::HttpClient {
 public:
  ReplayServer(std::string body, long status) : body_(std::move(body)), status_(status) {}
  checkpoint::s3::HttpResponse send(const checkpoint::s3::HttpRequest& q) override {
    checkpoint::s3::HttpResponse r;
    r.status = status_;
    r.body = body_;
    if (q.into != nullptr) r.received_bytes = std::min(q.into_bytes, body_.size());
    return r;
  }

 private:
  std::string body_;
  long status_;
};

checkpoint::s3::RetryPolicy no_sleep() {
  checkpoint::s3::RetryPolicy retry;
  retry.attempts = 2;
  retry.sleep = [](double) {};
  return retry;
}

template <class Call>
void refused_is_an_answer(Call&& call) {
  try {
    call();
  } catch (const checkpoint::StorageError&) {
  }
}

// ListObjectsV2: the parser, then the step numbering's paged listing and claim over that answer.
void s3_listing(const std::filesystem::path& path) {
  namespace s3 = checkpoint::s3;
  const std::string body = read_input_file(path);
  (void)s3::parse_listing(body);
  s3::S3Storage storage(std::make_unique<ReplayServer>(body, 200), s3::resolve_endpoint("http://127.0.0.1:9", "", ""),
                        s3::parse_location("s3://ckpt/run", "--target"), {}, no_sleep());
  refused_is_an_answer([&] { (void)storage.entries("s3://ckpt/run"); });
  refused_is_an_answer([&] { (void)storage.unusable("s3://ckpt/run"); });
}

// InitiateMultipartUpload and CompleteMultipartUpload (an <Error> inside a 200).
void s3_upload(const std::filesystem::path& path) {
  namespace s3 = checkpoint::s3;
  const std::string body = read_input_file(path);
  (void)s3::parse_upload_id(body);
  ReplayServer server(body, 200);
  s3::Client client(server, s3::resolve_endpoint("http://127.0.0.1:9", "", ""), "ckpt", no_sleep());
  std::atomic<std::uint64_t> retries{0};
  refused_is_an_answer([&] { (void)client.create_upload("run/step-000001/rank-00000.shard"); });
  refused_is_an_answer([&] { client.complete("run/step-000001/rank-00000.shard", "u", {{1, "\"e\""}}, retries); });
}

// Error bodies: what a refusal says, over the statuses the engine explains differently.
void s3_error(const std::filesystem::path& path) {
  namespace s3 = checkpoint::s3;
  const std::string body = read_input_file(path);
  const s3::ErrorXml e = s3::parse_error(body);
  for (long status : {400L, 403L, 404L, 409L, 412L, 500L, 501L, 503L}) {
    (void)s3::explain(status, e, "ckpt");
    ReplayServer server(body, status);
    s3::Client client(server, s3::resolve_endpoint("http://127.0.0.1:9", "", ""), "ckpt", no_sleep());
    refused_is_an_answer([&] { (void)client.head("run/step-000001/rank-00000.shard"); });
    refused_is_an_answer([&] { (void)client.create_if_absent("run/step-000001/ccbench-claim", "t", 1); });
  }
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
    {"s3_listing", ".xml", &s3_listing},
    {"s3_upload", ".xml", &s3_upload},
    {"s3_error", ".xml", &s3_error},
    // A step's manifest, as --keep, the end of a run and --phases read parse it (a ParseError
    // naming the file is the answer for a bad one).
    {"manifest", ".json", [](const auto& p) { (void)checkpoint::parse_manifest(read_input_file(p), p.string()); }},
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
