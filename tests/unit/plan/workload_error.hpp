// The message a workload text is refused with, for the workload tests ("(no error)" when it parses).
#pragma once

#include <string>

#include "core/error.hpp"
#include "model/workload.hpp"

namespace ccbench::model::test {

inline std::string error_of(const std::string& yaml) {
  try {
    parse_workload(yaml, "w.yaml");
  } catch (const ParseError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace ccbench::model::test
