// Error types that carry the documented exit code (docs/result-format.md and docs/verdict-format.md, "Exit codes").
#pragma once

#include <stdexcept>
#include <string>

namespace ccbench {

namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int data_check_failed = 1;
inline constexpr int usage = 2;
inline constexpr int timeout = 3;
inline constexpr int peer_failed = 4;
// run, replay, congestion, fabric: --require-path was not proven (docs/path-proof.md); rows kept.
inline constexpr int path_not_proven = 6;
// run --expect MODEL --stop-below K: K rows below the model's band stopped the sweep; rows kept.
inline constexpr int below_expectation = 7;
}  // namespace exit_code

// Bad flag, config, file or environment detected before measuring: exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file that cannot be parsed; the message names the file and the JSON path or line.
class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ccbench
