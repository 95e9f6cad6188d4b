// `ccbench fabric`'s configuration (its flags are declared in cli/flag_sets/fabric.hpp and parsed
// in cli/fabric_options.cpp). The sweep flags (-b -e -f -i -w -n --target-ci --max-time-per-size
// --trials -c -J -T --label --instance-type) mean what they mean for `ccbench run`; the fabric ones
// choose the provider, the window of outstanding operations and the buffer memory.
#pragma once

#include <string>
#include <vector>

#include "sweep/run_config.hpp"

namespace ccbench::fabric {

enum class MemoryKind { host, cuda };
std::string_view name(MemoryKind kind);

struct FabricConfig {
  RunConfig run;         // backend "libfabric", dtype uint8, in-place no, ops fabric_*
  std::string provider;  // -p: empty = the default choice (efa, else shm on one host, else tcp)
  std::string domain;    // -D/--domain: empty = the provider's first
  int window = 64;       // outstanding operations of bw, bibw, write, read
  MemoryKind memory = MemoryKind::host;
  bool list_providers = false;
};

// The default op list and the names --ops accepts (pingpong or fabric_pingpong, ...).
std::vector<Op> parse_fabric_ops(const std::string& text);

// True when argv asks for --list-providers (answered before MPI_Init, so no launcher is needed).
bool wants_provider_list(int argc, char** argv);

}  // namespace ccbench::fabric
