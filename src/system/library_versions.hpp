// Versions of the libraries ccbench links that need no MPI or CUDA to ask (libfabric).
#pragma once

#include <nlohmann/json.hpp>

namespace ccbench::system {

// {"libfabric": "1.17.0"} when built with libfabric; {} otherwise.
nlohmann::json library_versions();

}  // namespace ccbench::system
