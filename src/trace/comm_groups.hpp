// Process groups from the communicators several rank files name by the same id (NCCL's commId,
// NCCL Inspector's comm id): its members are the files' world ranks in comm-rank order. Shared
// by the NCCL log and NCCL Inspector importers.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace ccbench::trace {

class CommGroups {
 public:
  explicit CommGroups(int world_size) : world_size_(world_size) {}
  // File of world rank `world_rank` has a communicator `comm_id` ("" when the source gives none)
  // in which it is `comm_rank`.
  void seen(const std::string& comm_id, int comm_rank, int world_rank);
  // The group of a call on `comm_id` with `nranks` members: the id when every member's file names
  // it; else, for a world-sized one, "world" (members not from the source). Throws ParseError
  // "<where>: field '<field>': ..." when neither.
  std::string group_for(const std::string& comm_id, int nranks, const std::string& where, const char* field);
  bool took_world() const { return took_world_; }
  std::vector<Group> groups() const;

 private:
  int world_size_;
  std::map<std::string, std::map<int, int>> members_;  // comm id -> comm rank -> world rank
  std::map<std::string, Group> groups_;
  bool took_world_ = false;
};

}  // namespace ccbench::trace
