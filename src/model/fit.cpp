#include "model/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <tuple>
#include <utility>

#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/percentiles.hpp"
#include "core/run_metadata.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "model/model_impl.hpp"
#include "system/instance_profile.hpp"

namespace ccbench::model {

std::string_view name(Steps steps) { return steps == Steps::nodes ? "nodes" : "log2_nodes"; }

double steps_of(Steps steps, int nodes) {
  const double n = std::max(1, nodes);
  return steps == Steps::nodes ? n - 1.0 : std::log2(n);
}

double regime_time_us(const Regime& r, const Traffic& x) {
  return r.latency_us + r.step_us * steps_of(r.steps, x.nodes) + x.bus_bytes * r.us_per_byte +
         x.net_bytes * r.us_per_net_byte;
}

double envelope_time_us(const std::vector<Regime>& regimes, const Traffic& x) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& r : regimes) best = std::min(best, regime_time_us(r, x));
  return best;
}

double network_factor(Op op, int nodes) {
  if (nodes <= 1) return 0;  // one node: NVLink (or shared memory) alone
  // Across nodes a collective's share is its bus factor over the node count: allreduce 2(n-1)/n
  // (reduce-scatter and all-gather of the node's data), all-gather, reduce-scatter and all-to-all
  // (n-1)/n (the other nodes' share), broadcast 1 (every node receives S once).
  return bus_factor(op, nodes);
}

bool modelled_by_most_loaded_rank(Op op) { return info(op).buffers == OpBuffers::matrix; }

double curve_busbw_gbps(Op op, int ranks, std::uint64_t bytes, double time_us) {
  return modelled_by_most_loaded_rank(op) ? algbw_gbps(bytes, time_us) : busbw_gbps(op, ranks, bytes, time_us);
}

Traffic traffic(Op op, std::uint64_t bytes, int nodes, int ranks_per_node) {
  Traffic x;
  x.nodes = std::max(1, nodes);
  const int p = x.nodes * std::max(1, ranks_per_node);
  // A matrix op's L is already one rank's link bytes; its network share stays (N-1)/N (an even
  // spread of that rank's peers over the nodes).
  double f = modelled_by_most_loaded_rank(op) ? 1.0 : bus_factor(op, p);
  if (f <= 0) f = 1;  // one rank: keep the bytes term meaningful
  x.bus_bytes = static_cast<double>(bytes) * f;
  x.net_bytes = static_cast<double>(bytes) * network_factor(op, x.nodes);
  return x;
}

// ---------------------------------------------------------------------------------------------
// Run metadata, through its one owner (core/run_metadata).

RunFacts run_facts(const ResultFile& file) {
  const RunMetadata meta(file);
  RunFacts f;
  const auto positive_int = [](std::optional<std::int64_t> v) {
    return v && *v > 0 && *v <= std::numeric_limits<int>::max() ? static_cast<int>(*v) : 0;
  };
  f.nodes = positive_int(meta.nodes());
  f.ranks_per_node = positive_int(meta.ranks_per_node());
  const std::string instance = meta.instance_type().value_or("");
  const std::string label = meta.label().value_or("");
  const std::string path = meta.fabric_path().value_or("");
  const auto profile = system::find_instance_profile(instance);
  if (profile) {
    f.profile = instance;
    f.spec_gbps = profile->efa_gbps;
  } else if (!label.empty()) {
    f.profile = label;
  } else if (!path.empty()) {
    f.profile = path;
  } else if (!instance.empty()) {
    f.profile = instance;
  } else {
    f.profile = "unknown";
  }
  if (f.spec_gbps <= 0) f.spec_gbps = meta.link_gbps().value_or(0.0);
  return f;
}

namespace {

// A row's `percentiles_us` level (docs/result-format.md): its value and, when it has one, its 95%
// interval on log scale as a sigma. nullopt: the row does not carry the level.
std::optional<std::pair<double, double>> percentile_time(const ResultRow& row, double percent) {
  const auto all = row.extra.find("percentiles_us");
  if (all == row.extra.end() || !all->is_object()) return std::nullopt;
  const auto level = all->find(percentiles::key(percent));
  if (level == all->end() || !level->is_object()) return std::nullopt;
  const auto value = level->find("value");
  if (value == level->end() || !value->is_number()) return std::nullopt;
  double sigma_log = 0;
  if (const auto ci = level->find("ci95");
      ci != level->end() && ci->is_array() && ci->size() == 2 && (*ci)[0].is_number() && (*ci)[1].is_number()) {
    const double lo = (*ci)[0].get<double>(), hi = (*ci)[1].get<double>();
    if (lo > 0 && hi > lo) sigma_log = (std::log(hi) - std::log(lo)) / (2 * 1.96);
  }
  return std::pair{value->get<double>(), sigma_log};
}

}  // namespace

