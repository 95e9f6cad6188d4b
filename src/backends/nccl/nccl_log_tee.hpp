// Echoes a growing log file to a stream (stdout): where the user asked for NCCL's INFO output on
// stdout, the backend sends it to a file it can read and this thread copies it back, so the user
// sees the same lines (a fraction of a second later).
#pragma once

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

namespace ccbench::nccl {

class LogTee {
 public:
  LogTee(std::string path, std::FILE* out);
  ~LogTee();  // copies what is left, then stops
  LogTee(const LogTee&) = delete;
  LogTee& operator=(const LogTee&) = delete;

 private:
  void copy_new();
  std::string path_;
  std::FILE* out_;
  long offset_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ccbench::nccl
