// --export-to s3://BUCKET/PREFIX for a POSIX target (docs/checkpoint.md, "Export to S3"): FSx for
// Lustre exports a file to its linked bucket on its own time (a data repository association's
// auto-export), so a checkpoint on FSx is durable in S3 only later. After the POSIX commit this
// polls HeadObject for every shard until each exists with the right size (and, where `lfs` exists,
// `lfs hsm_state` says archived and not dirty), or the deadline passes: then the result says which
// shards are not there, never a hang.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/s3/client.hpp"
#include "checkpoint/storage.hpp"

namespace ccbench::checkpoint::s3 {

struct ExportShard {
  std::string local_path;  // the committed shard on the POSIX target
  std::string key;         // where the export puts it: PREFIX/<path under the target>
  std::uint64_t bytes = 0;
};

struct ExportResult {
  bool finished = false;             // every shard in S3 (and archived, where lfs says) before the deadline
  std::vector<double> lag_s;         // per shard found: when it was seen complete - the commit's end
  double last_s = 0;                 // the last shard seen, seconds after the commit's end
  std::vector<std::string> missing;  // keys not (completely) there at the deadline
  int polls = 0;
};

// Whether the local file is archived and clean (`lfs hsm_state`), or nullopt where there is no lfs
// or the file is not on Lustre (then only the object is checked).
using HsmCheck = std::function<std::optional<bool>(const std::string& local_path)>;
HsmCheck lfs_hsm_check();

class ExportWatch {
 public:
  ExportWatch(std::unique_ptr<HttpClient> http, Endpoint endpoint, Location where, RetryPolicy retry = {});
  // Polls every `poll_s` until every shard is complete or `deadline_s` after `committed` passed;
  // no HeadObject outlasts that deadline (a stalled server ends the wait at it, not after its tries).
  ExportResult wait(const std::vector<ExportShard>& shards, std::chrono::steady_clock::time_point committed,
                    double deadline_s, double poll_s, const HsmCheck& hsm);
  const Location& where() const { return where_; }
  HttpClient* http() { return http_.get(); }

 private:
  std::unique_ptr<HttpClient> http_;
  Location where_;
  Client client_;
};

// The watcher for --export-to (credentials and endpoint as for an s3:// target). Throws UsageError
// naming --export-to.
std::unique_ptr<ExportWatch> make_export_watch(const std::string& url, const RemoteOptions& remote);

}  // namespace ccbench::checkpoint::s3
