// Saving a file of measured results at the end of a run, when the place asked for may be gone:
// a folder removed during the run is created again; when the file still cannot be written it goes
// to ccbench-unsaved-<pid>-<name> in the working folder, else the temporary folder, so nothing
// measured is lost (docs/hardening.md "The -J result file and its stream"). Callers say which
// happened: the messages differ (a result file, congestion's summary).
#pragma once

#include <filesystem>
#include <string>

namespace ccbench {

struct SaveOutcome {
  std::filesystem::path written;  // `path`, a copy elsewhere, or empty: written nowhere
  bool folder_recreated = false;  // written at `path` after creating its folder again
  std::string why;                // why `path` could not be written, when it was not
};

SaveOutcome save_or_keep(const std::filesystem::path& path, const std::string& text, bool durable);

}  // namespace ccbench
