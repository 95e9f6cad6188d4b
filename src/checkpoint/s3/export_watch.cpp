#include "checkpoint/s3/export_watch.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <thread>

#include "core/error.hpp"
#include "core/run_program.hpp"

namespace ccbench::checkpoint::s3 {

HsmCheck lfs_hsm_check() {
  // Untested here (no Lustre): `lfs hsm_state FILE` prints "FILE: (0x0000000d) released exists
  // archived, archive_id:1"; dirty means changed since the archive copy. Run by argv (the path is
  // the user's and may hold any character), 5 s at most a call.
  if (!program_on_path("lfs")) return [](const std::string&) { return std::nullopt; };
  return [](const std::string& path) -> std::optional<bool> {
    const ProgramRun lfs = run_program({"lfs", "hsm_state", path}, {std::chrono::seconds(5)});
    if (!lfs.ok() || lfs.output.empty()) return std::nullopt;
    const std::string line = lfs.output.substr(0, lfs.output.find('\n'));
    return line.find("archived") != std::string::npos && line.find("dirty") == std::string::npos;
  };
}

ExportWatch::ExportWatch(std::unique_ptr<HttpClient> http, Endpoint endpoint, Location where, RetryPolicy retry)
    : http_(std::move(http)),
      where_(std::move(where)),
      client_(*http_, std::move(endpoint), where_.bucket, std::move(retry)) {}

ExportResult ExportWatch::wait(const std::vector<ExportShard>& shards, std::chrono::steady_clock::time_point committed,
                               double deadline_s, double poll_s, const HsmCheck& hsm) {
  const auto since = [&] { return std::chrono::duration<double>(Clock::now() - committed).count(); };
  ExportResult out;
  std::vector<bool> done(shards.size(), false);
  std::size_t left = shards.size();
  const auto until = committed + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(deadline_s));
  while (left > 0) {
    ++out.polls;
    for (std::size_t i = 0; i < shards.size(); ++i) {
      if (done[i]) continue;
      std::optional<ObjectHead> head;
      try {
        head = client_.head(shards[i].key, until);
      } catch (const StorageError&) {
        head.reset();  // a failed poll is a poll that did not find it; the deadline ends the wait
      }
      if (!head || head->bytes != shards[i].bytes) continue;
      if (hsm && hsm(shards[i].local_path) == std::optional<bool>(false)) continue;
      done[i] = true;
      --left;
      out.lag_s.push_back(since());
      out.last_s = out.lag_s.back();
    }
    if (left == 0 || since() >= deadline_s) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_s));
  }
  for (std::size_t i = 0; i < shards.size(); ++i)
    if (!done[i]) out.missing.push_back(shards[i].key);
  out.finished = out.missing.empty();
  return out;
}

std::unique_ptr<ExportWatch> make_export_watch(const std::string& url, const RemoteOptions& remote) {
  const Location where = parse_location(url, "--export-to");
  Connection c = connect_from_environment(url, "--export-to", remote.endpoint);
  RetryPolicy retry;
  retry.call_deadline_s = remote.request_deadline_s;
  auto watch = std::make_unique<ExportWatch>(std::move(c.http), c.endpoint, where, retry);
  // The bucket and the credentials are checked before anything is written.
  try {
    Client(*watch->http(), c.endpoint, where.bucket, retry)
        .list(where.prefix.empty() ? "" : where.prefix + "/", "/", 1);
  } catch (const StorageError& e) {
    throw UsageError(fmt::format("--export-to {}: {}", redact_userinfo(url), e.what()));
  }
  return watch;
}

}  // namespace ccbench::checkpoint::s3
