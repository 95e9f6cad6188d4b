// The rule that blames a host for one metric of one stage (docs/screen.md, "Judging"): the host's
// tests beside hosts shown healthy against the fleet's reference tests, on a log scale, with the
// noise of both measured from the tests themselves. Pure arithmetic; the search (search.hpp) says
// which tests count and applies Holm's correction over every host it judges.
#pragma once

#include <optional>
#include <vector>

namespace ccbench::screen {

// Standard error of the median of n normal values in units of sigma / sqrt(n), measured by
// simulation (200,000 draws per n; docs/screen.md): 1.00 at n = 2 (the mean), 1.16 at 3, 1.22 at 7,
// 1.2533 (sqrt(pi / 2)) as n grows. Even n sit lower than odd (the median averages two values).
double median_se_factor(int n);

// The fleet's level of one metric: the median of the reference tests' ln(value), and the per-test
// noise pooled from the reference tests and from the repeated tests of the other hosts.
struct Reference {
  int tests = 0;            // reference tests
  double level_log = 0;     // median ln(value)
  double level_se_log = 0;  // median_se_factor(tests) * sigma_log / sqrt(tests)
  double sigma_log = 0;     // per-test noise: pooled standard deviation of ln(value)
  double df = 0;            // degrees of freedom of sigma_log
};

// nullopt with fewer than 2 reference tests, or no degree of freedom for the noise.
// groups: the ln values of each judged host outside the reference (their within-host spread adds
// to the pooled noise).
std::optional<Reference> make_reference(const std::vector<double>& reference_logs,
                                        const std::vector<std::vector<double>>& groups);

struct HostJudgement {
  int tests = 0;           // the host's tests that count (beside hosts shown healthy)
  double ratio = 1;        // exp(mean ln(value) - level): the host's value over the fleet's
  double worse_log = 0;    // ln(ratio) oriented so that > 0 is worse than the fleet
  double se_log = 0;       // standard error of ln(ratio): the host's noise and the reference's
  double df = 0;           // of se_log: the pooled noise's, also when own_noise
  bool own_noise = false;  // the host's own spread was larger than the fleet's and was used
  double p_value = 1;      // one-sided: the host is no worse than the fleet
};

// higher_is_better: busbw (a lower ratio is worse); latency: a higher one. Needs logs non-empty.
HostJudgement judge_host(const Reference& ref, const std::vector<double>& logs, bool higher_is_better);

// The one-sided t quantile at level alpha with df degrees of freedom (the Bonferroni level of a
// family is alpha / hypotheses).
double t_critical(double alpha, double df);

// Holm's step-down: which of the p-values are rejected at family-wise level alpha.
std::vector<bool> holm_reject(const std::vector<double>& p_values, double alpha);

}  // namespace ccbench::screen
