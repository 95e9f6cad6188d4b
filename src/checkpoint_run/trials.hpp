// The trials of `ccbench checkpoint` (docs/checkpoint.md), each as named steps over the control
// channel and the target's engine: claim the step, write (every writer's shard after a barrier, or
// --tiered's local copy and drain), commit (the manifest, the rename into place, the parent's fsync,
// by the leaders), read back after the cache drop and verify; rank 0 appends each phase's rows as
// it ends. A trial whose storage fails on any rank ends the trials on every rank (exit 2, its
// partial step removed); the ending ladder (sweep/run_ending) ends a rank on anything else.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checkpoint/s3/export_watch.hpp"
#include "checkpoint_run/phases.hpp"
#include "checkpoint_run/rows.hpp"
#include "checkpoint_run/setup.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench::checkpoint_run {

// What the trials run over, made by the set-up (run.cpp).
struct TrialContext {
  World& w;
  const RunConfig& config;
  const CheckpointOptions& opt;
  const CheckpointHeader& header;
  checkpoint::Storage& storage;
  Watchdog& watchdog;
  std::string run_id;
  RestartStep restart;                              // --phases read: the step every trial reads
  ResultWriter* writer = nullptr;                   // rank 0
  checkpoint::s3::ExportWatch* exporter = nullptr;  // rank 0, with --export-to
  ShardIo* local = nullptr;                         // --tiered: this rank's I/O on the local tier
  std::string tier_dir;                             // --tiered: this run's folder there
};

class Trials {
 public:
  explicit Trials(TrialContext context);

  // One trial: its step claimed, then the write and commit (unless --phases read), then the read
  // (unless --phases write). False when it failed on any rank: the trials end (exit() says how).
  bool run(int trial);

  // The exit code the trials agree on (collective) once they are over: 2 after a failed trial, 1
  // when a shard read back wrong, else 0.
  int agree_exit();
  // The run's own files at its end, on each leader: without --keep the steps this run committed go
  // (a run whose shards read back wrong keeps them, the evidence); `exit` is agree_exit()'s.
  void clean_up(int exit);
  // The error the result file is finished with ("" : none).
  const std::string& final_error() const { return final_error_; }

 private:
  struct Step {
    std::string committed, label;
    std::uint32_t seed = 0;
    int data_trial = 0;
  };
  Step claim_step(int trial);
  bool write_and_commit(int trial, Step& step, const std::optional<checkpoint::ShardData>& data, bool& direct_all);
  void add_export(PhaseRows& rows, const std::vector<checkpoint::RankPhases>& ranks, const std::string& committed,
                  Clock::time_point t0, Clock::time_point committed_at);
  bool read_back(int trial, const Step& step, std::optional<checkpoint::ShardData>& data, bool direct_all);
  void fail(std::string message);

  TrialContext c_;
  ShardIo target_;
  std::vector<std::string> written_steps_;  // the steps this run committed (removed at its end without --keep)
  std::string final_error_;
  std::size_t wrong_shards_ = 0;
  bool failed_ = false;
};

// Removes committed steps through the engine (only the files their manifests list; the engine may
// refuse a step, S3 one this run did not claim) and says what went or was kept on this leader's
// stdout. `find` lists them (a listing that fails is said too): never an error of the run.
void remove_steps(const std::function<std::vector<checkpoint::CommittedStep>(std::vector<std::string>&)>& find,
                  checkpoint::Storage& storage, const char* why);

}  // namespace ccbench::checkpoint_run
