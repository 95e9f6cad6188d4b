#include "checkpoint/step_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"

namespace ccbench::checkpoint {

namespace fs = std::filesystem;

std::vector<StepEntry> scan_steps(Storage& storage, const std::string& target, const StepFilter& wanted) {
  std::vector<StepEntry> found;
  for (const auto& name : storage.entries(target)) {
    const int step = storage.committed_step_of(name);
    if (step < 0) continue;
    const std::string dir = (fs::path(target) / name).string();
    if (wanted && !wanted(dir)) continue;
    const std::string manifest_file = (fs::path(dir) / kManifestName).string();
    StepEntry entry{step, dir, std::nullopt, ""};
    try {
      const auto text = storage.read_manifest(dir);
      if (!text) continue;  // no manifest: never a checkpoint
      entry.manifest = parse_manifest(*text, manifest_file);
      if (!entry.manifest) continue;  // not ccbench's: never read, never removed
      if (entry.manifest->step != entry.step) {
        entry.problem =
            fmt::format("{}: field 'step': {}, but the folder is {}", manifest_file, entry.manifest->step, name);
        entry.manifest.reset();
      }
    } catch (const ParseError& err) {
      entry.problem = err.what();
    } catch (const StorageError& err) {
      entry.problem = fmt::format("{}: {}", manifest_file, err.what());
    }
    found.push_back(std::move(entry));
  }
  std::stable_sort(found.begin(), found.end(), [](const StepEntry& a, const StepEntry& b) { return a.step < b.step; });
  return found;
}

std::vector<CommittedStep> committed_steps(Storage& storage, const std::string& target, const StepFilter& wanted) {
  std::vector<CommittedStep> out;
  for (auto& e : scan_steps(storage, target, wanted))
    if (e.manifest) out.push_back({e.step, std::move(e.path), std::move(*e.manifest)});
  return out;
}

void commit_step(Storage& storage, const std::string& target, const std::string& partial, const std::string& committed,
                 const std::string& manifest) {
  auto f = storage.open((fs::path(partial) / kManifestName).string(), OpenFor::create_write, {});
  f->write_at(manifest.data(), manifest.size(), 0);
  f->sync();
  f->close();
  storage.sync_dir(partial);
  if (partial != committed) storage.rename(partial, committed);
  storage.sync_dir(target);
}

Removal remove_steps(Storage& storage, const std::vector<CommittedStep>& steps) {
  Removal out;
  for (const auto& s : steps) {
    if (std::string left = storage.remove_step(s); left.empty())
      out.removed.push_back(fs::path(s.path).filename().string());
    else
      out.kept.push_back(std::move(left));
  }
  return out;
}

std::vector<CommittedStep> steps_over_keep(Storage& storage, const std::string& target, int keep) {
  const auto removable = [&](const std::string& dir) { return storage.removable(dir); };
  return steps_to_remove(committed_steps(storage, target, removable), keep);
}

std::vector<CommittedStep> own_steps(Storage& storage, const std::string& target, const std::string& run_id,
                                     const std::vector<std::string>& written, std::vector<std::string>* unreadable) {
  const auto written_here = [&](const std::string& dir) {
    return std::find(written.begin(), written.end(), dir) != written.end() && storage.removable(dir);
  };
  std::vector<CommittedStep> own;
  for (auto& e : scan_steps(storage, target, written_here)) {
    if (!e.manifest) {
      if (unreadable != nullptr) unreadable->push_back(fmt::format("kept {}: {}", e.path, e.problem));
    } else if (e.manifest->run == run_id) {
      own.push_back({e.step, std::move(e.path), std::move(*e.manifest)});
    }
  }
  return own;
}

}  // namespace ccbench::checkpoint
