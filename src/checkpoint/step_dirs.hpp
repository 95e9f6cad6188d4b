// The step directories of a target: a trial writes into `.step-NNNNNN.partial-<run id>` (hidden,
// named partial, no manifest), and the commit renames it to `step-NNNNNN` with the manifest in it,
// so a killed rank, a hang or a failed write never leaves a directory that looks committed.
// A step is ccbench's only when its manifest says so (tool, version, run, step, files); removal
// (--keep, and the run's own steps at its end) takes such steps and, inside them, only the files
// the manifest lists: a user's folder in the target is never touched (docs/checkpoint.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ccbench::checkpoint {

inline constexpr const char* kManifestName = "ccbench-manifest.json";
inline constexpr const char* kManifestTool = "ccbench checkpoint";
inline constexpr int kManifestVersion = 1;
// Step names have six digits: a name with more (a user's `step-999999999`) is not a step, and a
// run that would need a seventh digit is refused (`steps_left`), so no name is picked that the
// numbering later ignores.
inline constexpr int kMaxStep = 999999;
inline constexpr int kMaxTrialIndex = 99999;  // --trials is at most 100000

std::string step_name(int step);                             // "step-000007"
std::string partial_name(int step, const std::string& run);  // ".step-000007.partial-<run>"
std::string shard_name(int writer);                          // "rank-00003.shard"
inline constexpr const char* kSharedFileName = "checkpoint.bin";

// N of "step-NNNNNN" or ".step-NNNNNN.partial-..." (exactly six digits), else -1.
int step_of(const std::string& name);

// The highest N of the committed step-N directories (and partial ones) under `target`, 0 if none.
int last_step(const std::string& target);
// The same over a listing of the target's entries (an engine's Storage::entries).
int last_step(const std::vector<std::string>& names);

// What a ccbench manifest says about its step (every field checked: type and range).
struct StepManifest {
  int step = 0;
  int trial = 0;
  std::uint32_t seed = 0;
  std::string run;
  std::uint64_t shard_bytes = 0;
  std::size_t shards = 0;          // writers
  std::vector<std::string> files;  // the step's files besides the manifest: plain names
};

// The manifest in `text` (read from `file`): nullopt when it is not ccbench's (not a JSON object, or
// its `tool` is not kManifestTool); throws ParseError "<file>: field '<name>': <why>" when it says
// it is ccbench's but a field is missing, of the wrong type or out of range, and "<file>: <why>"
// when it is not JSON at all.
std::optional<StepManifest> parse_manifest(const std::string& text, const std::string& file);

struct CommittedStep {
  int step = 0;
  std::string path;  // TARGET/step-NNNNNN
  StepManifest manifest;
};

// A step-NNNNNN directory with a manifest entry: its manifest when it is ccbench's and sound, else
// `problem` ("<file>: <why>": unreadable, a FIFO, not JSON, a bad field, a step number that is not
// the folder's). Folders whose manifest is not ccbench's are not listed at all. Oldest first.
struct StepEntry {
  int step = 0;
  std::string path;
  std::optional<StepManifest> manifest;
  std::string problem;
};
// POSIX targets (step_store.hpp has the same over any engine).
std::vector<StepEntry> scan_steps(const std::string& target);

// The committed steps ccbench wrote under `target` (sound manifests only), oldest first.
std::vector<CommittedStep> committed_steps(const std::string& target);

// The POSIX engine's Storage::read_manifest: nullopt unless `step_dir` is a real folder (not a
// symlink) with a manifest entry; ParseError when that entry is too large or not a regular file.
std::optional<std::string> read_posix_manifest(const std::string& step_dir);

// The steps --keep K removes: all but the newest `keep` of committed_steps (keep 0: none).
std::vector<CommittedStep> steps_to_remove(const std::vector<CommittedStep>& committed, int keep);

// The POSIX engine's Storage::remove_step. Removes a committed step: its manifest first (so what is left no longer
// looks committed), then the files it lists (regular files and symlinks only), then the folder if nothing else is in
// it.
// "" when the folder is gone, else what was left and why ("kept ...: it holds files its manifest
// does not list").
std::string remove_step(const CommittedStep& step);

// How many more steps can be numbered after `last` (0 when step-999999 exists).
inline int steps_left(int last) { return kMaxStep - last; }

}  // namespace ccbench::checkpoint
