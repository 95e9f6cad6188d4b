#include "core/result_stream.hpp"

#include <cerrno>
#include <system_error>

#include "core/utf8.hpp"

namespace ccbench {

ResultStream::ResultStream(const std::filesystem::path& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) throw std::system_error(errno, std::generic_category(), "cannot write " + path.string());
}

ResultStream::~ResultStream() {
  if (file_ != nullptr) std::fclose(file_);
}

void ResultStream::append(const ResultRow& row) {
  if (file_ == nullptr) return;
  nlohmann::json j = to_json(row);
  escape_invalid_utf8(j);  // the header lists what was escaped; a row only carries imported text
  const std::string line = j.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), file_);
  // Flushed to the kernel per line: a crash of this process (or mpirun killing it) keeps the line.
  std::fflush(file_);
}

}  // namespace ccbench
