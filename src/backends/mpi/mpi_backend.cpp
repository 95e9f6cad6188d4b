#include "backends/mpi/mpi_backend.hpp"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "backends/host_types.hpp"
#include "core/alltoallv_check.hpp"
#include "core/error.hpp"
#include "core/pattern_check.hpp"
#include "system/host_info.hpp"

namespace ccbench {
namespace {

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::int8:
      return MPI_INT8_T;
    case DType::uint8:
      return MPI_UINT8_T;
    case DType::int32:
      return MPI_INT32_T;
    case DType::int64:
      return MPI_INT64_T;
    case DType::float32:
      return MPI_FLOAT;
    case DType::float64:
      return MPI_DOUBLE;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op mpi_op(RedOp redop) {
  switch (redop) {
    case RedOp::sum:
      return MPI_SUM;
    case RedOp::prod:
      return MPI_PROD;
    case RedOp::min:
      return MPI_MIN;
    case RedOp::max:
      return MPI_MAX;
    default:
      return MPI_OP_NULL;
  }
}

// MPI_Alltoallv's counts and displacements are ints.
constexpr std::uint64_t kMpiMaxCount = static_cast<std::uint64_t>(std::numeric_limits<int>::max());

// A value the pattern never produces (it stays within [-4, 12]), so stale output is counted wrong.
constexpr std::int64_t kPoison = 101;

// Where a case's input lives and where its result lands, in elements of the backend's buffers.
struct Placement {
  bool input_in_recv;
  std::uint64_t input_offset;  // within the buffer holding the input
  std::uint64_t input_elements;
  std::uint64_t output_offset;  // within recv
  std::uint64_t output_elements;
};

// In-place follows NCCL's conventions, so both backends check the same buffers: gather's input at
// recv + rank*count, scatter's result at recv + rank*count (the root's input is all of recv),
// reduce's input in recv. Rooted ops read only the root's input (broadcast, scatter) or leave a
// result on the root only (gather, reduce): the other ranks have nothing to check.
Placement placement(const CaseSpec& c) {
  const auto& l = c.layout;
  const auto rank_offset = static_cast<std::uint64_t>(c.rank) * l.count;
  const bool root = c.rank == c.root;
  Placement p{c.in_place, 0, l.send_elements, 0, l.recv_elements};
  if (c.in_place && (c.op == Op::allgather || c.op == Op::gather)) p.input_offset = rank_offset;
  if (c.in_place && c.op == Op::scatter) p.output_offset = rank_offset;
  if (c.op == Op::broadcast) p.input_in_recv = true;  // MPI_Bcast works on one buffer
  if ((c.op == Op::broadcast || c.op == Op::scatter) && !root) p.input_elements = 0;
  if ((c.op == Op::gather || c.op == Op::reduce) && !root) p.output_elements = 0;
  return p;
}

}  // namespace

std::string mpi_library_version() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string text(version, static_cast<std::size_t>(len));
  const auto newline = text.find_first_of("\r\n");
  if (newline != std::string::npos) text.resize(newline);
  while (!text.empty() && (text.back() == ',' || text.back() == ' ' || text.back() == '\0')) text.pop_back();
  return text;
}

MpiBackend::MpiBackend(MPI_Comm comm, bool owns_comm) : comm_(comm), owns_comm_(owns_comm) {}

