#include "checkpoint/step_dirs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "checkpoint/step_store.hpp"
#include "checkpoint/storage.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"

namespace ccbench::checkpoint {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kStepDigits = 6;
constexpr std::uintmax_t kMaxManifestBytes = 64ULL << 20;

bool six_digits(const std::string& text) {
  return text.size() == kStepDigits &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A JSON whole number in [lo, hi], read without a cast from a double (1e300, -7 and 0.5 are errors
// naming the field, never undefined behaviour).
std::int64_t whole_field(const json& m, const char* key, std::int64_t lo, std::int64_t hi, const std::string& file) {
  const auto it = m.find(key);
  if (it == m.end()) throw ParseError(fmt::format("{}: field '{}': missing", file, key));
  std::optional<std::int64_t> v;
  if (it->is_number_unsigned()) {
    const auto u = it->get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(hi)) v = static_cast<std::int64_t>(u);
  } else if (it->is_number_integer()) {
    v = it->get<std::int64_t>();
  }
  if (!v || *v < lo || *v > hi)
    throw ParseError(
        fmt::format("{}: field '{}': {} is not a whole number from {} to {}", file, key, it->dump(), lo, hi));
  return *v;
}

// A plain file name inside the step's folder: no separator, not `.`/`..`, not the manifest.
bool plain_name(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." && name != kManifestName &&
         name.find('/') == std::string::npos && name.find('\0') == std::string::npos;
}

}  // namespace

std::string step_name(int step) { return fmt::format("step-{:06d}", step); }
std::string partial_name(int step, const std::string& run) { return fmt::format(".step-{:06d}.partial-{}", step, run); }
std::string shard_name(int writer) { return fmt::format("rank-{:05d}.shard", writer); }

int step_of(const std::string& name) {
  std::string digits;
  if (name.rfind("step-", 0) == 0) {
    digits = name.substr(5);
  } else if (name.rfind(".step-", 0) == 0) {
    const auto dot = name.find('.', 6);
    if (dot == std::string::npos || name.compare(dot, 9, ".partial-") != 0) return -1;
    digits = name.substr(6, dot - 6);
  } else {
    return -1;
  }
  return six_digits(digits) ? std::stoi(digits) : -1;
}

int last_step(const std::vector<std::string>& names) {
  int last = 0;
  for (const auto& n : names) last = std::max(last, step_of(n));
  return last;
}

int last_step(const std::string& target) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(target, ec)) names.push_back(e.path().filename().string());
  return last_step(names);
}

std::optional<StepManifest> parse_manifest(const std::string& text, const std::string& file) {
  check_json_depth(text, file);
  json m;
  try {
    m = json::parse(text);
  } catch (const json::exception& e) {
    throw ParseError(fmt::format("{}: not JSON ({})", file, e.what()));
  }
  if (!m.is_object()) return std::nullopt;
  const auto tool = m.find("tool");
  if (tool == m.end() || !tool->is_string() || tool->get<std::string>() != kManifestTool) return std::nullopt;
  StepManifest out;
  const auto version = whole_field(m, "version", 0, 1000000, file);
  if (version != kManifestVersion)
    throw ParseError(
        fmt::format("{}: field 'version': {} is not {} (another ccbench's manifest)", file, version, kManifestVersion));
  const auto run = m.find("run");
  if (run == m.end() || !run->is_string() || run->get<std::string>().empty() || run->get<std::string>().size() > 64 ||
      !std::all_of(run->get_ref<const std::string&>().begin(), run->get_ref<const std::string&>().end(),
                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }))
    throw ParseError(fmt::format("{}: field 'run': {} is not a run id (letters, digits, - and _)", file,
                                 run == m.end() ? "missing" : run->dump()));
  out.run = run->get<std::string>();
  out.step = static_cast<int>(whole_field(m, "step", 1, kMaxStep, file));
  out.trial = static_cast<int>(whole_field(m, "trial", 0, kMaxTrialIndex, file));
  out.seed = static_cast<std::uint32_t>(whole_field(m, "seed", 0, 0xFFFFFFFFLL, file));
  out.shard_bytes = static_cast<std::uint64_t>(whole_field(m, "shard_bytes", 1, 1LL << 50, file));
  const auto shards = m.find("shards");
  if (shards == m.end() || !shards->is_array() || shards->empty())
    throw ParseError(fmt::format("{}: field 'shards': not a list of the step's shards", file));
  out.shards = shards->size();
  const auto files = m.find("files");
  if (files == m.end() || !files->is_array() || files->empty())
    throw ParseError(fmt::format("{}: field 'files': not a list of the step's file names", file));
  for (const auto& f : *files) {
    if (!f.is_string() || !plain_name(f.get<std::string>()))
      throw ParseError(fmt::format("{}: field 'files': {} is not a file name inside the step", file, f.dump()));
    out.files.push_back(f.get<std::string>());
  }
  return out;
}

std::optional<std::string> read_posix_manifest(const std::string& step_dir) {
  const fs::path dir(step_dir);
  const fs::path manifest = dir / kManifestName;
  std::error_code ec;
  // A symlink to a folder is not a step; a folder without a manifest entry is not one either.
  if (!fs::is_directory(fs::symlink_status(dir, ec)) || !fs::exists(fs::symlink_status(manifest, ec)))
    return std::nullopt;
  // A manifest lists one name a shard: tens of KiB. A large file under its name is not read.
  if (const auto bytes = fs::file_size(manifest, ec); !ec && bytes > kMaxManifestBytes)
    throw ParseError(fmt::format("{}: {} bytes, too large for a manifest", manifest.string(), bytes));
  // read_input_file: a FIFO (or a folder) as the manifest is an error, never a blocked read.
  return read_input_file(manifest);
}

std::vector<StepEntry> scan_steps(const std::string& target) { return scan_steps(*make_posix_storage(), target); }

std::vector<CommittedStep> committed_steps(const std::string& target) {
  return committed_steps(*make_posix_storage(), target);
}

std::vector<CommittedStep> steps_to_remove(const std::vector<CommittedStep>& committed, int keep) {
  if (keep <= 0 || committed.size() <= static_cast<std::size_t>(keep)) return {};
  return {committed.begin(), committed.end() - keep};
}

std::string remove_step(const CommittedStep& step) {
  const fs::path dir(step.path);
  std::error_code ec;
  // The manifest first: a folder left half-removed (a crash, an error below) is no longer a step.
  fs::remove(dir / kManifestName, ec);
  if (ec) return fmt::format("kept {}: remove {}: {}", step.path, kManifestName, ec.message());
  std::vector<std::string> kept;
  for (const auto& name : step.manifest.files) {
    const fs::path file = dir / name;
    const auto st = fs::symlink_status(file, ec);
    if (ec || st.type() == fs::file_type::not_found) continue;
    if (st.type() != fs::file_type::regular && st.type() != fs::file_type::symlink) {
      kept.push_back(name);  // a folder or a device under a shard's name is not what ccbench wrote
      continue;
    }
    fs::remove(file, ec);
    if (ec) return fmt::format("kept {}: remove {}: {}", step.path, name, ec.message());
  }
  fs::remove(dir, ec);  // only an empty folder goes
  if (!ec) return "";
  return fmt::format("kept {}: it holds files its manifest does not list", step.path);
}

}  // namespace ccbench::checkpoint
