// What a checkpoint's result file records about the target it wrote to: filesystem type (statfs),
// the mount it is on (/proc/self/mountinfo: source and options), the block device's queue facts
// (/sys/dev/block/MAJ:MIN), Lustre striping (`lfs getstripe`, when lfs exists), free space, and the
// host's memory (a shard below the page cache is noted). docs/checkpoint.md, "Metadata".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ccbench::checkpoint {

struct TargetCheck {
  std::string error;  // "" when usable: else why not ("is a file", "read-only mount", ...)
  std::uint64_t free_bytes = 0;
};

// Whether `dir` is a writable directory on a writable mount; its free space for unprivileged writes.
TargetCheck check_target(const std::string& dir);

// The facts above as JSON (every field null when it cannot be read).
nlohmann::json describe_target(const std::string& dir);

// The filesystem's name from statfs's f_type ("ext4", "xfs", "tmpfs", "lustre", "0x...").
std::string filesystem_type(const std::string& dir);

// `lfs getstripe -d DIR` (run by argv, no shell; at most 5 s): its output, {"error": ...} when it
// failed, null when lfs is not on PATH.
nlohmann::json lustre_striping(const std::string& dir);

// MemTotal of this host in bytes (0 when unknown).
std::uint64_t host_memory_bytes();

}  // namespace ccbench::checkpoint
