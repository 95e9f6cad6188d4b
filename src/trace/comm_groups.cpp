#include "trace/comm_groups.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace ccbench::trace {

void CommGroups::seen(const std::string& comm_id, int comm_rank, int world_rank) {
  if (!comm_id.empty()) members_[comm_id][comm_rank] = world_rank;
}

std::string CommGroups::group_for(const std::string& comm_id, int nranks, const std::string& where, const char* field) {
  if (const auto m = members_.find(comm_id);
      !comm_id.empty() && m != members_.end() && static_cast<int>(m->second.size()) == nranks) {
    if (!groups_.contains(comm_id)) {
      Group g{comm_id, {}, true};
      for (const auto& [comm_rank, world_rank] : m->second) g.ranks.push_back(world_rank);
      groups_.emplace(comm_id, std::move(g));
    }
    return comm_id;
  }
  if (nranks != world_size_)
    throw ParseError(
        fmt::format("{}: field '{}': a communicator of {} ranks whose members the files do not name "
                    "(its id is not in every member's file)",
                    where, field, nranks));
  took_world_ = true;
  if (!groups_.contains("world")) {
    Group g{"world", {}, false};
    for (int r = 0; r < world_size_; ++r) g.ranks.push_back(r);
    groups_.emplace("world", std::move(g));
  }
  return "world";
}

std::vector<Group> CommGroups::groups() const {
  std::vector<Group> out;
  for (const auto& [id, g] : groups_) out.push_back(g);
  return out;
}

}  // namespace ccbench::trace
