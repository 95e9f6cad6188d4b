// The reference for ccbench's overhead: the same op and size, timed the same way (barrier, k ops
// back to back, per-sample maximum over ranks, median), with nothing else around it.
//   mpirun -np 2 bare_mpi_loop OP BYTES BATCH SAMPLES      (OP: allreduce | allgather | alltoall)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5) {
    if (rank == 0) std::fprintf(stderr, "usage: bare_mpi_loop OP BYTES BATCH SAMPLES\n");
    MPI_Finalize();
    return 2;
  }
  const std::string op = argv[1];
  const auto bytes = std::strtoull(argv[2], nullptr, 10);
  const int batch = std::atoi(argv[3]);
  const int samples = std::atoi(argv[4]);
  const bool per_rank = op != "allreduce";
  const int count = static_cast<int>(bytes / sizeof(float) / (per_rank ? static_cast<unsigned>(size) : 1u));
  std::vector<float> send(bytes / sizeof(float) + 1, 1.0f), recv(bytes / sizeof(float) + 1, 0.0f);
  auto once = [&] {
    if (op == "allreduce") {
      MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else if (op == "allgather") {
      MPI_Allgather(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, MPI_COMM_WORLD);
    } else {
      MPI_Alltoall(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, MPI_COMM_WORLD);
    }
  };
  for (int i = 0; i < 5; ++i) once();
  std::vector<double> t(static_cast<std::size_t>(samples));
  for (double& sample : t) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < batch; ++i) once();
    sample = (MPI_Wtime() - start) * 1e6 / batch;
  }
  if (rank == 0) {
    MPI_Reduce(MPI_IN_PLACE, t.data(), samples, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    std::sort(t.begin(), t.end());
    const double median = samples % 2 ? t[samples / 2] : 0.5 * (t[samples / 2 - 1] + t[samples / 2]);
    std::printf("%.6f\n", median);
  } else {
    MPI_Reduce(t.data(), nullptr, samples, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
