#include "backends/nccl/nccl_log_tee.hpp"

#include <chrono>
#include <utility>

namespace ccbench::nccl {

LogTee::LogTee(std::string path, std::FILE* out) : path_(std::move(path)), out_(out) {
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      copy_new();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
}

LogTee::~LogTee() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  copy_new();
}

void LogTee::copy_new() {
  std::FILE* in = std::fopen(path_.c_str(), "rb");
  if (in == nullptr) return;  // NCCL has not opened it yet
  if (std::fseek(in, offset_, SEEK_SET) == 0) {
    char buffer[8192];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, in)) > 0) {
      std::fwrite(buffer, 1, n, out_);
      offset_ += static_cast<long>(n);
    }
    std::fflush(out_);
  }
  std::fclose(in);
}

}  // namespace ccbench::nccl