std::vector<Observation> observations(const ResultFile& file, double percentile) {
  const RunFacts facts = run_facts(file);
  std::vector<Observation> out;
  out.reserve(file.results.size());
  for (const auto& row : file.results) {
    const auto op = parse_op(row.op);
    if (!op || row.ranks < 2 || row.bytes == 0) continue;
    // A row of concurrent groups (--groups) is one group's time beside its neighbours' traffic, not
    // the time of the job's one communicator that the curve models (docs/model.md).
    if (row_groups(row) != "none") continue;
    std::uint64_t bytes = row.bytes;
    if (modelled_by_most_loaded_rank(*op)) {
      // Without the matrix's most loaded rank the row cannot be placed on the curve (traffic of
      // one mean size can be any imbalance).
      const auto m = row.extra.find("matrix");
      if (m == row.extra.end() || !m->is_object()) continue;
      const auto l = m->find("most_loaded_off_rank_bytes");
      if (l == m->end() || !l->is_number_unsigned() || l->get<std::uint64_t>() == 0) continue;
      bytes = l->get<std::uint64_t>();
    }
    Observation o;
    o.op = *op;
    o.profile = facts.profile;
    o.nodes = facts.nodes > 0 ? facts.nodes : 1;
    o.ranks_per_node = facts.ranks_per_node > 0 ? facts.ranks_per_node : std::max(1, row.ranks / o.nodes);
    o.bytes = bytes;
    if (percentile > 0) {
      const auto level = percentile_time(row, percentile);
      if (!level) continue;
      std::tie(o.time_us, o.sigma_log) = *level;
      if (!(o.time_us > 0) || !std::isfinite(o.time_us)) continue;
    } else {
      o.time_us = row.time_us.median;
      if (!(o.time_us > 0) && !row.samples_us.empty()) {
        auto s = row.samples_us;
        std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
        o.time_us = s[s.size() / 2];
      }
      if (!(o.time_us > 0) || !std::isfinite(o.time_us)) continue;
      if (row.time_us.ci95_lo > 0 && row.time_us.ci95_hi > row.time_us.ci95_lo)
        o.sigma_log = (std::log(row.time_us.ci95_hi) - std::log(row.time_us.ci95_lo)) / (2 * 1.96);
    }
    o.spec_gbps = facts.spec_gbps;
    o.dtype = row.dtype;
    o.file = file.source;
    out.push_back(std::move(o));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The fit.

namespace {

constexpr double kSigmaFloor = 0.03;  // model error allowed on top of a row's own CI (log scale)
constexpr double kHuber = 1.345;
constexpr double kPenalty = 1e30;

struct Point {
  Traffic x;
  int node_idx = 0;
  int size_idx = 0;
  double t = 0;
  double logt = 0;
  double s2 = 0;  // sigma^2 on log scale, floor included
};

struct Data {
  std::vector<Point> pts;
  std::vector<int> node_values;      // distinct, sorted
  std::vector<std::uint64_t> sizes;  // distinct, sorted
};

// Fit state over a subset of points: multiplicity (0 = not used) and robust weight per point.
struct Work {
  const Data* data = nullptr;
  std::vector<double> mult;
  std::vector<double> t;  // possibly perturbed times (refits)
  std::vector<double> logt;
  std::vector<double> robust;
};

double huber_rho(double z) {
  const double a = std::abs(z);
  return a <= kHuber ? 0.5 * z * z : kHuber * (a - 0.5 * kHuber);
}

// Solves the k x k system (row-major, k <= 4) by Gaussian elimination with partial pivoting.
bool solve(std::array<double, 16> a, std::array<double, 4> b, int k, std::array<double, 4>& x) {
  for (int c = 0; c < k; ++c) {
    int piv = c;
    for (int r = c + 1; r < k; ++r)
      if (std::abs(a[static_cast<std::size_t>(r * 4 + c)]) > std::abs(a[static_cast<std::size_t>(piv * 4 + c)]))
        piv = r;
    if (std::abs(a[static_cast<std::size_t>(piv * 4 + c)]) < 1e-12) return false;
    if (piv != c) {
      for (int j = 0; j < k; ++j)
        std::swap(a[static_cast<std::size_t>(c * 4 + j)], a[static_cast<std::size_t>(piv * 4 + j)]);
      std::swap(b[static_cast<std::size_t>(c)], b[static_cast<std::size_t>(piv)]);
    }
    for (int r = c + 1; r < k; ++r) {
      const double f = a[static_cast<std::size_t>(r * 4 + c)] / a[static_cast<std::size_t>(c * 4 + c)];
      for (int j = c; j < k; ++j) a[static_cast<std::size_t>(r * 4 + j)] -= f * a[static_cast<std::size_t>(c * 4 + j)];
      b[static_cast<std::size_t>(r)] -= f * b[static_cast<std::size_t>(c)];
    }
  }
  for (int r = k - 1; r >= 0; --r) {
    double s = b[static_cast<std::size_t>(r)];
    for (int j = r + 1; j < k; ++j) s -= a[static_cast<std::size_t>(r * 4 + j)] * x[static_cast<std::size_t>(j)];
    x[static_cast<std::size_t>(r)] = s / a[static_cast<std::size_t>(r * 4 + r)];
  }
  return true;
}

// Non-negative least squares on a normal-equation system of up to 4 unknowns, by trying every
// subset of free columns (at most 15): exact and cheap at this size.
std::array<double, 4> nnls(const std::array<double, 16>& A, const std::array<double, 4>& b, double c, unsigned active) {
  std::array<double, 4> best{};
  double best_obj = std::numeric_limits<double>::infinity();
  for (unsigned mask = 1; mask < 16; ++mask) {
    if ((mask & ~active) != 0) continue;
    std::array<int, 4> idx{};
    int k = 0;
    for (int j = 0; j < 4; ++j)
      if (mask & (1u << j)) idx[static_cast<std::size_t>(k++)] = j;
    std::array<double, 16> a{};
    std::array<double, 4> bb{};
    for (int r = 0; r < k; ++r) {
      for (int s = 0; s < k; ++s)
        a[static_cast<std::size_t>(r * 4 + s)] =
            A[static_cast<std::size_t>(idx[static_cast<std::size_t>(r)] * 4 + idx[static_cast<std::size_t>(s)])];
      bb[static_cast<std::size_t>(r)] = b[static_cast<std::size_t>(idx[static_cast<std::size_t>(r)])];
    }
    std::array<double, 4> xs{};
    if (!solve(a, bb, k, xs)) continue;
    bool ok = true;
    for (int r = 0; r < k; ++r) ok = ok && xs[static_cast<std::size_t>(r)] >= 0;
    if (!ok) continue;
    std::array<double, 4> x{};
    for (int r = 0; r < k; ++r)
      x[static_cast<std::size_t>(idx[static_cast<std::size_t>(r)])] = xs[static_cast<std::size_t>(r)];
    // objective x'Ax - 2b'x + c
    double obj = c;
    for (int i = 0; i < 4; ++i) {
      obj -= 2 * b[static_cast<std::size_t>(i)] * x[static_cast<std::size_t>(i)];
      for (int j = 0; j < 4; ++j)
        obj += x[static_cast<std::size_t>(i)] * A[static_cast<std::size_t>(i * 4 + j)] * x[static_cast<std::size_t>(j)];
    }
    if (obj < best_obj) {
      best_obj = obj;
      best = x;
    }
  }
  return best;
}

Regime from_coefficients(const std::array<double, 4>& x, const std::array<double, 4>& scale, Steps steps) {
  Regime r;
  r.latency_us = x[0] * scale[0];
  r.step_us = x[1] * scale[1];
  r.us_per_byte = x[2] * scale[2];
  r.us_per_net_byte = x[3] * scale[3];
  r.steps = steps;
  return r;
}

// Weighted objective of one regime on its points, on log time.
double regime_objective(const Work& w, const std::vector<int>& idx, const Regime& r) {
  double obj = 0;
  for (int i : idx) {
    const auto& p = w.data->pts[static_cast<std::size_t>(i)];
    const double pred = regime_time_us(r, p.x);
    if (!(pred > 0)) return kPenalty;
    const double res = w.logt[static_cast<std::size_t>(i)] - std::log(pred);
    obj += w.mult[static_cast<std::size_t>(i)] * w.robust[static_cast<std::size_t>(i)] * res * res / p.s2;
  }
  return obj;
}

// Fits one regime on the points `idx` by iteratively reweighted least squares on relative error
// (which approximates least squares on log time), with non-negative coefficients. The node-count
// terms are used only when the points span at least two node counts; the step shape (log2 N or
// N - 1) is chosen by the objective when they span three.
Regime fit_regime(const Work& w, const std::vector<int>& idx, const Regime* start, int iterations) {
  std::set<int> nodes_seen;
  for (int i : idx) nodes_seen.insert(w.data->pts[static_cast<std::size_t>(i)].x.nodes);
  const bool node_terms = nodes_seen.size() >= 2;
  std::vector<Steps> shapes{Steps::log2_nodes};
  if (nodes_seen.size() >= 3) shapes.push_back(Steps::nodes);
  if (start && node_terms && nodes_seen.size() >= 3 && iterations <= 2) shapes = {start->steps};
  const unsigned active = node_terms ? 0xFu : 0x5u;

  Regime best;
  double best_obj = std::numeric_limits<double>::infinity();
  for (Steps shape : shapes) {
    // column scales so the normal equations are well conditioned
    std::array<double, 4> scale{1, 1, 1, 1};
    {
      std::array<double, 4> ss{};
      double tt = 0;
      for (int i : idx) {
        const auto& p = w.data->pts[static_cast<std::size_t>(i)];
        const double t = w.t[static_cast<std::size_t>(i)];
        const std::array<double, 4> x{1.0, steps_of(shape, p.x.nodes), p.x.bus_bytes, p.x.net_bytes};
        for (int j = 0; j < 4; ++j)
          ss[static_cast<std::size_t>(j)] += x[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(j)] / (t * t);
        tt += 1;
      }
      for (int j = 0; j < 4; ++j)
        scale[static_cast<std::size_t>(j)] =
            ss[static_cast<std::size_t>(j)] > 0 ? 1.0 / std::sqrt(ss[static_cast<std::size_t>(j)] / tt) : 1.0;
    }
    Regime cur;
    bool have = false;
    if (start) {
      cur = *start;
      cur.steps = shape;
      have = true;
    }
    for (int it = 0; it < iterations; ++it) {
      std::array<double, 16> A{};
      std::array<double, 4> b{};
      double c = 0;
      for (int i : idx) {
        const auto& p = w.data->pts[static_cast<std::size_t>(i)];
        const double t = w.t[static_cast<std::size_t>(i)];
        double ref = t;
        if (have) {
          const double pred = regime_time_us(cur, p.x);
          if (pred > 0) ref = pred;
        }
        const double wt =
            w.mult[static_cast<std::size_t>(i)] * w.robust[static_cast<std::size_t>(i)] / (p.s2 * ref * ref);
        if (wt <= 0) continue;
        const std::array<double, 4> x{1.0 * scale[0], steps_of(shape, p.x.nodes) * scale[1], p.x.bus_bytes * scale[2],
                                      p.x.net_bytes * scale[3]};
        for (int r = 0; r < 4; ++r) {
          b[static_cast<std::size_t>(r)] += wt * x[static_cast<std::size_t>(r)] * t;
          for (int s = 0; s < 4; ++s)
            A[static_cast<std::size_t>(r * 4 + s)] +=
                wt * x[static_cast<std::size_t>(r)] * x[static_cast<std::size_t>(s)];
        }
        c += wt * t * t;
      }
      cur = from_coefficients(nnls(A, b, c, active), scale, shape);
      have = true;
    }
    const double obj = regime_objective(w, idx, cur);
    if (obj < best_obj) {
      best_obj = obj;
      best = cur;
    }
  }
  return best;
}

struct EnvelopeFit {
  std::vector<Regime> regimes;
  double loss = std::numeric_limits<double>::infinity();  // sum of mult * huber(residual / sigma)
  double wrss = 0;                                        // sum of mult * robust * (residual / sigma)^2
  double n = 0;                                           // sum of mult
  bool degenerate = false;                                // a regime is the cheapest at fewer than 3 (size, node) cells
};

// Evaluates the envelope: loss, assignment and robust weights.
EnvelopeFit evaluate(Work& w, const std::vector<Regime>& regimes, std::vector<int>* assign, bool update_robust) {
  EnvelopeFit f;
  f.regimes = regimes;
  f.loss = 0;
  std::vector<std::set<int>> owned(regimes.size());
  for (std::size_t i = 0; i < w.data->pts.size(); ++i) {
    if (w.mult[i] <= 0) continue;
    const auto& p = w.data->pts[i];
    double best = std::numeric_limits<double>::infinity();
    int arg = 0;
    for (std::size_t k = 0; k < regimes.size(); ++k) {
      const double t = regime_time_us(regimes[k], p.x);
      if (t < best) {
        best = t;
        arg = static_cast<int>(k);
      }
    }
    if (assign) (*assign)[i] = arg;
    owned[static_cast<std::size_t>(arg)].insert(p.size_idx * 1024 + p.node_idx);  // one cell per (size, node count)
    if (!(best > 0)) {
      f.loss = kPenalty;
      continue;
    }
    const double z = (w.logt[i] - std::log(best)) / std::sqrt(p.s2);
    if (update_robust) w.robust[i] = std::abs(z) <= kHuber ? 1.0 : kHuber / std::abs(z);
    f.loss += w.mult[i] * huber_rho(z);
    f.wrss += w.mult[i] * w.robust[i] * z * z;
    f.n += w.mult[i];
  }
  for (const auto& o : owned) f.degenerate = f.degenerate || o.size() < 3;
  return f;
}

// Hard-assignment alternation: fit each regime on the points where it is the cheapest, reassign.
EnvelopeFit refine(Work& w, std::vector<Regime> regimes, std::vector<int> assign, int rounds, int irls) {
  EnvelopeFit best;
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::vector<int>> idx(regimes.size());
    for (std::size_t i = 0; i < w.data->pts.size(); ++i)
      if (w.mult[i] > 0) idx[static_cast<std::size_t>(assign[i])].push_back(static_cast<int>(i));
    for (std::size_t k = 0; k < regimes.size(); ++k) {
      if (idx[k].size() < 2) continue;  // keep the previous parameters
      regimes[k] = fit_regime(w, idx[k], &regimes[k], irls);
    }
    std::vector<int> next(assign.size(), 0);
    EnvelopeFit f = evaluate(w, regimes, &next, true);
    if (f.loss < best.loss) best = f;
    if (next == assign) break;
    assign = std::move(next);
  }
  return best;
}

// Orders regimes by their bandwidth term, steepest first (the latency regime, then bandwidth ones).
void order_regimes(std::vector<Regime>& r) {
  std::sort(r.begin(), r.end(), [](const Regime& a, const Regime& b) { return a.us_per_byte > b.us_per_byte; });
}

// The full fit with K regimes: every contiguous split of the sizes into K segments starts a
// fit (coarser for K = 3), the best few are refined by alternation.
EnvelopeFit fit_k(Work& w, int k) {
  const int m = static_cast<int>(w.data->sizes.size());
  std::vector<int> used_size(static_cast<std::size_t>(m), 0);
  for (std::size_t i = 0; i < w.data->pts.size(); ++i)
    if (w.mult[i] > 0) used_size[static_cast<std::size_t>(w.data->pts[i].size_idx)] = 1;
  std::vector<int> present;  // size indices present in this subset
  for (int s = 0; s < m; ++s)
    if (used_size[static_cast<std::size_t>(s)]) present.push_back(s);
  const int mp = static_cast<int>(present.size());
  std::vector<std::vector<int>> splits;  // boundaries as positions in `present`
  if (k == 1) {
    splits.push_back({});
  } else if (k == 2) {
    for (int b = 2; b <= mp - 2; ++b) splits.push_back({b});
  } else {
    const int step = mp > 16 ? 2 : 1;
    for (int b1 = 2; b1 <= mp - 4; b1 += step)
      for (int b2 = b1 + 2; b2 <= mp - 2; b2 += step) splits.push_back({b1, b2});
  }
  if (splits.empty()) return {};
  std::fill(w.robust.begin(), w.robust.end(), 1.0);
  struct Start {
    double loss;
    std::vector<Regime> regimes;
    std::vector<int> assign;
  };
  std::vector<Start> starts;
  std::vector<int> pos_of(static_cast<std::size_t>(m), 0);
  for (int j = 0; j < mp; ++j) pos_of[static_cast<std::size_t>(present[static_cast<std::size_t>(j)])] = j;
  for (const auto& split : splits) {
    std::vector<int> assign(w.data->pts.size(), 0);
    std::vector<std::vector<int>> idx(static_cast<std::size_t>(k));
    for (std::size_t i = 0; i < w.data->pts.size(); ++i) {
      if (w.mult[i] <= 0) continue;
      const int pos = pos_of[static_cast<std::size_t>(w.data->pts[i].size_idx)];
      int seg = 0;
      for (int b : split) seg += pos >= b ? 1 : 0;
      assign[i] = seg;
      idx[static_cast<std::size_t>(seg)].push_back(static_cast<int>(i));
    }
    std::vector<Regime> regimes(static_cast<std::size_t>(k));
    for (int s = 0; s < k; ++s)
      regimes[static_cast<std::size_t>(s)] = fit_regime(w, idx[static_cast<std::size_t>(s)], nullptr, 2);
    const EnvelopeFit f = evaluate(w, regimes, nullptr, false);
    starts.push_back({f.loss, regimes, assign});
  }
  std::sort(starts.begin(), starts.end(), [](const Start& a, const Start& b) { return a.loss < b.loss; });
  EnvelopeFit best;
  for (std::size_t s = 0; s < std::min<std::size_t>(3, starts.size()); ++s) {
    std::fill(w.robust.begin(), w.robust.end(), 1.0);
    EnvelopeFit f = refine(w, starts[s].regimes, starts[s].assign, 12, 3);
    if (f.loss < best.loss) best = f;
  }
  order_regimes(best.regimes);
  return best;
}

int free_parameters(const std::vector<Regime>& regimes, int node_count) {
  // latency and bytes terms per regime, plus the two node terms when node counts vary
  return static_cast<int>(regimes.size()) * (node_count >= 2 ? 4 : 2);
}

double bic_of(const EnvelopeFit& f, int params) {
  if (f.n <= 0 || !std::isfinite(f.loss)) return std::numeric_limits<double>::infinity();
  const double rss = std::max(f.wrss, 1e-12);
  return f.n * std::log(rss / f.n) + params * std::log(f.n);
}

Work make_work(const Data& d) {
  Work w;
  w.data = &d;
  w.mult.assign(d.pts.size(), 1.0);
  w.robust.assign(d.pts.size(), 1.0);
  for (const auto& p : d.pts) {
    w.t.push_back(p.t);
    w.logt.push_back(p.logt);
  }
  return w;
}

// Refits from the full fit's regimes on a resampled data set (warm start, a few rounds).
std::vector<Regime> refit_warm(Work& w, const std::vector<Regime>& start) {
  std::vector<int> assign(w.data->pts.size(), 0);
  std::fill(w.robust.begin(), w.robust.end(), 1.0);
  evaluate(w, start, &assign, true);
  EnvelopeFit f = refine(w, start, assign, 6, 2);
  if (f.regimes.empty()) return start;
  return f.regimes;  // regime identity is kept by the warm start: no reordering
}

struct GroupKey {
  Op op;
  std::string profile;
  int ranks_per_node;
  auto operator<=>(const GroupKey&) const = default;
};

double robust_sigma(std::vector<double> v) {
  if (v.empty()) return -1;
  for (double& x : v) x = std::abs(x);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return 1.4826 * v[v.size() / 2];
}

double rms(const std::vector<double>& v) {
  if (v.empty()) return -1;
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

Group fit_group(const GroupKey& key, const std::vector<const Observation*>& rows, const FitOptions& opt) {
  Group g;
  g.op = key.op;
  g.profile = key.profile;
  g.ranks_per_node = key.ranks_per_node;
  Data d;
  std::set<int> nodes;
  std::set<std::uint64_t> sizes;
  std::set<std::string> dtypes;
  for (const auto* o : rows) {
    nodes.insert(o->nodes);
    sizes.insert(o->bytes);
    g.spec_gbps = std::max(g.spec_gbps, o->spec_gbps);
    if (!o->dtype.empty()) dtypes.insert(o->dtype);
  }
  g.dtypes.assign(dtypes.begin(), dtypes.end());
  d.node_values.assign(nodes.begin(), nodes.end());
  d.sizes.assign(sizes.begin(), sizes.end());
  if (d.sizes.size() < 2) {
    std::set<std::string> files;
    for (const auto* o : rows) files.insert(o->file);
    throw UsageError(
        fmt::format("{}: results/bytes: {} on {} ({} ranks per node) has one size only ({}); model fit "
                    "needs at least 2 sizes",
                    *files.begin(), name(key.op), key.profile, key.ranks_per_node, format_bytes(*sizes.begin())));
  }
  for (const auto* o : rows) {
    Point p;
    p.x = traffic(o->op, o->bytes, o->nodes, o->ranks_per_node);
    p.node_idx = static_cast<int>(std::lower_bound(d.node_values.begin(), d.node_values.end(), o->nodes) -
                                  d.node_values.begin());
    p.size_idx = static_cast<int>(std::lower_bound(d.sizes.begin(), d.sizes.end(), o->bytes) - d.sizes.begin());
    p.t = o->time_us;
    p.logt = std::log(o->time_us);
    p.s2 = o->sigma_log * o->sigma_log + kSigmaFloor * kSigmaFloor;
    d.pts.push_back(p);
  }
  g.nodes = d.node_values;
  g.bytes_min = d.sizes.front();
  g.bytes_max = d.sizes.back();
  g.bytes_by_nodes.assign(g.nodes.size(), {std::numeric_limits<std::uint64_t>::max(), 0});
  for (const auto* o : rows) {
    auto& range = g.bytes_by_nodes[static_cast<std::size_t>(std::lower_bound(g.nodes.begin(), g.nodes.end(), o->nodes) -
                                                            g.nodes.begin())];
    range = {std::min(range[0], o->bytes), std::max(range[1], o->bytes)};
  }
  g.rows = static_cast<int>(d.pts.size());
  const int node_count = static_cast<int>(d.node_values.size());

  // Number of regimes by BIC.
  Work w = make_work(d);
  EnvelopeFit chosen;
  int chosen_k = 0;
  double best_bic = std::numeric_limits<double>::infinity();
  for (int k = 1; k <= opt.max_regimes; ++k) {
    EnvelopeFit f = fit_k(w, k);
    const double bic =
        f.regimes.empty() ? std::numeric_limits<double>::infinity() : bic_of(f, free_parameters(f.regimes, node_count));
    g.bic.push_back(std::isfinite(bic) ? bic : std::numeric_limits<double>::quiet_NaN());
    if (f.regimes.empty() || (k > 1 && f.degenerate)) {
      g.bic.back() = std::numeric_limits<double>::quiet_NaN();  // not a candidate
      continue;
    }
    if (bic < best_bic) {
      best_bic = bic;
      chosen = f;
      chosen_k = k;
    }
  }
  g.bic.resize(static_cast<std::size_t>(opt.max_regimes), std::numeric_limits<double>::quiet_NaN());
  if (chosen.regimes.empty()) {
    std::set<std::string> files;
    for (const auto* o : rows) files.insert(o->file);
    throw UsageError(fmt::format("{}: results: {} on {} ({} ranks per node): no fit converged", *files.begin(),
                                 name(key.op), key.profile, key.ranks_per_node));
  }
  g.regimes = chosen.regimes;

  // In-sample residuals.
  std::vector<double> resid;
  for (const auto& p : d.pts) resid.push_back(p.logt - std::log(envelope_time_us(g.regimes, p.x)));
  g.resid_rms_log = rms(resid);
  g.resid_sigma_log = robust_sigma(resid);

  // Refits over resampled trials: cells (node count, size) with 5 or more trials draw them with
  // replacement; a cell with fewer (a bootstrap of 3 trials underestimates their spread) keeps its
  // rows and flips each row's residual at random (wild bootstrap, Rademacher signs).
  std::map<std::pair<int, int>, std::vector<int>> cells;
  for (std::size_t i = 0; i < d.pts.size(); ++i)
    cells[{d.pts[i].node_idx, d.pts[i].size_idx}].push_back(static_cast<int>(i));
  std::mt19937_64 rng(opt.seed ^ std::hash<std::string>{}(key.profile) ^ (static_cast<std::uint64_t>(key.op) << 32) ^
                      static_cast<std::uint64_t>(key.ranks_per_node));
  for (int b = 0; b < opt.refits; ++b) {
    Work rw = make_work(d);
    std::fill(rw.mult.begin(), rw.mult.end(), 0.0);
    for (const auto& [cell, members] : cells) {
      if (members.size() >= 5) {
        std::uniform_int_distribution<std::size_t> pick(0, members.size() - 1);
        for (std::size_t j = 0; j < members.size(); ++j) rw.mult[static_cast<std::size_t>(members[pick(rng)])] += 1;
      } else {
        for (int m : members) {
          const auto i = static_cast<std::size_t>(m);
          rw.mult[i] = 1;
          const double sign = (rng() & 1u) ? 1.0 : -1.0;
          rw.logt[i] = std::log(envelope_time_us(g.regimes, d.pts[i].x)) + sign * resid[i];
          rw.t[i] = std::exp(rw.logt[i]);
        }
      }
    }
    g.refits.push_back(refit_warm(rw, g.regimes));
  }

  if (opt.cross_validate) {
    // Leave one node count out: the full procedure (K fixed) on the others.
    if (node_count >= 2) {
      std::vector<double> all, up, down;
      for (int held = 0; held < node_count; ++held) {
        Work cw = make_work(d);
        for (std::size_t i = 0; i < d.pts.size(); ++i) cw.mult[i] = d.pts[i].node_idx == held ? 0.0 : 1.0;
        EnvelopeFit f = fit_k(cw, chosen_k);
        if (f.regimes.empty()) f = fit_k(cw, 1);
        if (f.regimes.empty()) continue;
        CvNode cv;
        cv.nodes = d.node_values[static_cast<std::size_t>(held)];
        cv.extrapolated = held == 0 || held == node_count - 1;
        // sizes the training set spans: only those rows measure extrapolation in nodes alone
        int train_lo = std::numeric_limits<int>::max(), train_hi = -1;
        for (std::size_t i = 0; i < d.pts.size(); ++i)
          if (cw.mult[i] > 0) {
            train_lo = std::min(train_lo, d.pts[i].size_idx);
            train_hi = std::max(train_hi, d.pts[i].size_idx);
          }
        std::vector<double> errs;
        for (const auto& p : d.pts) {
          if (p.node_idx != held) continue;
          const double e = std::log(envelope_time_us(f.regimes, p.x)) - p.logt;
          errs.push_back(e);
          all.push_back(e);
          if (p.size_idx >= train_lo && p.size_idx <= train_hi) {
            if (held == node_count - 1) up.push_back(e);
            if (held == 0) down.push_back(e);
          }
          cv.max_abs_log = std::max(cv.max_abs_log, std::abs(e));
        }
        cv.rms_log = rms(errs);
        cv.rows = static_cast<int>(errs.size());
        g.cv_nodes.push_back(cv);
      }
      g.cv_node_rms_log = rms(all);
      // The RMS, not a robust sigma: an algorithm switch the held-out count has and the others do
      // not is a large error on a few sizes, and exactly what the next node count may do too.
      const auto& nv = d.node_values;
      if (!up.empty()) {
        g.cv_node_up_sigma_log = rms(up);
        g.cv_node_up_reach_log2 = std::log2(static_cast<double>(nv[nv.size() - 1]) / nv[nv.size() - 2]);
      }
      if (!down.empty()) {
        g.cv_node_down_sigma_log = rms(down);
        g.cv_node_down_reach_log2 = std::log2(static_cast<double>(nv[1]) / nv[0]);
      }
      g.cv_node_sigma_log = robust_sigma(all);
    }
    // Held-out sizes: interior sizes in 5 folds.
    const int m = static_cast<int>(d.sizes.size());
    if (m >= 2 * chosen_k + 3) {
      std::vector<double> all;
      const int folds = std::min(5, m - 2);
      for (int fold = 0; fold < folds; ++fold) {
        Work cw = make_work(d);
        bool any = false;
        for (std::size_t i = 0; i < d.pts.size(); ++i) {
          const int s = d.pts[i].size_idx;
          const bool held = s > 0 && s < m - 1 && (s - 1) % folds == fold;
          cw.mult[i] = held ? 0.0 : 1.0;
          any = any || held;
        }
        if (!any) continue;
        EnvelopeFit f = fit_k(cw, chosen_k);
        if (f.regimes.empty()) continue;
        for (std::size_t i = 0; i < d.pts.size(); ++i)
          if (cw.mult[i] == 0) all.push_back(std::log(envelope_time_us(f.regimes, d.pts[i].x)) - d.pts[i].logt);
      }
      g.cv_sizes_rms_log = rms(all);
      g.cv_sizes_sigma_log = robust_sigma(all);
    }
  }

  if (g.spec_gbps > 0 && !g.regimes.empty()) {
    const int n = d.node_values.back();
    const double t = envelope_time_us(g.regimes, traffic(g.op, g.bytes_max, n, g.ranks_per_node));
    g.efficiency = curve_busbw_gbps(g.op, n * g.ranks_per_node, g.bytes_max, t) / (g.spec_gbps / 8.0);
  }
  return g;
}

}  // namespace

namespace {

// A group whose rows no fit follows (errors beyond kMaxLogError: a sweep disturbed in passes, a
// file of another machine) is refused here, naming it, rather than written into a model file that
// every later `model predict` refuses.
void refuse_errors_a_model_cannot_hold(const Group& g, const Observation& first) {
  const std::pair<const char*, double> errors[] = {{"residual_rms_log", g.resid_rms_log},
                                                   {"residual_sigma_log", g.resid_sigma_log},
                                                   {"cv_leave_one_node_out rms_log", g.cv_node_rms_log},
                                                   {"cv_leave_one_node_out sigma_log", g.cv_node_sigma_log},
                                                   {"cv_leave_one_node_out up_sigma_log", g.cv_node_up_sigma_log},
                                                   {"cv_leave_one_node_out down_sigma_log", g.cv_node_down_sigma_log},
                                                   {"cv_held_out_sizes rms_log", g.cv_sizes_rms_log},
                                                   {"cv_held_out_sizes sigma_log", g.cv_sizes_sigma_log}};
  for (const auto& [field, value] : errors) {
    if (!(value <= kMaxLogError)) {
      throw UsageError(fmt::format(
          "{}: results: {} on {} ({} ranks per node): the rows disagree with every fit (accuracy {} {:.3g}, above {}: "
          "a factor of more than 22026); a sweep disturbed in some passes? measure it again, or leave its files out",
          first.file, name(g.op), g.profile, g.ranks_per_node, field, value, kMaxLogError));
    }
  }
}

}  // namespace

Model fit(const std::vector<Observation>& rows, const FitOptions& options, const std::vector<std::string>& inputs) {
  if (rows.empty()) throw UsageError("model fit: the inputs hold no collective rows with 2 or more ranks");
  std::map<GroupKey, std::vector<const Observation*>> groups;
  for (const auto& o : rows) groups[{o.op, o.profile, o.ranks_per_node}].push_back(&o);
  auto impl = std::make_unique<Model::Impl>();
  impl->refits = options.refits;
  impl->percentile = options.percentile;
  for (const auto& in : inputs) impl->inputs.push_back(in);
  for (const auto& [key, members] : groups) {
    impl->groups.push_back(fit_group(key, members, options));
    refuse_errors_a_model_cannot_hold(impl->groups.back(), *members.front());
  }
  return FitAccess::make(std::move(impl));
}

std::vector<FittedGroupView> fitted_groups(const Model& model) {
  std::vector<FittedGroupView> out;
  const auto summaries = model.groups();
  const auto& impl = FitAccess::impl(model);
  for (std::size_t gi = 0; gi < impl.groups.size(); ++gi) {
    const Group& g = impl.groups[gi];
    FittedGroupView v;
    v.summary = summaries[gi];
    v.bic = g.bic;
    for (std::size_t k = 0; k < g.regimes.size(); ++k) {
      RegimeBand band;
      band.value = g.regimes[k];
      auto quant = [&](auto field, double q) {
        std::vector<double> xs;
        for (const auto& r : g.refits)
          if (k < r.size()) xs.push_back(r[k].*field);
        if (xs.empty()) return g.regimes[k].*field;
        std::sort(xs.begin(), xs.end());
        const double pos = q * static_cast<double>(xs.size() - 1);
        const auto lo = static_cast<std::size_t>(std::floor(pos));
        const auto hi = std::min(lo + 1, xs.size() - 1);
        return xs[lo] + (pos - static_cast<double>(lo)) * (xs[hi] - xs[lo]);
      };
      for (auto field : {&Regime::latency_us, &Regime::step_us, &Regime::us_per_byte, &Regime::us_per_net_byte}) {
        band.lo.*field = quant(field, 0.05);
        band.hi.*field = quant(field, 0.95);
      }
      band.lo.steps = band.hi.steps = g.regimes[k].steps;
      v.regimes.push_back(band);
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace ccbench::model