MpiBackend::~MpiBackend() {
  if (owns_comm_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  std::free(send_.data);
  std::free(recv_.data);
}

std::optional<std::string> MpiBackend::unsupported(const CaseSpec& c) const {
  if (!info(c.op).is_collective()) return "the mpi backend runs collectives only";
  if (mpi_type(c.dtype) == MPI_DATATYPE_NULL) {
    return "MPI has no " + std::string(ccbench::name(c.dtype)) + " type (use --backend nccl)";
  }
  if (info(c.op).is_reduction && mpi_op(c.redop) == MPI_OP_NULL) {
    return "MPI has no " + std::string(ccbench::name(c.redop)) + " reduction";
  }
  if (c.op == Op::sendrecv && c.in_place) return "sendrecv has no in-place form (send and receive buffers must differ)";
  if (info(c.op).buffers == OpBuffers::matrix) return matrix_unsupported(c, kMpiMaxCount);
  return std::nullopt;
}

std::uint64_t MpiBackend::memory_budget_bytes(int ranks_on_node) const {
  return system::memory_available_bytes() / static_cast<std::uint64_t>(ranks_on_node < 1 ? 1 : ranks_on_node);
}

void MpiBackend::reserve(Buffer& buffer, std::size_t bytes) {
  if (bytes <= buffer.bytes) return;
  std::free(buffer.data);
  buffer.data = nullptr;
  buffer.bytes = 0;
  void* data = nullptr;
  const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
  if (::posix_memalign(&data, 4096, rounded) != 0) throw std::bad_alloc();
  // First touch here, not inside the first timed op.
  std::memset(data, 0, rounded);
  buffer.data = data;
  buffer.bytes = rounded;
}

void MpiBackend::allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  reserve(send_, send_bytes);
  reserve(recv_, recv_bytes);
}

void MpiBackend::fill(const CaseSpec& c, const pattern::Params& p) {
  const Placement place = placement(c);
  if (c.matrix) mpi_counts(c);
  with_host_type(c.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* recv = static_cast<T*>(recv_.data);
    const std::uint64_t recv_span = std::max(c.layout.recv_elements, c.in_place ? c.layout.send_elements : 0);
    for (std::uint64_t i = 0; i < recv_span; ++i) recv[i] = static_cast<T>(kPoison);
    if (place.input_elements == 0) return 0;
    T* input = place.input_in_recv ? recv + place.input_offset : static_cast<T*>(send_.data);
    pattern::fill_periodic(input, place.input_elements,
                           [&](std::uint64_t i) { return pattern::input_value(c.op, p, c.rank, i); });
    return 0;
  });
}

void MpiBackend::check(int rc, const CaseSpec& c) const {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw PeerFailure(std::string(ccbench::name(c.op)) + " of " + std::to_string(c.layout.bytes) +
                    " bytes failed: " + std::string(text, static_cast<std::size_t>(len)));
}

