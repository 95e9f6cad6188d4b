#include "sweep/mpi_channel.hpp"

#include "backends/backend.hpp"

namespace ccbench {

MpiChannel MpiChannel::init_world(int& argc, char**& argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return MpiChannel(MPI_COMM_WORLD);
}

int MpiChannel::finalize(int code) {
  MPI_Finalize();
  return code;
}

MpiChannel::MpiChannel(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
}

MpiChannel::~MpiChannel() {
  if (owns_comm_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

MpiChannel::MpiChannel(MpiChannel&& other) noexcept
    : comm_(other.comm_),
      owns_comm_(other.owns_comm_),
      rank_(other.rank_),
      size_(other.size_),
      local_rank_(other.local_rank_),
      local_size_(other.local_size_) {
  other.owns_comm_ = false;
}

std::unique_ptr<ControlChannel> MpiChannel::split(int color) {
  MPI_Comm group = MPI_COMM_NULL;
  check(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, rank_, &group), "MPI_Comm_split");
  if (group == MPI_COMM_NULL) throw PeerFailure("MPI_Comm_split: this rank is in no group (color < 0)");
  MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN);
  auto channel = std::make_unique<MpiChannel>(group);
  channel->owns_comm_ = true;
  // The node is the world's: a group's ranks on one host are not the host's ranks.
  channel->local_rank_ = local_rank_;
  channel->local_size_ = local_size_;
  return channel;
}

void MpiChannel::check(int rc, const char* what) const {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw PeerFailure(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

namespace {

// MPI_Ibarrier's request; a failure of the channel (a peer gone) throws PeerFailure like the rest.
class MpiPendingBarrier final : public PendingBarrier {
 public:
  explicit MpiPendingBarrier(MPI_Request request) : request_(request) {}
  ~MpiPendingBarrier() override {
    // Never leave a request behind: a barrier nobody waited for still completes once every rank
    // has begun it (the protocol makes every rank begin it), so this wait ends.
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  bool test() override {
    if (request_ == MPI_REQUEST_NULL) return true;
    int done = 0;
    if (MPI_Test(&request_, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      request_ = MPI_REQUEST_NULL;
      throw PeerFailure("MPI_Test of a barrier failed");
    }
    return done != 0;
  }
  void wait() override {
    if (request_ == MPI_REQUEST_NULL) return;
    if (MPI_Wait(&request_, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      request_ = MPI_REQUEST_NULL;
      throw PeerFailure("MPI_Wait of a barrier failed");
    }
  }

 private:
  MPI_Request request_;
};

}  // namespace

std::unique_ptr<PendingBarrier> MpiChannel::start_barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
  return std::make_unique<MpiPendingBarrier>(request);
}

void MpiChannel::barrier() { check(MPI_Barrier(comm_), "MPI_Barrier"); }

void MpiChannel::max_to_root(std::vector<double>& values) {
  const int n = static_cast<int>(values.size());
  if (rank_ == 0) {
    check(MPI_Reduce(MPI_IN_PLACE, values.data(), n, MPI_DOUBLE, MPI_MAX, 0, comm_), "MPI_Reduce");
  } else {
    check(MPI_Reduce(values.data(), nullptr, n, MPI_DOUBLE, MPI_MAX, 0, comm_), "MPI_Reduce");
  }
}

void MpiChannel::mean_to_root(std::vector<double>& values) {
  const int n = static_cast<int>(values.size());
  if (rank_ == 0) {
    check(MPI_Reduce(MPI_IN_PLACE, values.data(), n, MPI_DOUBLE, MPI_SUM, 0, comm_), "MPI_Reduce");
    for (double& v : values) v /= size_;
  } else {
    check(MPI_Reduce(values.data(), nullptr, n, MPI_DOUBLE, MPI_SUM, 0, comm_), "MPI_Reduce");
  }
}

double MpiChannel::max_all(double value) {
  double out = value;
  check(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  return out;
}

std::uint64_t MpiChannel::sum_all(std::uint64_t value) {
  std::uint64_t out = value;
  check(MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
  return out;
}

int MpiChannel::broadcast(int value) {
  check(MPI_Bcast(&value, 1, MPI_INT, 0, comm_), "MPI_Bcast");
  return value;
}

double MpiChannel::broadcast(double value) {
  check(MPI_Bcast(&value, 1, MPI_DOUBLE, 0, comm_), "MPI_Bcast");
  return value;
}

std::string MpiChannel::broadcast(const std::string& value) {
  int len = broadcast(static_cast<int>(value.size()));
  std::string out = rank_ == 0 ? value : std::string(static_cast<std::size_t>(len), '\0');
  check(MPI_Bcast(out.data(), len, MPI_CHAR, 0, comm_), "MPI_Bcast");
  return out;
}

std::vector<std::string> MpiChannel::gather_to_root(const std::string& value) {
  int len = static_cast<int>(value.size());
  std::vector<int> lens(static_cast<std::size_t>(size_));
  check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm_), "MPI_Gather");
  std::vector<int> displs(static_cast<std::size_t>(size_), 0);
  int total = 0;
  for (int i = 0; i < size_; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += lens[static_cast<std::size_t>(i)];
  }
  std::string all(static_cast<std::size_t>(rank_ == 0 ? total : 0), '\0');
  check(MPI_Gatherv(value.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm_),
        "MPI_Gatherv");
  std::vector<std::string> out;
  if (rank_ != 0) return out;
  for (int i = 0; i < size_; ++i) {
    out.push_back(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(i)]),
                             static_cast<std::size_t>(lens[static_cast<std::size_t>(i)])));
  }
  return out;
}

}  // namespace ccbench
