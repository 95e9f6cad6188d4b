#include "checkpoint/step_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"

namespace ccbench::checkpoint {

namespace fs = std::filesystem;

namespace {

struct Named {
  int step = 0;
  std::string name;
};

// The entries that name committed steps, oldest first (by number; a listing's order among equals).
std::vector<Named> step_names(Storage& storage, const std::string& target) {
  std::vector<Named> out;
  for (auto& name : storage.entries(target))
    if (const int step = storage.committed_step_of(name); step >= 0) out.push_back({step, std::move(name)});
  std::stable_sort(out.begin(), out.end(), [](const Named& a, const Named& b) { return a.step < b.step; });
  return out;
}

// The step's entry, or nullopt when it has no manifest or one that is not ccbench's.
std::optional<StepEntry> read_step(Storage& storage, const std::string& target, const Named& named) {
  const std::string dir = (fs::path(target) / named.name).string();
  const std::string manifest_file = (fs::path(dir) / kManifestName).string();
  StepEntry entry{named.step, dir, std::nullopt, ""};
  try {
    const auto text = storage.read_manifest(dir);
    if (!text) return std::nullopt;  // no manifest: never a checkpoint
    entry.manifest = parse_manifest(*text, manifest_file);
    if (!entry.manifest) return std::nullopt;  // not ccbench's: never read, never removed
    if (entry.manifest->step != entry.step) {
      entry.problem =
          fmt::format("{}: field 'step': {}, but the folder is {}", manifest_file, entry.manifest->step, named.name);
      entry.manifest.reset();
    }
  } catch (const ParseError& err) {
    entry.problem = err.what();
  } catch (const StorageError& err) {
    entry.problem = fmt::format("{}: {}", manifest_file, err.what());
  }
  return entry;
}

}  // namespace

std::vector<StepEntry> scan_steps(Storage& storage, const std::string& target, const StepFilter& wanted) {
  std::vector<StepEntry> found;
  for (const auto& named : step_names(storage, target)) {
    if (wanted && !wanted((fs::path(target) / named.name).string())) continue;
    if (auto entry = read_step(storage, target, named)) found.push_back(std::move(*entry));
  }
  return found;
}

std::optional<StepEntry> newest_step(Storage& storage, const std::string& target) {
  const auto names = step_names(storage, target);
  for (auto it = names.rbegin(); it != names.rend(); ++it)
    if (auto entry = read_step(storage, target, *it)) return entry;
  return std::nullopt;
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
