// Text that is not UTF-8 (a Latin-1 byte in an environment variable, a label, a path, an imported
// log): JSON cannot hold it, so it is recorded with each offending byte written as the four
// characters \xNN, and the file says which fields were escaped (docs/result-format.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

bool is_valid_utf8(std::string_view text);

// `text` with every byte that is not part of a valid UTF-8 sequence replaced by "\xNN".
std::string escape_invalid_utf8(std::string_view text);

// Escapes every string and object key under `value` that is not valid UTF-8; returns the JSON
// pointers (e.g. "/environment/LANG") of what changed, in document order.
std::vector<std::string> escape_invalid_utf8(nlohmann::json& value, const std::string& pointer = "");

}  // namespace ccbench
