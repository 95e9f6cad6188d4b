// The reference for `ccbench replay`'s overhead: the same sequence of calls on the world, with
// nothing around them. A step is a barrier, then every call back to back, timed as a whole; the
// step's time is the maximum over ranks, the result the median over steps.
//   mpirun -np N bare_mpi_sequence SEQUENCE STEPS
// SEQUENCE: one call a line, "OP COUNT" (OP: allreduce | allgather | broadcast | alltoall; float;
// COUNT as in the trace: allreduce/broadcast the buffer, allgather each rank's part, alltoall the
// whole input).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

enum class Kind { allreduce, allgather, broadcast, alltoall };

struct Call {
  Kind kind;
  int count;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3) {
    if (rank == 0) std::fprintf(stderr, "usage: bare_mpi_sequence SEQUENCE STEPS\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<Call> calls;
  std::ifstream in(argv[1]);
  std::string op;
  int count = 0;
  std::size_t largest = 1;
  while (in >> op >> count) {
    const Kind kind = op == "allreduce"   ? Kind::allreduce
                      : op == "allgather" ? Kind::allgather
                      : op == "broadcast" ? Kind::broadcast
                                          : Kind::alltoall;
    calls.push_back({kind, count});
    largest = std::max(largest, static_cast<std::size_t>(count) * static_cast<std::size_t>(size));
  }
  const int steps = std::atoi(argv[2]);
  std::vector<float> send(largest, 1.0f), recv(largest, 0.0f);
  auto step = [&] {
    for (const Call& c : calls) {
      switch (c.kind) {
        case Kind::allreduce:
          MPI_Allreduce(send.data(), recv.data(), c.count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
          break;
        case Kind::allgather:
          MPI_Allgather(send.data(), c.count, MPI_FLOAT, recv.data(), c.count, MPI_FLOAT, MPI_COMM_WORLD);
          break;
        case Kind::broadcast:
          MPI_Bcast(recv.data(), c.count, MPI_FLOAT, 0, MPI_COMM_WORLD);
          break;
        case Kind::alltoall:
          MPI_Alltoall(send.data(), c.count / size, MPI_FLOAT, recv.data(), c.count / size, MPI_FLOAT, MPI_COMM_WORLD);
          break;
      }
    }
  };
  step();  // as the replay's unrecorded first step
  std::vector<double> t(static_cast<std::size_t>(steps));
  for (double& sample : t) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    step();
    sample = (MPI_Wtime() - start) * 1e6;
  }
  if (rank == 0) {
    MPI_Reduce(MPI_IN_PLACE, t.data(), steps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    std::sort(t.begin(), t.end());
    const double median = steps % 2 ? t[steps / 2] : 0.5 * (t[steps / 2 - 1] + t[steps / 2]);
    std::printf("%.6f\n", median);
  } else {
    MPI_Reduce(t.data(), nullptr, steps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
