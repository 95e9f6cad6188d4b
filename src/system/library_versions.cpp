#include "system/library_versions.hpp"

#ifdef CCBENCH_HAVE_LIBFABRIC
#include <rdma/fabric.h>
#endif

namespace ccbench::system {

nlohmann::json library_versions() {
  nlohmann::json versions = nlohmann::json::object();
#ifdef CCBENCH_HAVE_LIBFABRIC
  const std::uint32_t v = fi_version();
  versions["libfabric"] = std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
#endif
  return versions;
}

}  // namespace ccbench::system
