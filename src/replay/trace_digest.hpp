// The trace's identity in a replay result file (config.replay.trace_sha256): `compare --statistic
// step` compares two replays only when they replayed the same trace, byte for byte.
#pragma once

#include <filesystem>
#include <string>

namespace ccbench::replay {

// SHA-256 of the file's bytes, 64 lowercase hex digits (what sha256sum prints). Throws
// std::runtime_error naming the file when it cannot be read.
std::string file_sha256_hex(const std::filesystem::path& path);

}  // namespace ccbench::replay
