#include "trace/trace_writer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/types.hpp"

namespace ccbench::trace {

namespace {

// Shortest text that reads back as the same double (fmt's default), as JSON wants it.
std::string number(double value) { return fmt::format("{}", value); }

}  // namespace

std::string call_json(const Call& call) {
  std::string line =
      fmt::format(R"({{"op":"{}","dtype":"{}","count":{})", name(call.op), ccbench::name(call.dtype), call.count);
  if (call.op == CallOp::alltoallv) {
    line += ",\"counts\":[";
    for (std::size_t i = 0; i < call.counts.size(); ++i) {
      if (i > 0) line += ',';
      line += std::to_string(call.counts[i]);
    }
    line += "]";
  }
  if (call.redop) line += fmt::format(R"(,"redop":"{}")", ccbench::name(*call.redop));
  if (call.root) line += fmt::format(R"(,"root":{})", *call.root);
  if (call.peer) line += fmt::format(R"(,"peer":{})", *call.peer);
  line += ",\"group\":" + nlohmann::json(call.group).dump();
  if (call.start_us) line += ",\"start_us\":" + number(*call.start_us);
  if (call.duration_us) line += ",\"duration_us\":" + number(*call.duration_us);
  if (call.gap_us) line += ",\"gap_us\":" + number(*call.gap_us);
  if (call.step) line += fmt::format(R"(,"step":{})", *call.step);
  line += fmt::format(R"(,"origin":"{}")", name(call.origin));
  if (call.source_id) line += fmt::format(R"(,"source_id":{})", *call.source_id);
  line += "}";
  return line;
}

TraceWriter::TraceWriter(const std::filesystem::path& out) : out_(out) {
  // A symlink at --out is kept and its target replaced, as every atomic write does
  // (docs/hardening.md "Writing files").
  std::error_code ec;
  if (std::filesystem::is_symlink(out, ec)) out_ = std::filesystem::weakly_canonical(out, ec);
  if (ec) out_ = out;
  struct stat st {};
  if (::stat(out_.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    direct_ = true;
    file_ = std::fopen(out_.c_str(), "w");
    if (!file_) throw std::system_error(errno, std::generic_category(), "cannot write " + out_.string());
  } else {
    const std::filesystem::path dir = out_.has_parent_path() ? out_.parent_path() : std::filesystem::path(".");
    std::string temp_name = ".";
    temp_name += out_.filename().string();
    temp_name += ".XXXXXX";
    temp_ = (dir / temp_name).string();
    const int fd = ::mkstemp(temp_.data());
    if (fd < 0)
      throw std::system_error(errno, std::generic_category(), "cannot create a temporary file in " + dir.string());
    file_ = ::fdopen(fd, "w");
    if (!file_) {
      const int err = errno;
      ::close(fd);
      ::unlink(temp_.c_str());
      throw std::system_error(err, std::generic_category(), "cannot write " + temp_);
    }
  }
  put(fmt::format("{{\"trace_version\":{},\n\"ranks\":[", kTraceVersion));
}

TraceWriter::~TraceWriter() {
  if (file_) std::fclose(file_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void TraceWriter::put(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
    throw std::system_error(errno, std::generic_category(), "cannot write " + (direct_ ? out_.string() : temp_));
}

void TraceWriter::begin_rank(int rank, const std::string& file) {
  put(fmt::format("{}\n{{\"rank\":{},\"file\":{},\"calls\":[", first_rank_ ? "" : ",", rank,
                  nlohmann::json(file).dump()));
  first_rank_ = false;
  first_call_ = true;
  previous_end_us_.reset();
}

void TraceWriter::add(Call call) {
  if (!call.gap_us && call.start_us && previous_end_us_) call.gap_us = *call.start_us - *previous_end_us_;
  if (call.start_us && call.duration_us)
    previous_end_us_ = *call.start_us + *call.duration_us;
  else
    previous_end_us_.reset();
  put(first_call_ ? "\n" : ",\n");
  put(call_json(call));
  first_call_ = false;
  ++calls_written_;
}

void TraceWriter::end_rank() { put("]}"); }

void TraceWriter::finish(int world_size, const std::vector<Group>& groups, const Provenance& provenance) {
  nlohmann::json group_list = nlohmann::json::array();
  for (const auto& g : groups)
    group_list.push_back({{"id", g.id}, {"ranks", g.ranks}, {"members_from_source", g.members_from_source}});
  const nlohmann::json prov = {{"format", provenance.format},
                               {"source", provenance.source},
                               {"source_version", provenance.source_version},
                               {"tool_version", provenance.tool_version},
                               {"not_in_source", provenance.not_in_source}};
  put(fmt::format("],\n\"world_size\":{},\n\"groups\":{},\n\"provenance\":{}}}\n", world_size, group_list.dump(),
                  prov.dump()));
  if (std::fflush(file_) != 0) throw std::system_error(errno, std::generic_category(), "cannot write " + out_.string());
  if (direct_) {
    std::fclose(file_);
    file_ = nullptr;
    return;
  }
  ::fsync(::fileno(file_));
  ::fchmod(::fileno(file_), 0644);
  std::fclose(file_);
  file_ = nullptr;
  if (::rename(temp_.c_str(), out_.c_str()) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot rename to " + out_.string());
  temp_.clear();
}

}  // namespace ccbench::trace
