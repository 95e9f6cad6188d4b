// A bound on how deeply a JSON document may nest before anything parses or walks it.
//
// nlohmann's parser is iterative, but what reads the parsed tree afterwards (copies, comparisons,
// dump() in a message) recurses once per level: a file nested 10^6 deep overflowed the stack of
// compare, report and model. No file ccbench writes nests deeper than 10 levels; 512 leaves room
// for anything a person or another tool writes (docs/hardening.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ccbench {

inline constexpr int kMaxJsonDepth = 512;

// Throws ParseError "<where>:<line>: JSON nested deeper than 512 levels" when `text` opens more
// than kMaxJsonDepth arrays or objects at once (brackets inside strings do not count); `text`
// starts on line `first_line` of the file. Cheap: one pass over the bytes, no allocation.
void check_json_depth(std::string_view text, const std::string& where, std::size_t first_line = 1);

}  // namespace ccbench