void MpiBackend::launch(const CaseSpec& c) {
  const MPI_Datatype type = mpi_type(c.dtype);
  const auto count = static_cast<int>(c.layout.count);
  void* send = c.in_place ? MPI_IN_PLACE : send_.data;
  void* recv = recv_.data;
  int rc = MPI_SUCCESS;
  switch (c.op) {
    case Op::allreduce:
      rc = MPI_Allreduce(send, recv, count, type, mpi_op(c.redop), comm_);
      break;
    case Op::allgather:
      rc = c.in_place ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, type, comm_)
                      : MPI_Allgather(send, count, type, recv, count, type, comm_);
      break;
    case Op::alltoall:
      rc = c.in_place ? MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, type, comm_)
                      : MPI_Alltoall(send, count, type, recv, count, type, comm_);
      break;
    case Op::reduce_scatter:
      rc = MPI_Reduce_scatter_block(send, recv, count, type, mpi_op(c.redop), comm_);
      break;
    case Op::broadcast:
      rc = MPI_Bcast(recv, count, type, c.root, comm_);
      break;
    case Op::sendrecv:
      if (c.posts_blocks()) {
        rc = launch_blocks(c);
        break;
      }
      rc = MPI_Sendrecv(send, count, type, (c.rank + 1) % c.nranks, 0, recv, count, type,
                        (c.rank + c.nranks - 1) % c.nranks, 0, comm_, MPI_STATUS_IGNORE);
      break;
    case Op::gather: {
      // In place only the root passes MPI_IN_PLACE; the others send their block from recv.
      const bool root = c.rank == c.root;
      void* block = c.in_place ? static_cast<char*>(recv) + placement(c).input_offset * info(c.dtype).size_bytes : send;
      rc = MPI_Gather(c.in_place && root ? MPI_IN_PLACE : block, count, type, recv, count, type, c.root, comm_);
      break;
    }
    case Op::scatter: {
      const bool root = c.rank == c.root;
      void* block = static_cast<char*>(recv) + placement(c).output_offset * info(c.dtype).size_bytes;
      rc = MPI_Scatter(c.in_place ? recv : send, count, type, c.in_place && root ? MPI_IN_PLACE : block, count, type,
                       c.root, comm_);
      break;
    }
    case Op::reduce: {
      // In place the root passes MPI_IN_PLACE, the others their input (in recv); only the root receives.
      const bool root = c.rank == c.root;
      rc = MPI_Reduce(c.in_place && !root ? recv : send, root ? recv : nullptr, count, type, mpi_op(c.redop), c.root,
                      comm_);
      break;
    }
    case Op::alltoallv:
    case Op::moe_dispatch:
    case Op::moe_combine:
    case Op::moe_pair: {
      const MpiCounts& counts = mpi_counts(c);
      rc = MPI_Alltoallv(send, counts.send_counts.data(), counts.send_displs.data(), type, recv,
                         counts.recv_counts.data(), counts.recv_displs.data(), type, comm_);
      if (rc == MPI_SUCCESS && c.op == Op::moe_pair) {  // the combine: the dispatch's output goes back
        const auto elt = static_cast<std::ptrdiff_t>(info(c.dtype).size_bytes);
        void* back = static_cast<char*>(recv) + static_cast<std::ptrdiff_t>(c.matrix->counts.recv_elements) * elt;
        rc = MPI_Alltoallv(recv, counts.combine_send_counts.data(), counts.combine_send_displs.data(), type, back,
                           counts.combine_recv_counts.data(), counts.combine_recv_displs.data(), type, comm_);
      }
      break;
    }
    default:
      throw BackendError("the mpi backend cannot run " + std::string(ccbench::name(c.op)));
  }
  check(rc, c);
}

const PatternPeers& MpiBackend::peers_of(const CaseSpec& c) {
  // Computed once per case, not inside every timed op.
  const PeersKey key{c.sendrecv_pattern, c.peer_group, c.rank, c.nranks};
  if (peers_for_ != key) {
    peers_ = pattern_peers(c.sendrecv_pattern, c.peer_group, c.rank, c.nranks);
    peers_for_ = key;
  }
  return peers_;
}

int MpiBackend::launch_blocks(const CaseSpec& c) {
  const MPI_Datatype type = mpi_type(c.dtype);
  const std::size_t element_bytes = info(c.dtype).size_bytes;
  requests_.clear();
  int rc = MPI_SUCCESS;
  for_each_block_call(peers_of(c), c.layout.count, c.block_elements, [&](const BlockCall& call) {
    if (rc != MPI_SUCCESS) return;
    MPI_Request& request = requests_.emplace_back(MPI_REQUEST_NULL);
    const auto count = static_cast<int>(call.count);
    const std::size_t offset = call.offset_elements * element_bytes;
    rc = call.send ? MPI_Isend(static_cast<char*>(send_.data) + offset, count, type, call.peer, 0, comm_, &request)
                   : MPI_Irecv(static_cast<char*>(recv_.data) + offset, count, type, call.peer, 0, comm_, &request);
  });
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
}

double MpiBackend::time_batch_us(const CaseSpec& c, int batch) {
  const double start = MPI_Wtime();
  for (int i = 0; i < batch; ++i) launch(c);
  return (MPI_Wtime() - start) * 1e6;
}

const MpiBackend::MpiCounts& MpiBackend::mpi_counts(const CaseSpec& c) {
  // Converted once per case (in its fill or first launch), not inside every timed op.
  if (counts_for_ == c.matrix) return counts_;
  const auto ints = [](const std::vector<std::uint64_t>& values) {
    return std::vector<int>(values.begin(), values.end());  // unsupported() refused counts over INT_MAX
  };
  const MatrixCase& m = *c.matrix;
  counts_ = {ints(m.counts.send_counts),  ints(m.counts.send_displs),  ints(m.counts.recv_counts),
             ints(m.counts.recv_displs),  ints(m.combine.send_counts), ints(m.combine.send_displs),
             ints(m.combine.recv_counts), ints(m.combine.recv_displs)};
  counts_for_ = c.matrix;
  return counts_;
}

