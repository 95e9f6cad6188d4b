#include "core/output_folders.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "core/error.hpp"

namespace ccbench {

void create_missing_folders(const std::filesystem::path& dir, std::string_view flag) {
  namespace fs = std::filesystem;
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  if (missing.empty()) return;
  const fs::path outer = fs::absolute(missing.back(), ec);
  if (outer.parent_path() == outer.root_path()) {
    throw std::runtime_error("folder " + missing.back().string() +
                             " does not exist (missing folders are created, but not directly under /)");
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (!fs::create_directory(*it, ec) && ec) {
      throw std::system_error(ec, "cannot create the folder " + it->string());
    }
    std::fprintf(stderr, "ccbench: %.*s: created the folder %s\n", static_cast<int>(flag.size()), flag.data(),
                 it->c_str());
  }
}

void prepare_output_file(const std::string& path, std::string_view flag) {
  namespace fs = std::filesystem;
  const std::string named = std::string(flag) + " " + path;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw UsageError(named + ": is a folder, expected a file path");
    if (!S_ISREG(st.st_mode)) return;  // /dev/stdout, a FIFO, a terminal: written directly
  }
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  try {
    create_missing_folders(dir, flag);
  } catch (const std::system_error& e) {
    throw UsageError(named + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw UsageError(named + ": " + e.what());
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError(named + ": " + dir.string() + " is not a folder");
  // The atomic write needs a temporary file beside the target: try one.
  std::string probe_name = ".";
  probe_name += target.filename().string();
  probe_name += ".XXXXXX";
  std::string probe = (dir / probe_name).string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    throw UsageError(named + ": cannot create a file in " + dir.string() + " (" + std::strerror(errno) + ")");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void refuse_output_among_inputs(const std::string& path, std::string_view flag,
                                const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty() || !fs::is_regular_file(path, ec)) return;  // new, or /dev/stdout: replaces no input
  const std::string named = std::string(flag) + " " + path;
  const fs::path ext = fs::path(path).extension();
  const bool result_file = ext == ".json" || ext == ".jsonl";
  for (const std::string& input : inputs) {
    if (input.empty() || !fs::exists(input, ec)) continue;
    if (fs::is_directory(input, ec)) {
      const fs::path folder = fs::canonical(fs::path(path), ec).parent_path();
      if (!ec && result_file && fs::equivalent(folder, input, ec))
        throw UsageError(named + ": is a result file in the input folder " + input +
                         ", which this command reads; write it elsewhere");
      continue;
    }
    if (fs::equivalent(path, input, ec))
      throw UsageError(named + ": is the input " + input + " (the same file); writing it would replace what is read");
  }
}

}  // namespace ccbench
