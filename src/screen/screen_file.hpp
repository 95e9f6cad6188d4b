// What a screen leaves (docs/screen.md, "Outputs"): the table the command prints on stdout and
// screen.json, both from the search's verdicts and the tests it ran.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "screen/screen_config.hpp"
#include "screen/screen_test.hpp"
#include "screen/search.hpp"

namespace ccbench::screen {

constexpr int kScreenVersion = 3;  // screen.json's screen_version

// How the screen was started and when it ran.
struct ScreenProvenance {
  std::vector<std::string> command;  // argv
  std::string tool_version;          // ccbench's
  std::string started_at;            // UTC
  double elapsed_s = 0;
};

// The floors, then one line per host; every line ends in a newline.
std::string screen_table_text(const Search& search, const ScreenConfig& c, double elapsed_s);

// screen.json: the configuration, the floors, every host's verdict and evidence, every test.
nlohmann::json screen_json(const Search& search, const ScreenConfig& c, const std::vector<ScreenTest>& done,
                           const ScreenProvenance& provenance, int exit);

}  // namespace ccbench::screen
