// The order of the set-up deadlines, one rule for every backend: the backend's own set-up timeout
// (NCCL's init timeout, libfabric's reachability probe) ends strictly before the run session's
// set-up watchdog, so the backend's clean ending (ncclCommAbort, its own message, exit 2) runs
// before the watchdog's `_Exit(3)` pre-empts it. See docs/method.md, "Deadlines".
#pragma once

#include <algorithm>

namespace ccbench {

// The set-up watchdog's deadline (0 = none): -T/--timeout, but at least `floor_s`, since -T is sized
// for one collective and a large job's set-up takes longer than that.
inline double setup_watchdog_s(double timeout_s, double floor_s) {
  return timeout_s > 0 ? std::max(timeout_s, floor_s) : 0.0;
}

// What a backend's own set-up step leaves the watchdog: a tenth of its deadline, at least 10 s
// (time for an abort, the message and the agreement between the ranks).
inline double setup_margin_s(double watchdog_s) { return std::max(10.0, watchdog_s / 10.0); }

// A backend's own set-up timeout `wanted_s` (0 = no limit of its own) under a set-up watchdog of
// `watchdog_s` (0 = none): unchanged without a watchdog, else cut to end `setup_margin_s` before it
// (and never 0 = unlimited, which the watchdog would pre-empt); at least half the watchdog's.
inline double inside_setup_watchdog_s(double wanted_s, double watchdog_s) {
  if (watchdog_s <= 0) return wanted_s;
  const double limit = std::max(watchdog_s / 2.0, watchdog_s - setup_margin_s(watchdog_s));
  return wanted_s > 0 ? std::min(wanted_s, limit) : limit;
}

}  // namespace ccbench
