#include "core/host_load_note.hpp"

#include <fmt/format.h>

#include <cmath>

namespace ccbench {
namespace {

double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0.0;
  const double v = it->get<double>();
  return std::isfinite(v) ? v : 0.0;
}

}  // namespace

std::optional<std::string> busy_host_note(const nlohmann::json& system) {
  if (!system.is_object()) return std::nullopt;
  const auto it = system.find("host_load");
  if (it == system.end() || !it->is_object()) return std::nullopt;
  const nlohmann::json& h = *it;
  const double others = number(h, "others_core_share");
  const double steal = number(h, "steal_share");
  std::size_t gpu_others = 0;
  if (const auto g = h.find("gpu_other_processes"); g != h.end() && g->is_array()) gpu_others = g->size();
  if (!(others >= kBusyOthersShare) && !(steal >= kBusyStealShare) && gpu_others == 0) return std::nullopt;
  std::string cores = "the ranks' cores";
  if (const auto c = h.find("cores"); c != h.end() && c->is_array())
    cores = fmt::format("the ranks' {} cores", c->size());
  std::string note = fmt::format("host busy: other processes used {:.0f}% of {}", others * 100.0, cores);
  if (const auto top = h.find("others_top"); top != h.end() && top->is_array() && !top->empty()) {
    std::string names;
    for (const auto& p : *top) {
      if (!p.is_object() || !p.contains("name") || !p["name"].is_string()) continue;
      names += fmt::format("{}{} {:.0f}%", names.empty() ? "" : ", ", p["name"].get<std::string>(),
                           number(p, "core_share") * 100.0);
    }
    if (!names.empty()) note += " (" + names + ")";
  }
  note += fmt::format("; steal {:.0f}%", steal * 100.0);
  if (const auto la = h.find("load_avg_1m"); la != h.end() && la->is_object()) {
    note += fmt::format("; load average {:.1f} -> {:.1f}", number(*la, "start"), number(*la, "end"));
  }
  if (gpu_others > 0) note += fmt::format("; {} other process(es) on the GPUs", gpu_others);
  return note;
}

}  // namespace ccbench
