#include "compare/step.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/replay_fields.hpp"

namespace ccbench::compare {

namespace {

constexpr const char* kWhat = "--statistic step";

bool has_step_row(const ResultFile& f) {
  return std::any_of(f.results.begin(), f.results.end(), [](const ResultRow& r) { return r.op == kReplayStepOp; });
}

// config.replay.trace_sha256, or "" when the file has none.
std::string trace_digest(const ResultFile& f) {
  const auto replay = f.config.find(kReplayConfigKey);
  if (replay == f.config.end() || !replay->is_object()) return "";
  const auto digest = replay->find(kReplayTraceSha256Key);
  return digest != replay->end() && digest->is_string() ? digest->get<std::string>() : "";
}

std::string trace_path(const ResultFile& f) {
  const auto replay = f.config.find(kReplayConfigKey);
  if (replay == f.config.end() || !replay->is_object()) return "?";
  return replay->value("trace", std::string("?"));
}

}  // namespace

std::string check_step_sides(const Side& baseline, const Side& candidate) {
  const ResultFile* first = nullptr;
  std::string digest;
  for (const Side* side : {&baseline, &candidate}) {
    for (const ResultFile& f : side->files) {
      if (!has_step_row(f))
        throw UsageError(fmt::format("{}: {}: no {} row (the step row of a `ccbench replay` result file)", kWhat,
                                     f.source, kReplayStepOp));
      const std::string d = trace_digest(f);
      if (d.empty())
        throw UsageError(
            fmt::format("{}: {}: no config.{}.{} (the identity of the trace replayed; ccbench replay "
                        "writes it: replay the trace again)",
                        kWhat, f.source, kReplayConfigKey, kReplayTraceSha256Key));
      if (first == nullptr) {
        first = &f;
        digest = d;
      } else if (d != digest) {
        throw UsageError(fmt::format(
            "{}: {} replayed another trace than {} (config.{}.{} {} vs {}; traces {} and {}): a step compares "
            "replays of one trace",
            kWhat, f.source, first->source, kReplayConfigKey, kReplayTraceSha256Key, d, digest, trace_path(f),
            trace_path(*first)));
      }
    }
  }
  return digest;
}

Scope step_scope(const Scope& flags, const Claim* claim) {
  const Scope all;
  const bool narrowed = !flags.ops.empty() || flags.min_bytes != all.min_bytes || flags.max_bytes != all.max_bytes;
  if (narrowed)
    throw UsageError(
        fmt::format("{} compares the step row alone: --ops, --min-bytes and --max-bytes do not apply", kWhat));
  if (claim && (!claim->ops.empty() || claim->min_bytes || claim->max_bytes))
    throw UsageError(
        fmt::format("{}: statistic step compares the step row alone: its ops, min_bytes and max_bytes "
                    "do not apply",
                    claim->file.empty() ? std::string("the claim") : claim->file));
  Scope s;
  s.ops = {std::string(kReplayStepOp)};
  return s;
}

}  // namespace ccbench::compare
