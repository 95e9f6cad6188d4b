// Writing a trace as it is imported: one call per line, straight to a temporary file beside --out,
// renamed over it only when the whole trace is written (nothing half-written is ever at --out, and
// memory does not grow with the number of calls).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace ccbench::trace {

// One call as the single-line JSON object the trace file holds.
std::string call_json(const Call& call);

class TraceWriter {
 public:
  // Creates the temporary file in `out`'s folder (std::system_error when it cannot).
  explicit TraceWriter(const std::filesystem::path& out);
  ~TraceWriter();  // removes the temporary file unless finish() renamed it
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void begin_rank(int rank, const std::string& file);
  // Fills in `gap_us` from the previous call of the rank when both have a start and the previous a
  // duration, and the source gave none.
  void add(Call call);
  // The next call does not follow the previous one (the source lost calls between them): no gap.
  void break_gap() { previous_end_us_.reset(); }
  void end_rank();
  std::uint64_t calls_written() const { return calls_written_; }

  // Writes groups, world size and provenance, syncs and renames over `out`.
  void finish(int world_size, const std::vector<Group>& groups, const Provenance& provenance);

 private:
  void put(const std::string& text);
  std::filesystem::path out_;
  std::string temp_;
  std::FILE* file_ = nullptr;
  bool direct_ = false;  // `out` is not a regular file (/dev/stdout): written in place
  bool first_rank_ = true;
  bool first_call_ = true;
  std::optional<double> previous_end_us_;
  std::uint64_t calls_written_ = 0;
};

}  // namespace ccbench::trace
