// The engine's control channel between ranks (MPI), kept apart from the backend's data path:
// barriers, cross-rank aggregation of samples and rank 0's decisions, all outside timed regions.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ccbench {

class Coordinator {
 public:
  explicit Coordinator(MPI_Comm comm);

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  bool is_root() const { return rank_ == 0; }

  void barrier() const;
  // Element-wise max (or mean) over ranks of `values`, result on rank 0 only.
  void max_to_root(std::vector<double>& values) const;
  void mean_to_root(std::vector<double>& values) const;
  double max_all(double value) const;
  std::uint64_t sum_all(std::uint64_t value) const;
  // Rank 0's value on every rank.
  int broadcast(int value) const;
  std::string broadcast(const std::string& value) const;
  // Every rank's string, on rank 0 (empty elsewhere).
  std::vector<std::string> gather_to_root(const std::string& value) const;

 private:
  void check(int rc, const char* what) const;
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
};

}  // namespace ccbench
