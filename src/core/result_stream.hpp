// The JSON-lines stream written beside a result file while a run goes (out.json -> out.jsonl):
// one finished result a line, flushed at once, so a killed job keeps every finished size.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

#include "core/result.hpp"

namespace ccbench {

class ResultStream {
 public:
  ResultStream() = default;
  // Truncates or creates the file; throws std::system_error naming the path when it cannot.
  explicit ResultStream(const std::filesystem::path& path);
  ResultStream(const ResultStream&) = delete;
  ResultStream& operator=(const ResultStream&) = delete;
  ~ResultStream();

  bool is_open() const { return file_ != nullptr; }
  const std::filesystem::path& path() const { return path_; }
  void append(const ResultRow& row);

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

}  // namespace ccbench
