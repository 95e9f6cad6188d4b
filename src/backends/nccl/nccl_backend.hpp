// Collectives through NCCL on GPU memory: one GPU per rank, the communicator set up with a unique
// id broadcast over the control channel. See docs/nccl-backend.md.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "backends/backend.hpp"

namespace ccbench {

// Throws UsageError when no GPU is visible or the options do not fit (exit 2), BackendError when
// NCCL cannot set up the communicator. Collective over options.channel (every rank).
std::unique_ptr<Backend> create_nccl_backend(const BackendOptions& options);

namespace nccl {
class NcclApi;
}
// The same backend over another implementation of the CUDA/NCCL calls (the unit tests' recording
// fake). `on_aborted` runs where the measuring thread finds the communicator aborted (default: it
// parks until the watchdog ends the process).
std::unique_ptr<Backend> create_nccl_backend(const BackendOptions& options, nccl::NcclApi& api,
                                             std::function<void()> on_aborted = {});

// {"nccl": version of the loaded library, "nccl_build": header version, "cuda_runtime", ...}.
// Needs no GPU.
nlohmann::json nccl_library_versions();

}  // namespace ccbench
