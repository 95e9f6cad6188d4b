#include "cli/flag_sets/info.hpp"

namespace ccbench::cli {

InfoFlags::InfoFlags()
    : CLI::App("ccbench info: the discovered system as JSON (from a shell, or under mpirun/srun for all hosts)",
               "ccbench info") {
  add_option("--instance-type", instance_type, "override the DMI product name");
  add_option("--out", out, "write the JSON here instead of stdout");
}

std::unique_ptr<CLI::App> info_flags() { return std::make_unique<InfoFlags>(); }

}  // namespace ccbench::cli
