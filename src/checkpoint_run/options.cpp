#include "checkpoint_run/options.hpp"

namespace ccbench::checkpoint_run {

std::string_view name(CheckpointLayout layout) {
  return layout == CheckpointLayout::file_per_rank ? "file-per-rank" : "shared-file";
}

}  // namespace ccbench::checkpoint_run
