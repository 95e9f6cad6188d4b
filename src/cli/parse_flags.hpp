// The parse step the measuring commands share after building their CLI11 app: the shared flags a
// command does not take are removed, --help is printed by one rank, and a parse error becomes one
// UsageError line with the flag meant (sweep/flag_suggestion.hpp). One place, so `checkpoint` and
// `congestion` fail alike.
#pragma once

#include <CLI/CLI.hpp>
#include <initializer_list>
#include <iostream>

#include "core/error.hpp"
#include "sweep/flag_suggestion.hpp"

namespace ccbench::cli {

// Removes flags (from add_shared_flags) that do not apply to this command.
inline void remove_flags(CLI::App& app, std::initializer_list<const char*> flags) {
  for (const char* flag : flags) app.remove_option(app.get_option(flag));
}

// Parses argv into `app`. False when --help was asked (printed when `print_help`: rank 0 only);
// throws UsageError naming the flag on a parse error.
inline bool parse_flags_or_help(CLI::App& app, int argc, char** argv, bool print_help) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (print_help) std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(parse_error_text(app, e));
  }
  return true;
}

}  // namespace ccbench::cli
