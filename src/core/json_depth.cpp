#include "core/json_depth.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace ccbench {

void check_json_depth(std::string_view text, const std::string& where, std::size_t first_line) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        const auto line = first_line + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(i), '\n');
        throw ParseError(where + ":" + std::to_string(line) + ": JSON nested deeper than " +
                         std::to_string(kMaxJsonDepth) + " levels");
      }
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
    }
  }
}

}  // namespace ccbench
