// Several ranks as threads of this process, each in its own measuring frame over ThreadChannel. A
// rank's ending ends its thread instead of the process (the frame's Exit throws RankEnded) and
// marks the world failed, so the other ranks' collectives throw PeerFailure as MPI's do when a
// peer dies. Every rank's exit code comes back.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../sweep/thread_channel.hpp"
#include "measure/frame.hpp"

namespace ccbench::testing {

inline std::vector<int> run_ranks(int ranks, const std::function<int(measure::Frame&)>& body,
                                  const std::string& command = "ccbench test") {
  auto world = std::make_shared<ThreadWorld>(ranks);
  std::vector<int> codes(static_cast<std::size_t>(ranks), -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      ThreadChannel channel(world, r);
      measure::Frame frame(
          channel, command, 0, nullptr,
          [world](int code) {
            world->fail();
            throw RankEnded{code};
          },
          std::chrono::milliseconds(0));
      try {
        codes[static_cast<std::size_t>(r)] = body(frame);
      } catch (const RankEnded& ended) {
        codes[static_cast<std::size_t>(r)] = ended.exit_code;
      }
    });
  }
  for (auto& t : threads) t.join();
  return codes;
}

class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    path_ = std::filesystem::temp_directory_path() /
            (name + "_" + std::to_string(::getpid()) + "_" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ccbench::testing
