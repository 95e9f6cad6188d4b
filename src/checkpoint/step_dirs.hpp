// The step directories of a target: a trial writes into `.step-NNNNNN.partial-<run id>` (hidden,
// named partial, no manifest), and the commit renames it to `step-NNNNNN` with the manifest in it,
// so a killed rank, a hang or a failed write never leaves a directory that looks committed.
// --keep K removes the oldest committed steps this tool wrote (those with a ccbench manifest).
#pragma once

#include <string>
#include <vector>

namespace ccbench::checkpoint {

inline constexpr const char* kManifestName = "ccbench-manifest.json";

std::string step_name(int step);                             // "step-000007"
std::string partial_name(int step, const std::string& run);  // ".step-000007.partial-<run>"
std::string shard_name(int writer);                          // "rank-00003.shard"
inline constexpr const char* kSharedFileName = "checkpoint.bin";

// The highest N of the committed step-N directories (and partial ones) under `target`, 0 if none.
int last_step(const std::string& target);
// The same over a listing of the target's entries (an engine's Storage::entries).
int last_step(const std::vector<std::string>& names);

// Committed steps under `target` written by ccbench (a manifest inside), oldest first.
std::vector<std::string> committed_steps(const std::string& target);

// The steps --keep K removes: all but the newest `keep` of committed_steps (keep 0: keep all).
std::vector<std::string> steps_to_remove(const std::vector<std::string>& committed, int keep);

}  // namespace ccbench::checkpoint
