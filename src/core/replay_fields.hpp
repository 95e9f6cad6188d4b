// The names a `ccbench replay` result file shares with its readers: replay writes them and
// `compare --statistic step` reads them (docs/replay.md, "Result file"), so both take them from here.
#pragma once

#include <string_view>

namespace ccbench {

// The op of the step's row: its samples are the step's communication time.
inline constexpr std::string_view kReplayStepOp = "replay_step";
// config.replay.trace_sha256: the SHA-256 of the trace file's bytes, the trace's identity.
inline constexpr const char* kReplayConfigKey = "replay";
inline constexpr const char* kReplayTraceSha256Key = "trace_sha256";

}  // namespace ccbench
