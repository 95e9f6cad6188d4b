// `ccbench run --config FILE`: the YAML file becomes "--key=value" tokens placed before the command
// line's own (options take the last value given, so flags win without a second merge step).
#pragma once

#include <set>
#include <string>
#include <vector>

namespace ccbench {

// Keys are the long flags of `ccbench run` (`known`, without "--"), with '_' or '-'. Values are
// scalars or lists of scalars (joined with commas). Every problem is a UsageError (exit 2) naming
// the file and the line: not a regular file, malformed YAML, a key that is not a plain word, a
// repeated key, a map where a value belongs, an unknown key.
std::vector<std::string> config_file_tokens(const std::string& path, const std::set<std::string>& known);

}  // namespace ccbench
