// Collectives through MPI on host memory: the backend that runs everywhere, and the reference.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "backends/point_to_point.hpp"

namespace ccbench {

class MpiBackend final : public Backend, public PointToPoint {
 public:
  // owns_comm: `comm` was made for this backend (a group) and is freed with it.
  explicit MpiBackend(MPI_Comm comm, bool owns_comm = false);
  ~MpiBackend() override;

  std::string_view name() const override { return "mpi"; }
  std::string_view clock() const override { return "MPI_Wtime"; }
  std::optional<std::string> unsupported(const CaseSpec& c) const override;
  std::uint64_t memory_budget_bytes(int ranks_on_node) const override;
  void allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void fill(const CaseSpec& c, const pattern::Params& p) override;
  void launch(const CaseSpec& c) override;
  void synchronize() override {}
  double time_batch_us(const CaseSpec& c, int batch) override;
  std::uint64_t verify(const CaseSpec& c, const pattern::Params& p) override;
  void corrupt_output_for_test(const CaseSpec& c) override;
  nlohmann::json metadata() const override;
  double time_point_to_point_us(std::span<const PointToPointCall> batch) override;
  void fill_point_to_point(std::span<const PointToPointCall> batch, int self, const pattern::Params& p) override {
    fill_host(batch, self, p, send_.data, recv_.data);
  }
  std::vector<std::uint64_t> verify_point_to_point(std::span<const PointToPointCall> batch, int self,
                                                   const pattern::Params& p) override {
    return verify_host(batch, self, p, recv_.data);
  }

 private:
  struct Buffer {
    void* data = nullptr;
    std::size_t bytes = 0;
  };
  // A matrix op's counts and displacements as MPI_Alltoallv takes them (moe_pair: and its combine's).
  struct MpiCounts {
    std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
    std::vector<int> combine_send_counts, combine_send_displs, combine_recv_counts, combine_recv_displs;
  };
  static void reserve(Buffer& buffer, std::size_t bytes);
  void check(int rc, const CaseSpec& c) const;
  const MpiCounts& mpi_counts(const CaseSpec& c);
  // sendrecv --pattern / --block-bytes: the blocks as MPI_Isend/MPI_Irecv, then one MPI_Waitall.
  int launch_blocks(const CaseSpec& c);
  const PatternPeers& peers_of(const CaseSpec& c);
  struct PeersKey {
    SendRecvPattern pattern = SendRecvPattern::ring;
    int peer_group = -1, rank = -1, nranks = -1;
    bool operator==(const PeersKey&) const = default;
  };

  MPI_Comm comm_;
  bool owns_comm_ = false;
  Buffer send_;
  Buffer recv_;
  MpiCounts counts_;
  std::shared_ptr<const MatrixCase> counts_for_;  // the case counts_ was converted from (held: no reused address)
  PatternPeers peers_;
  PeersKey peers_for_;
  std::vector<MPI_Request> requests_;  // reused by every launch_blocks (no allocation per op once sized)
};

// The MPI backend over MPI_COMM_WORLD (group_color -1) or over the ranks of the world that pass the
// same group_color (MPI_Comm_split; collective over the world). For the registry, which calls no
// MPI itself.
std::unique_ptr<Backend> make_world_mpi_backend(int group_color = -1);

// The MPI library's own version string (MPI_Get_library_version), first line.
std::string mpi_library_version();

}  // namespace ccbench
