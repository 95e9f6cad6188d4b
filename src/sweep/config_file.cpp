#include "sweep/config_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/yaml_checks.hpp"

namespace ccbench {
namespace {

std::string at(const std::string& path, const YAML::Node& node) {
  const int line = node.Mark().line;
  return line >= 0 ? path + ":" + std::to_string(line + 1) : path;
}

const char* kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "empty";
    default:
      return "a value";
  }
}

}  // namespace

std::vector<std::string> config_file_tokens(const std::string& path, const std::set<std::string>& known) {
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const ParseError& e) {
    throw UsageError(std::string("--config ") + e.what());
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
    yaml_checks::check_document(path, text, root);
  } catch (const YAML::Exception& e) {
    throw UsageError(path + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + yaml_checks::describe(e));
  } catch (const ParseError& e) {
    throw UsageError(e.what());
  }
  if (root.IsNull()) return {};
  if (!root.IsMap()) throw UsageError(path + ": a sweep config must be a mapping of option names to values");
  std::vector<std::string> tokens;
  std::map<std::string, int> seen;  // key -> line of its first appearance
  try {
    for (const auto& entry : root) {
      if (!entry.first.IsScalar()) {
        throw UsageError(at(path, entry.first) + ": a key must be a plain option name, not " + kind(entry.first));
      }
      const std::string written = entry.first.Scalar();
      std::string key = written;
      std::ranges::replace(key, '_', '-');
      const int line = entry.first.Mark().line + 1;
      const std::string where = path + ":" + std::to_string(line);
      if (key == "config") throw UsageError(where + ": 'config' cannot nest");
      if (!known.contains(key)) {
        throw UsageError(where + ": unknown key '" + written +
                         "' (keys are the long flags of `ccbench run`, e.g. max_bytes, iters, ops)");
      }
      if (const auto [it, fresh] = seen.emplace(key, line); !fresh) {
        throw UsageError(where + ": key '" + written + "' repeats line " + std::to_string(it->second));
      }
      std::string value;
      if (entry.second.IsSequence()) {
        for (const auto& item : entry.second) {
          if (!item.IsScalar()) {
            throw UsageError(at(path, item) + ": '" + written + "': a list item must be a value, not " + kind(item));
          }
          value += (value.empty() ? "" : ",") + item.Scalar();
        }
      } else if (entry.second.IsScalar()) {
        value = entry.second.Scalar();
      } else {
        throw UsageError(at(path, entry.second.IsNull() ? entry.first : entry.second) + ": '" + written +
                         "' must be a value or a list of values, not " + kind(entry.second));
      }
      tokens.push_back("--" + key + "=" + value);
    }
  } catch (const YAML::Exception& e) {
    throw UsageError(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return tokens;
}

}  // namespace ccbench
