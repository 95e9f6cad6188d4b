"""What every measuring command's `--percentiles` rows must hold, for the integration tests of run,
fabric, congestion and replay: each level's value is NumPy's type-7 percentile of the row's own
samples, its interval SciPy's binomial order statistics (or null with the count it needs)."""
import numpy as np
from scipy import stats



def min_samples_for_ci(p):
    """The fewest samples whose equal-tailed 95% interval exists: max(p, 1 - p)^n <= 2.5%."""
    wider = max(p, 100 - p) / 100
    n = 1
    while wider ** n > 0.025:
        n += 1
    return n


def reference_ci(sorted_samples, p):
    n = len(sorted_samples)
    ks = np.arange(n)
    below = ks[stats.binom.cdf(ks, n, p / 100) <= 0.025]
    above = ks[stats.binom.sf(ks, n, p / 100) <= 0.025]
    if below.size == 0 or above.size == 0:
        return None
    return [sorted_samples[below.max()], sorted_samples[above.min()]]


def time_text(t):
    """The table's time format (report/console_table.cpp)."""
    return f"{t:.0f}" if t >= 1e4 else f"{t:.1f}" if t >= 100 else f"{t:.2f}"


def key(p):
    """A level's JSON key: 99 -> p99, 99.9 -> p99.9."""
    return "p" + (str(int(p)) if float(p).is_integer() else repr(float(p)))


def check_row(test, row, levels):
    """Every level of `row`'s percentiles_us against NumPy and SciPy on the row's samples_us; the
    p50 interval is the median's."""
    s = np.sort(row["samples_us"])
    test.assertEqual(sorted(row["percentiles_us"]), sorted(key(p) for p in levels))
    for p in levels:
        level = row["percentiles_us"][key(p)]
        test.assertAlmostEqual(level["value"], np.percentile(row["samples_us"], p), delta=1e-12 * s[-1])
        want = reference_ci(list(s), p)
        test.assertEqual(level["ci95"], want)
        if want is None:
            test.assertIn(str(min_samples_for_ci(p)), level["ci_absent"])
    if 50 in levels:
        test.assertEqual(row["percentiles_us"]["p50"]["ci95"], row["time_us"]["ci95"])
