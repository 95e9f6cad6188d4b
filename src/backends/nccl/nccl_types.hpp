// Host-only mapping of ccbench's dtypes and redops to NCCL's enums, and NCCL's error classes.
// Needs nccl.h but no GPU, so it is unit-tested in CI.
#pragma once

#include <nccl.h>

#include <optional>
#include <string>

#include "core/enums.hpp"

namespace ccbench::nccl {

// NCCL's version code (2.28.9 -> 22809) as "2.28.9".
std::string version_string(int code);

// The NCCL type of a dtype, or nullopt when the NCCL this was compiled against has none (fp8
// before 2.24).
std::optional<ncclDataType_t> data_type(DType dtype);
std::optional<ncclRedOp_t> red_op(RedOp redop);

// The first NCCL version (as a version code) that knows the dtype at run time.
int min_version_for(DType dtype);

// True for errors that mean a peer or the network failed (ncclRemoteError, ncclSystemError):
// reported as PeerFailure (exit 4); everything else is a BackendError.
bool is_peer_failure(ncclResult_t result);

}  // namespace ccbench::nccl
