// Verdicts that stay valid when a team asks again after adding launches (docs/compare.md "Asking
// again"). compare's "to decide: about N launches per side" invites adding launches and running
// compare again; each run is a look at the data, and stopping at the first decisive look inflates a
// one-look error rate (2.5% a side becomes 5-10% over 16 looks). The sequential rule replaces each
// one-sided level of a verdict (0.025 for the 95% interval's sides, 0.05 for the 90%'s, the gate's
// alpha) by the level at look n of a group-sequential boundary over looks at n = first_look, ...,
// kLastLook launches a side (Wang-Tsiatis, z_n = C (n / first_look)^(kShape - 1/2)): the level depends
// on the design and n alone, the look is the launch count (the smaller side's), and nothing is kept
// between calls.
// `--looks once` keeps the single-look levels for a launch count fixed in advance.
#pragma once

#include <optional>
#include <string_view>

namespace ccbench::compare {

enum class Looks { once, sequential };
std::string_view name(Looks looks);  // "once", "sequential"
std::optional<Looks> parse_looks(std::string_view text);

// The design's last look (launches a side); past it the boundary is held (asking beyond it is
// outside the design, and its error grows slowly there).
inline constexpr int kLastLook = 20;
// The boundary's shape: 1/2 is Pocock's constant z, 0 O'Brien-Fleming's; 3/4 rises as n^(1/4), which
// with the t quantiles of few launches keeps the boundary in t units nearly flat from 5 to 10
// launches a side (where teams decide) and spends little of the error late (docs/compare.md).
inline constexpr double kShape = 0.75;
// First looks the table holds: a claim's first look is its --min-trials (a verdict needs that many
// launches a side), clamped to [2, 5] (a later first look is covered conservatively by the 5 row);
// the gate's first look is 2 (1 launch against several carries about the information of 2 against 2).
inline constexpr int kMinFirstLook = 2;
inline constexpr int kMaxFirstLook = 5;

// The one-sided level at look `look` (launches a side) of the boundary that, asked at every look
// first_look..kLastLook, is crossed with probability `overall_tail` under the null (normal
// increments, information one launch a side a look). The first look's level is interpolated in
// log-log from the table in sequential.cpp (derived by numerical integration, checked against SciPy).
double per_look_level(double overall_tail, int first_look, int look);

// The inverse at look `look`: the overall tail of the boundary through per-look p-value
// `per_look_p`. A one-sided p-value turned into the probability that a test asked at every look
// would ever see one this extreme.
double sequential_p(double per_look_p, int first_look, int look);

// The rule a comparison decides by, as the verdict reports it.
struct LookRule {
  Looks looks = Looks::once;
  int first_look = 5;
  int last_look = kLastLook;
  int look = 5;  // this comparison's look: the smaller side's launches
  // The level used at this look where one look uses `tail` (identity under once), and at another.
  double per_look(double tail) const;
  double per_look_at(double tail, int launches) const;
  // A one-sided p-value as compared with alpha (identity under once).
  double p_value(double per_look_p) const;
};

// The rule for a claim (first look = min_trials) or the gate (first look 2) at a look.
LookRule look_rule(Looks looks, int first_look, int look);

}  // namespace ccbench::compare
