// The control channel over MPI (MPI_COMM_WORLD for a run): the only MPI in src/sweep. Also owns the
// MPI life cycle of a measuring command (init with errors returned, finalize).
#pragma once

#include <mpi.h>

#include "sweep/channel.hpp"

namespace ccbench {

class MpiChannel final : public ControlChannel {
 public:
  // MPI_Init (errors returned, not fatal) and a channel over MPI_COMM_WORLD.
  static MpiChannel init_world(int& argc, char**& argv);
  // MPI_Finalize, then `code`: what main returns.
  static int finalize(int code);

  explicit MpiChannel(MPI_Comm comm);
  ~MpiChannel() override;
  MpiChannel(MpiChannel&& other) noexcept;
  MpiChannel(const MpiChannel&) = delete;
  MpiChannel& operator=(const MpiChannel&) = delete;
  MpiChannel& operator=(MpiChannel&&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }

  void barrier() override;
  int broadcast(int value) override;
  std::string broadcast(const std::string& value) override;
  double broadcast(double value) override;
  std::vector<std::string> gather_to_root(const std::string& value) override;
  double max_all(double value) override;
  std::uint64_t sum_all(std::uint64_t value) override;
  void max_to_root(std::vector<double>& values) override;
  void mean_to_root(std::vector<double>& values) override;
  std::unique_ptr<ControlChannel> split(int color) override;
  std::unique_ptr<PendingBarrier> start_barrier() override;

 private:
  void check(int rc, const char* what) const;
  MPI_Comm comm_;
  bool owns_comm_ = false;  // a communicator made by split() is freed with its channel
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
};

}  // namespace ccbench
