#include "cli/flag_sets/flag_set.hpp"

#include <fmt/format.h>

#include <utility>

namespace ccbench::cli {

FlagSet::FlagSet(std::string description, std::string name) : CLI::App(std::move(description), std::move(name)) {
  option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  get_formatter()->column_width(36);
}

namespace {

// A table cell: a '|' would end the cell, a newline the row.
std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string names(const CLI::Option& option) {
  if (option.get_positional() && option.get_snames().empty() && option.get_lnames().empty())
    return "`" + option.get_name() + "` (positional)";
  std::string text;
  for (const std::string& s : option.get_snames()) text += (text.empty() ? "`-" : ", `-") + s + "`";
  for (const std::string& l : option.get_lnames()) text += (text.empty() ? "`--" : ", `--") + l + "`";
  return text;
}

}  // namespace

std::string flag_reference_markdown(const CLI::App& app) {
  std::string out = fmt::format("# {}\n\n{}\n\n| flag | value | default | meaning |\n|---|---|---|---|\n",
                                app.get_name(), cell(app.get_description()));
  for (const CLI::Option* option : app.get_options()) {
    const bool takes_value = option->get_items_expected_max() > 0;
    std::string meaning = option->get_description();
    if (option->get_required()) meaning += " (required)";
    out += fmt::format("| {} | {} | {} | {} |\n", names(*option), takes_value ? cell(option->get_type_name()) : "",
                       cell(option->get_default_str()), cell(meaning));
  }
  return out;
}

}  // namespace ccbench::cli
