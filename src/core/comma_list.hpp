// The one splitter of comma-separated flag values and keys (--ops, --hosts, --congestors, ...).
#pragma once

#include <string_view>
#include <vector>

namespace ccbench {

// Every item between commas, as typed: "a,,b" -> {"a", "", "b"}, "" -> {""}, "a," -> {"a", ""}.
// Callers decide what an empty item or a space means (a host list refuses it, an op list skips
// it), so the splitter keeps both. The views point into `text`.
std::vector<std::string_view> split_commas(std::string_view text);

}  // namespace ccbench
