// The backend table: one line per backend. A backend that was not built in keeps its line, so
// `--backend nccl` on a CPU-only build says why instead of "unknown backend".
#include <mpi.h>

#include "backends/backend.hpp"
#include "backends/mpi/mpi_backend.hpp"
#include "core/error.hpp"

#ifdef CCBENCH_HAVE_NCCL
#include "backends/nccl/nccl_backend.hpp"
#endif

namespace ccbench {
namespace {

std::unique_ptr<Backend> create_mpi(const BackendOptions& options) {
  if (!options.path.empty()) throw UsageError("--path applies to --backend nccl only");
  if (options.graph_launches != 0) throw UsageError("-G/--cudagraph applies to --backend nccl only");
  return std::make_unique<MpiBackend>(MPI_COMM_WORLD);
}

}  // namespace

const std::vector<BackendEntry>& backend_table() {
  static const std::vector<BackendEntry> table = {
      {"mpi", "MPI collectives on host memory", &create_mpi, ""},
#ifdef CCBENCH_HAVE_NCCL
      {"nccl", "NCCL collectives on GPU memory (NVLink, EFA through aws-ofi-nccl)", &create_nccl_backend, ""},
#else
      {"nccl", "NCCL collectives on GPU memory", nullptr,
       "this ccbench was built without NCCL (configure with -DCCBENCH_WITH_NCCL=ON and CUDA_HOME/NCCL_HOME)"},
#endif
  };
  return table;
}

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options) {
  for (const auto& entry : backend_table()) {
    if (entry.name != name) continue;
    if (entry.create == nullptr) throw UsageError("--backend " + std::string(name) + ": " + std::string(entry.missing_reason));
    return entry.create(options);
  }
  throw UsageError("--backend: unknown backend '" + std::string(name) + "' (known: mpi, nccl)");
}

nlohmann::json built_in_library_versions() {
  nlohmann::json versions = {{"mpi", mpi_library_version()}};
#ifdef CCBENCH_HAVE_NCCL
  versions.update(nccl_library_versions());
#endif
  return versions;
}

}  // namespace ccbench
