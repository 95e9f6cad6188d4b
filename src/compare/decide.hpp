// Stage 5 of compare: the verdict. A closed set with one spelling each (the JSON and text form) and
// one exit code each (docs/verdict-format.md). `decide` picks not_comparable, the gate, the claim
// decision or no verdict from what the earlier stages found.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ccbench::compare {

enum class Verdict { none, confirmed, refuted, inconclusive, pass, regression, not_comparable };

// "none", "confirmed", "refuted", "inconclusive", "pass", "regression", "not_comparable".
std::string_view name(Verdict verdict);
std::optional<Verdict> parse_verdict(std::string_view text);

// 0 none/confirmed/pass, 1 refuted/regression, 3 not_comparable, 4 inconclusive (2 is bad input,
// which never reaches a verdict).
int exit_code(Verdict verdict);

struct Comparison;
struct CompareOptions;
struct MetadataReport;
struct Normalisation;

// Sets comparison.verdict, reason and trials_needed (and, under a gate, the gate's fields).
void decide(Comparison& comparison, const CompareOptions& options, const MetadataReport& metadata,
            const Normalisation& normalisation);

}  // namespace ccbench::compare
