// The ccbench version and the git commit it was built from (regenerated at every build).
#pragma once

#include <string_view>

namespace ccbench::system {

std::string_view tool_version();
std::string_view tool_git_commit();  // "unknown" outside a git checkout; "-dirty" when modified

}  // namespace ccbench::system
