// The backend table: one line per backend. A backend that was not built in keeps its line, so
// `--backend nccl` on a CPU-only build says why instead of "unknown backend". This file is the one
// place that knows every backend (its own CMake target, above the backends it creates: no cycle).
#include <algorithm>
#include <stdexcept>

#include "backends/backend.hpp"
#include "backends/mpi/mpi_backend.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "sweep/channel.hpp"

#ifdef CCBENCH_HAVE_NCCL
#include "backends/nccl/nccl_backend.hpp"
#endif
#ifdef CCBENCH_HAVE_LIBFABRIC
#include "fabric/fabric_backend.hpp"
#include "fabric/providers.hpp"
#endif

namespace ccbench {
namespace {

void reject_fabric_options(const BackendOptions& options, std::string_view backend) {
  if (!options.provider.empty() || !options.domain.empty()) {
    throw UsageError("-p/--provider and -D/--domain apply to `ccbench fabric` only, not --backend " +
                     std::string(backend));
  }
}

std::unique_ptr<Backend> create_mpi(const BackendOptions& options) {
  if (!options.path.empty()) throw UsageError("--path applies to --backend nccl only");
  if (options.graph_launches != 0) throw UsageError("-G/--cudagraph applies to --backend nccl only");
  if (options.registration != BufferRegistration::none)
    throw UsageError("-R/--register applies to --backend nccl only");
  reject_fabric_options(options, "mpi");
  return make_world_mpi_backend(options.group_color);
}

#ifdef CCBENCH_HAVE_LIBFABRIC
// Swaps a blob with the other rank of two over the control channel (never timed): rank 0 gathers
// both, then broadcasts rank 1's blob after its own, length-prefixed.
std::string swap_with_peer(ControlChannel& channel, const std::string& mine) {
  const auto all = channel.gather_to_root(mine);
  std::string packed;
  if (channel.is_root()) packed = std::to_string(all[0].size()) + ":" + all[0] + all[1];
  packed = channel.broadcast(packed);
  const std::size_t colon = packed.find(':');
  const std::size_t first = std::stoul(packed.substr(0, colon));
  return channel.is_root() ? packed.substr(colon + 1 + first) : packed.substr(colon + 1, first);
}

// Set-up in steps, all ranks agreeing after each (AgreedSetupError), so no rank waits on a peer
// that gave up: the provider, the endpoint, the peer's address, a probe message each way.
std::unique_ptr<Backend> create_fabric(const BackendOptions& options) {
  if (!options.path.empty() || options.graph_launches != 0 || options.registration != BufferRegistration::none) {
    throw UsageError("--path, -G/--cudagraph and -R/--register apply to --backend nccl only");
  }
  if (options.channel == nullptr) throw BackendError("the libfabric backend needs a control channel");
  ControlChannel& channel = *options.channel;
  const int rank = channel.rank();
  if (channel.size() != 2) {
    throw AgreedSetupError("fabric tests run between exactly 2 ranks (mpirun -np 2 ...); got " +
                           std::to_string(channel.size()));
  }

  // The provider: rank 0 resolves the default so both ranks ask for the same one.
  std::string provider = options.provider;
  if (provider.empty()) {
    std::string choice;
    if (rank == 0) {
      choice = fabric::choose_default_provider(fabric::rdm_provider_names(fabric::query_providers()),
                                               channel.local_size() == channel.size());
    }
    provider = channel.broadcast(choice);
    if (provider.empty()) {
      throw AgreedSetupError(
          "no libfabric provider offers reliable datagram endpoints (FI_EP_RDM) here; see "
          "`ccbench fabric --list-providers`");
    }
  }

  std::unique_ptr<fabric::FabricBackend> backend;
  std::string error;
  try {
    fabric::EndpointOptions endpoint;
    endpoint.provider = provider;
    endpoint.domain = options.domain;
    endpoint.want_rma = options.want_rma;
    endpoint.memory = options.memory == "cuda" ? fabric::MemoryKind::cuda : fabric::MemoryKind::host;
    endpoint.window = options.window;
    endpoint.rank = rank;
    endpoint.cuda_device = options.local_rank;
    backend = std::make_unique<fabric::FabricBackend>(endpoint);
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_or_throw(channel, error);

  try {
    backend->connect(swap_with_peer(channel, backend->local_address()));
  } catch (const std::exception& e) {
    error = "provider " + backend->provider() + " cannot reach the peer: " + e.what();
  }
  agree_or_throw(channel, error);

  // A provider that cannot reach the peer fails here, before measuring (exit 2), not as a hang.
  const double probe_s = options.probe_timeout_s;
  if (const std::string why = backend->probe(probe_s); !why.empty()) {
    error = "provider " + backend->provider() + " cannot reach the peer: " + why;
  }
  agree_or_throw(channel, error);
  backend->set_exchange([&channel](const std::string& mine) { return swap_with_peer(channel, mine); });
  return backend;
}
#endif

}  // namespace

const std::vector<BackendEntry>& backend_table() {
  static const std::vector<BackendEntry> table = {
      {ccbench::name(BackendKind::mpi), "MPI collectives on host memory", &create_mpi, ""},
#ifdef CCBENCH_HAVE_NCCL
      {ccbench::name(BackendKind::nccl), "NCCL collectives on GPU memory (NVLink, EFA through aws-ofi-nccl)",
       &create_nccl_backend, ""},
#else
      {ccbench::name(BackendKind::nccl), "NCCL collectives on GPU memory", nullptr,
       "this ccbench was built without NCCL (configure with -DCCBENCH_WITH_NCCL=ON and CUDA_HOME/NCCL_HOME)"},
#endif
#ifdef CCBENCH_HAVE_LIBFABRIC
      {ccbench::name(BackendKind::libfabric), "libfabric point-to-point tests between 2 ranks (`ccbench fabric`)",
       &create_fabric, ""},
#else
      {ccbench::name(BackendKind::libfabric), "libfabric point-to-point tests between 2 ranks (`ccbench fabric`)",
       nullptr,
       "this ccbench was built without libfabric (install libfabric-dev and configure with "
       "-DCCBENCH_WITH_LIBFABRIC=ON)"},
#endif
  };
  return table;
}

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options) {
  backend_flag(name);  // an unknown name: core's one message, the one `ccbench screen` gives too
  for (const auto& entry : backend_table()) {
    if (entry.name != name) continue;
    if (entry.create == nullptr)
      throw UsageError("--backend " + std::string(name) + ": " + std::string(entry.missing_reason));
    return entry.create(options);
  }
  throw std::logic_error("backend_table() lacks the backend " + std::string(name));
}

nlohmann::json built_in_library_versions() {
  nlohmann::json versions = {{"mpi", mpi_library_version()}};
#ifdef CCBENCH_HAVE_NCCL
  versions.update(nccl_library_versions());
#endif
  return versions;
}

}  // namespace ccbench
