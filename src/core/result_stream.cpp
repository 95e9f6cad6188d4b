#include "core/result_stream.hpp"

#include <cerrno>
#include <system_error>

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
  const std::string line = to_json(row).dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), file_);
  // Flushed to the kernel per line: a crash of this process (or mpirun killing it) keeps the line.
  std::fflush(file_);
}

}  // namespace ccbench
