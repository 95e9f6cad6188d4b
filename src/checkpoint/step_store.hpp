// The steps of a target over any engine (Storage): listing and reading the manifests, the commit,
// and the removals (--keep, and a run's own steps at its end). The rules are step_dirs.hpp's: a step
// is ccbench's only when its manifest parses and names the step, and a removal takes only the files
// that manifest lists, through the engine (which may refuse: S3 removes only steps this run claimed).
// No engine branch here: what differs is a Storage call (docs/checkpoint.md, "Storage engines").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/step_dirs.hpp"
#include "checkpoint/storage.hpp"

namespace ccbench::checkpoint {

// The entries under `target` that name committed steps (Storage::committed_step_of) and have a
// manifest: its fields when it is ccbench's and sound, else `problem`. Steps whose manifest is not
// ccbench's are not listed. Oldest first. A failed listing throws StorageError. `wanted`, when
// given, passes over the steps it says no to before their manifests are read (S3: requests).
using StepFilter = std::function<bool(const std::string& step_dir)>;
std::vector<StepEntry> scan_steps(Storage& storage, const std::string& target, const StepFilter& wanted = {});
// The newest entry scan_steps would list (--phases read's restart step), reading manifests newest
// first only until one is ccbench's (an object store's prefix may hold many steps). nullopt: none.
std::optional<StepEntry> newest_step(Storage& storage, const std::string& target);
// The sound ones of scan_steps.
std::vector<CommittedStep> committed_steps(Storage& storage, const std::string& target, const StepFilter& wanted = {});

// The commit of a written step: its manifest (synced), the step's sync, the rename of `partial`
// into `committed` where the engine commits by rename (they are equal where it does not), and the
// target's sync. Throws StorageError.
void commit_step(Storage& storage, const std::string& target, const std::string& partial, const std::string& committed,
                 const std::string& manifest);

// What a removal did: the names of the steps that went, and a note for each one kept.
struct Removal {
  std::vector<std::string> removed;  // "step-000001"
  std::vector<std::string> kept;     // "kept T/step-000002: it holds files its manifest does not list"
};
Removal remove_steps(Storage& storage, const std::vector<CommittedStep>& steps);

// --keep K after a commit: the steps to remove, all but the newest K of those the engine lets this
// run remove (POSIX: every ccbench step; S3: this run's claimed ones).
std::vector<CommittedStep> steps_over_keep(Storage& storage, const std::string& target, int keep);
// A run's own steps at its end: the committed steps at `written` (paths) whose manifest names
// `run_id`, and that the engine lets this run remove; `unreadable` gets "kept DIR: <why>" for each
// of them whose manifest could not be read (it is kept, and said so).
std::vector<CommittedStep> own_steps(Storage& storage, const std::string& target, const std::string& run_id,
                                     const std::vector<std::string>& written,
                                     std::vector<std::string>* unreadable = nullptr);

}  // namespace ccbench::checkpoint