std::uint64_t MpiBackend::verify(const CaseSpec& c, const pattern::Params& p) {
  const Placement place = placement(c);
  return with_host_type(c.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (c.matrix) return pattern::count_wrong_alltoallv(static_cast<const T*>(recv_.data), *c.matrix, p, c.rank);
    if (c.posts_blocks()) {
      // Each sender's message at k x count, its blocks in order: the sender's data pattern.
      const std::vector<int>& senders = peers_of(c).receive_from;
      std::uint64_t wrong = 0;
      for (std::size_t k = 0; k < senders.size(); ++k) {
        wrong +=
            pattern::count_wrong_periodic(static_cast<const T*>(recv_.data) + k * c.layout.count, c.layout.count, 0,
                                          [&](std::uint64_t i) { return pattern::data_value(p, senders[k], i); });
      }
      return wrong;
    }
    const T* out = static_cast<const T*>(recv_.data) + place.output_offset;
    // One period of expected values per block, then a compare at memory speed (was a hash per
    // element and per rank: 0.19 GB/s).
    return pattern::count_wrong_periodic(
        out, place.output_elements, pattern::output_block(c.op, c.layout.count),
        [&](std::uint64_t i) { return pattern::expected_value(c.op, p, c.rank, i, c.layout.count); });
  });
}

void MpiBackend::corrupt_output_for_test(const CaseSpec& c) {
  if (placement(c).output_elements == 0) return;
  with_host_type(c.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* out = static_cast<T*>(recv_.data) + placement(c).output_offset;
    out[0] = static_cast<T>(out[0] + 1);
    return 0;
  });
}

double MpiBackend::time_point_to_point_us(std::span<const PointToPointCall> batch) {
  std::vector<MPI_Request> requests(batch.size(), MPI_REQUEST_NULL);
  std::uint64_t send_offset = 0, recv_offset = 0;
  const double start = MPI_Wtime();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const PointToPointCall& call = batch[i];
    const MPI_Datatype type = mpi_type(call.dtype);
    const auto count = static_cast<int>(call.count);
    const std::uint64_t bytes = call.count * info(call.dtype).size_bytes;
    int rc = MPI_SUCCESS;
    if (call.send) {
      rc = MPI_Isend(static_cast<char*>(send_.data) + send_offset, count, type, call.peer, 0, comm_, &requests[i]);
      send_offset += bytes;
    } else {
      rc = MPI_Irecv(static_cast<char*>(recv_.data) + recv_offset, count, type, call.peer, 0, comm_, &requests[i]);
      recv_offset += bytes;
    }
    if (rc != MPI_SUCCESS) {
      throw PeerFailure(std::string(call.send ? "send to" : "receive from") + " rank " + std::to_string(call.peer) +
                        " failed");
    }
  }
  if (MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
    throw PeerFailure("a send or receive did not complete");
  }
  return (MPI_Wtime() - start) * 1e6;
}

nlohmann::json MpiBackend::metadata() const { return {{"mpi", mpi_library_version()}}; }

std::unique_ptr<Backend> make_world_mpi_backend(int group_color) {
  if (group_color < 0) return std::make_unique<MpiBackend>(MPI_COMM_WORLD);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm group = MPI_COMM_NULL;
  const int rc = MPI_Comm_split(MPI_COMM_WORLD, group_color, world_rank, &group);
  if (rc != MPI_SUCCESS || group == MPI_COMM_NULL) throw PeerFailure("MPI_Comm_split of the backend's group failed");
  MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN);
  return std::make_unique<MpiBackend>(group, true);
}

}  // namespace ccbench
