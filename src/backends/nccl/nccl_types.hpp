// Host-only mapping of ccbench's dtypes and redops to NCCL's enums, and NCCL's error classes.
// Needs nccl.h but no GPU, so it is unit-tested in CI.
#pragma once

#include <nccl.h>

#include <optional>
#include <string>

#include "core/enums.hpp"
#include "core/types.hpp"

namespace ccbench::nccl {

// NCCL's version code (2.28.9 -> 22809) as "2.28.9".
std::string version_string(int code);

// The NCCL type of a dtype, or nullopt when the NCCL this was compiled against has none (fp8
// before 2.24).
std::optional<ncclDataType_t> data_type(DType dtype);
std::optional<ncclRedOp_t> red_op(RedOp redop);

// The first NCCL version (as a version code) that knows the dtype at run time.
int min_version_for(DType dtype);

// Where an NCCL error comes from. Only ncclRemoteError means a peer or the network failed
// (PeerFailure, exit 4). ncclSystemError is a failed system call on this rank (NCCL's SYSCHECK:
// a socket, /dev/shm's fallocate or mmap for the shared-memory transport): a container with a
// small /dev/shm must not be reported as a dead peer.
enum class ErrorSide { local, peer };

struct ErrorClass {
  ErrorSide side = ErrorSide::local;
  std::string cause;  // one line naming the likely cause on this rank, with what to try
};

ErrorClass classify_error(ncclResult_t result);

// Why NCCL's avg of `dtype` over `nranks` ranks cannot be checked (its result is the same whatever
// the inputs), or nullopt: int8/uint8 past their exact range (sum/n is 0), fp8 e4m3 from 1024 ranks
// (NCCL's scale, 1/n rounded to e4m3, is 0). docs/method.md, "Correctness check".
std::optional<std::string> avg_fixed_result(DType dtype, int nranks);

// The init timeout of the NCCL communicator: CCBENCH_NCCL_INIT_TIMEOUT's seconds (`env_text`,
// null or "" = the default 300 s; 0 = no limit of its own), cut to end strictly inside the set-up
// watchdog (core/deadlines.hpp). Throws UsageError for text that is not a number of seconds.
inline constexpr double kDefaultInitTimeoutS = 300.0;
double init_timeout_s(const char* env_text, double setup_watchdog_s);

// classify_error(result).side == ErrorSide::peer.
bool is_peer_failure(ncclResult_t result);

}  // namespace ccbench::nccl
