#include "core/save_or_keep.hpp"

#include <unistd.h>

#include <exception>

#include "core/result.hpp"

namespace ccbench {

SaveOutcome save_or_keep(const std::filesystem::path& path, const std::string& text, bool durable) {
  namespace fs = std::filesystem;
  SaveOutcome out;
  try {
    write_file_atomically(path, text, durable);
    out.written = path;
    return out;
  } catch (const std::exception& e) {
    out.why = e.what();
  }
  std::error_code ec;
  if (path.has_parent_path() && !fs::exists(path.parent_path(), ec)) {
    try {
      fs::create_directories(path.parent_path());
      write_file_atomically(path, text, durable);
      out.written = path;
      out.folder_recreated = true;
      return out;
    } catch (const std::exception& e) {
      out.why = e.what();
    }
  }
  const std::string name = "ccbench-unsaved-" + std::to_string(::getpid()) + "-" + path.filename().string();
  for (const fs::path& dir : {fs::current_path(ec), fs::temp_directory_path(ec)}) {
    if (dir.empty()) continue;
    try {
      write_file_atomically(dir / name, text, durable);
      out.written = dir / name;
      return out;
    } catch (const std::exception&) {
    }
  }
  return out;
}

}  // namespace ccbench
