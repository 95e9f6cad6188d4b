// The S3 engine's Storage (docs/checkpoint.md, "S3 engine"); the calls it makes are in client.hpp.
// Exposed (not only through make_s3_storage) so a test drives it over a scripted HttpClient.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/s3/client.hpp"
#include "checkpoint/s3/http.hpp"
#include "checkpoint/s3/protocol.hpp"
#include "checkpoint/storage.hpp"

namespace ccbench::checkpoint::s3 {

class S3Storage final : public Storage {
 public:
  S3Storage(std::unique_ptr<HttpClient> http, Endpoint endpoint, Location where, RemoteOptions options,
            RetryPolicy retry = {});
  ~S3Storage() override;
  Engine engine() const override { return Engine::s3; }
  // --layout shared-file, --direct, --no-fsync and --export-to have no meaning for objects; a shard
  // of more than 10,000 parts of --part-size is more than S3's multipart upload takes.
  std::string refuses(const EngineRequest& asked) const override;
  std::string io_summary(const IoSettings& io) const override;
  nlohmann::json settings() const override;  // part_bytes, concurrency, endpoint
  std::string target_type(const std::string&) const override { return "s3"; }
  bool one_namespace() const override { return true; }
  std::optional<std::uint64_t> free_bytes(const std::string&) override { return std::nullopt; }
  bool local_cache() const override { return false; }
  bool remote_listing() const override { return true; }
  // step-NNNNNN, and this engine's run-unique step-NNNNNN-<16 hex digits> (claim_step).
  int committed_step_of(const std::string& entry) const override;
  // GetObject of STEP/ccbench-manifest.json (HeadObject first: nullopt when there is none).
  std::optional<std::string> read_manifest(const std::string& step_dir) override;
  bool removable(const std::string& step_dir) const override;  // only a step this run claimed
  // Only a step this run claimed: its manifest, the objects it lists, its claim object.
  std::string remove_step(const CommittedStep& step) override;
  std::unique_ptr<StorageFile> open(const std::string& path, OpenFor mode, const OpenOptions& options) override;
  void make_dir(const std::string&) override {}  // prefixes exist as soon as a key is under them
  // Only a step this run claimed (claim_step): a failed trial's cleanup never deletes another run's.
  void remove_tree(const std::string& path) override;
  void rename(const std::string& from, const std::string& to) override;  // only from == to (no rename in S3)
  void sync_dir(const std::string&) override {}  // an object is durable when its upload completed
  Eviction evict(const std::string&) override { return {true, "remote", ""}; }  // no local cache to drop
  std::string unusable(const std::string& target) override;
  std::vector<std::string> entries(const std::string& dir) override;
  bool commits_by_rename() const override { return false; }
  // The step's claim object PREFIX/step-NNNNNN/ccbench-claim created with If-None-Match: * (a taken
  // number: the next one), where the server checks that condition (probed once); otherwise the
  // run-unique step-NNNNNN-<token>. Two runs into one prefix never share a step.
  std::string claim_step(const std::string& target, int next_step) override;

  static constexpr const char* kClaimName = "ccbench-claim";

 private:
  std::string key_of(const std::string& path) const;  // s3://bucket/a/b -> a/b
  static std::string random_token();
  bool conditional_create_checked();
  void list_all(const std::string& prefix, const std::string& delimiter,
                const std::function<void(const Listing&)>& each);

  std::unique_ptr<HttpClient> http_;
  Location where_;
  RemoteOptions options_;
  std::unique_ptr<Client> client_;
  std::string token_;                       // this run's, in claims and run-unique step names
  std::optional<bool> conditional_create_;  // probed on the first claim
  std::set<std::string> claimed_;           // keys of the steps this run claimed
};

}  // namespace ccbench::checkpoint::s3
