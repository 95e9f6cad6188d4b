#include "model/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"
#include "core/percentiles.hpp"
#include "core/types.hpp"
#include "model/model_impl.hpp"
#include "system/instance_profile.hpp"

namespace ccbench::model {

std::pair<std::uint64_t, std::uint64_t> sizes_measured_near(const Group& g, int nodes) {
  if (g.bytes_by_nodes.size() != g.nodes.size()) return {g.bytes_min, g.bytes_max};
  const auto it = std::lower_bound(g.nodes.begin(), g.nodes.end(), nodes);
  const auto at = static_cast<std::size_t>(it - g.nodes.begin());
  if (it == g.nodes.end()) return {g.bytes_by_nodes.back()[0], g.bytes_by_nodes.back()[1]};
  if (*it == nodes || at == 0) return {g.bytes_by_nodes[at][0], g.bytes_by_nodes[at][1]};
  const auto& lo = g.bytes_by_nodes[at - 1];
  const auto& hi = g.bytes_by_nodes[at];
  return {std::max(lo[0], hi[0]), std::min(lo[1], hi[1])};
}

namespace {

using json = nlohmann::json;

constexpr double kZ90 = 1.6448536269514722;  // two-sided 90%: the 5% and 95% quantiles
// A profile predicted from its spec carries this much extra error on log scale (one sigma) unless
// several measured profiles show a larger spread of efficiencies: spec sheets are not measurements.
constexpr double kFromSpecSigma = 0.15;
// With one node count fitted, nothing was learnt about scale: a prediction at another node count
// gets at least this error (one sigma, log scale).
constexpr double kNoScaleSigma = 0.25;

json regime_json(const Regime& r) {
  return {
      {"latency_us", r.latency_us},           {"step_us", r.step_us},
      {"steps", std::string(name(r.steps))},  {"us_per_byte", r.us_per_byte},
      {"us_per_net_byte", r.us_per_net_byte}, {"busbw_gbps_one_node", r.us_per_byte > 0 ? 1e-3 / r.us_per_byte : 0.0}};
}

[[noreturn]] void bad(const std::string& where, const std::string& key, const std::string& what) {
  throw ParseError(fmt::format("{}: {}: {}", where, key, what));
}

const json& need(const json& obj, const char* key, const std::string& where, const std::string& path) {
  if (!obj.is_object()) bad(where, path, "must be an object");
  auto it = obj.find(key);
  if (it == obj.end()) bad(where, path.empty() ? key : path + "/" + key, "missing");
  return *it;
}

double need_number(const json& obj, const char* key, const std::string& where, const std::string& path,
                   bool non_negative = true, double max_value = std::numeric_limits<double>::max()) {
  const json& v = need(obj, key, where, path);
  const std::string p = path.empty() ? key : path + "/" + key;
  if (!v.is_number()) bad(where, p, "must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x) || (non_negative && x < 0)) bad(where, p, "must be a finite non-negative number");
  if (x > max_value) bad(where, p, fmt::format("is {}, above {}", x, max_value));
  return x;
}

// An error on log scale: -1 (not computed) or 0 ..kMaxLogError (model_impl.hpp).
double need_log_error(const json& obj, const char* key, const std::string& where, const std::string& path,
                      bool allow_unset) {
  const double x = need_number(obj, key, where, path, false, kMaxLogError);
  if (x < 0 && !(allow_unset && x == -1))
    bad(where, path + "/" + key, allow_unset ? "must be -1 or >= 0" : "must be >= 0");
  return x;
}

// Ranks per node and node counts are bounded like the flags of `model predict` (--ranks-per-node
// up to 2^16, --nodes up to 2^20): their product stays inside an int.
constexpr long long kMaxRanksPerNode = 1 << 16;
constexpr long long kMaxNodes = 1 << 20;

int need_int(const json& obj, const char* key, const std::string& where, const std::string& path, int min_value,
             long long max_value = 1LL << 30) {
  const json& v = need(obj, key, where, path);
  const std::string p = path.empty() ? key : path + "/" + key;
  if (!v.is_number_integer() || v.get<long long>() < min_value || v.get<long long>() > max_value)
    bad(where, p, fmt::format("must be an integer in {}..{}", min_value, max_value));
  return v.get<int>();
}

Regime regime_from(const json& j, const std::string& where, const std::string& path) {
  Regime r;
  r.latency_us = need_number(j, "latency_us", where, path);
  r.step_us = need_number(j, "step_us", where, path);
  r.us_per_byte = need_number(j, "us_per_byte", where, path);
  r.us_per_net_byte = need_number(j, "us_per_net_byte", where, path);
  const json& s = need(j, "steps", where, path);
  if (s == "log2_nodes")
    r.steps = Steps::log2_nodes;
  else if (s == "nodes")
    r.steps = Steps::nodes;
  else
    bad(where, path + "/steps", "must be \"log2_nodes\" or \"nodes\"");
  // Every term zero is a curve of zero time: infinite bandwidth at every size.
  if (r.latency_us == 0 && r.step_us == 0 && r.us_per_byte == 0 && r.us_per_net_byte == 0)
    bad(where, path, "every coefficient is 0 (a zero-time curve)");
  return r;
}

double quantile(std::vector<double> xs, double q) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  const double pos = q * static_cast<double>(xs.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (pos - static_cast<double>(lo)) * (xs[hi] - xs[lo]);
}

// Bandwidth terms scaled by `bw_scale` (a spec ratio; 1 for a measured profile).
std::vector<Regime> scaled(const std::vector<Regime>& rs, double bw_scale) {
  std::vector<Regime> out = rs;
  for (auto& r : out) {
    r.us_per_byte *= bw_scale;
    r.us_per_net_byte *= bw_scale;
  }
  return out;
}

struct Point {
  double t = 0, lo = 0, hi = 0;
  bool extrapolated = false;
  double latency_share = 0;  // of t, the answering regime's latency terms
};

// The cheapest regime with a positive time. A regime fitted on several node counts may have no
// term left at one node (no latency, no bus term, and g(op, 1) = 0 for its network term): it
// describes nothing there, and a zero would be an infinite bandwidth. `latency_share`, when given,
// gets the share of that time its latency terms (a + l steps(N)) take.
double positive_envelope_us(const std::vector<Regime>& regimes, const Traffic& x, double* latency_share = nullptr) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& r : regimes) {
    const double t = regime_time_us(r, x);
    if (t > 0 && t < best) {
      best = t;
      if (latency_share) *latency_share = (r.latency_us + r.step_us * steps_of(r.steps, x.nodes)) / t;
    }
  }
  return best;
}

Point predict_group(const Group& g, std::uint64_t bytes, int nodes, double bw_scale) {
  Point p;
  const Traffic x = traffic(g.op, bytes, nodes, g.ranks_per_node);
  p.t = positive_envelope_us(scaled(g.regimes, bw_scale), x, &p.latency_share);
  if (!std::isfinite(p.t))
    throw UsageError(fmt::format("--nodes: {} on {} has no regime with a positive time at {} node(s) (fitted on {})",
                                 name(g.op), g.profile, nodes, fmt::join(g.nodes, ", ")));
  std::vector<double> dev;
  dev.reserve(g.refits.size());
  for (const auto& r : g.refits) {
    const double t = positive_envelope_us(scaled(r, bw_scale), x);
    if (t > 0 && std::isfinite(t)) dev.push_back(std::log(t / p.t));
  }
  const double q_lo = std::max(0.0, -quantile(dev, 0.05));
  const double q_hi = std::max(0.0, quantile(dev, 0.95));
  const int nmin = g.nodes.front(), nmax = g.nodes.back();
  const bool fitted_node = std::find(g.nodes.begin(), g.nodes.end(), nodes) != g.nodes.end();
  const bool in_nodes = nodes >= nmin && nodes <= nmax;
  const auto [size_lo, size_hi] = sizes_measured_near(g, nodes);
  const bool in_sizes = bytes >= size_lo && bytes <= size_hi;
  p.extrapolated = !in_nodes || !in_sizes;
  double e = g.resid_sigma_log;
  if (!fitted_node && in_nodes) e = std::max(e, g.cv_node_sigma_log);
  if (!fitted_node && g.nodes.size() < 2) e = std::max(e, kNoScaleSigma);
  bool predictive = false;  // e is a measured prediction error, not a residual
  if (p.extrapolated) {
    // Outside the fitted node counts the error grows with the distance dn (doublings of nodes):
    // leaving out the largest (smallest) node count measured the error of extrapolating up (down)
    // `reach` doublings, so dn doublings get that error times sqrt(max(1, dn / reach)), as if
    // each further doubling added an independent error of the same size; never less than the
    // in-sample error times sqrt(1 + dn).
    // Outside the sizes: a quarter of that per doubling of bytes.
    const double dn_up = std::max(0.0, std::log2(static_cast<double>(nodes) / nmax));
    const double dn_down = std::max(0.0, std::log2(static_cast<double>(nmin) / nodes));
    const double dn = std::max(dn_up, dn_down);
    const double ds = std::max({0.0, std::log2(static_cast<double>(bytes) / static_cast<double>(size_hi)),
                                std::log2(static_cast<double>(size_lo) / static_cast<double>(bytes))});
    double en = std::max(e, g.resid_sigma_log * std::sqrt(1.0 + dn));
    const double sigma_dir = dn_up > 0 ? g.cv_node_up_sigma_log : g.cv_node_down_sigma_log;
    const double reach = dn_up > 0 ? g.cv_node_up_reach_log2 : g.cv_node_down_reach_log2;
    if (dn > 0 && sigma_dir > 0 && reach > 0 && g.nodes.size() >= 3) {
      en = std::max(en, sigma_dir * std::sqrt(std::max(1.0, dn / reach)));
      // A held-out prediction error already holds the fit's own uncertainty (the held-out fit had
      // fewer node counts than this one): the refits' spread is not added to it again.
      predictive = true;
    } else if (dn > 0 && g.nodes.size() == 2) {
      // Two node counts: holding one out leaves a fit on one count, which has no node terms (it
      // carries the bus bandwidth forward), so neither held-out error was made by the model asked
      // here, whose node terms the two counts determine exactly and nothing checks. Take the
      // larger of the two directions, at least the error allowed when nothing was learnt about
      // scale, and keep the refits' spread (the node terms' uncertainty) added to it.
      const double worst = std::max({kNoScaleSigma, g.cv_node_up_sigma_log, g.cv_node_down_sigma_log});
      const double span = std::log2(static_cast<double>(nmax) / nmin);  // what a held-out fit reached
      en = std::max(en, worst * std::sqrt(std::max(1.0, dn / span)));
    }
    if (g.nodes.size() < 2 && dn > 0) en = std::max(en, kNoScaleSigma * (1.0 + dn));
    const double es = ds > 0 ? std::max(e, g.cv_sizes_sigma_log) : e;
    e = std::max(en, es) * (1.0 + ds / 4.0);
  }
  const auto half_width = [&](double q) {
    return predictive ? std::max(q, kZ90 * e) : std::sqrt(q * q + (kZ90 * e) * (kZ90 * e));
  };
  const double hw_lo = half_width(q_lo);
  const double hw_hi = half_width(q_hi);
  p.lo = p.t * std::exp(-hw_lo);
  p.hi = p.t * std::exp(hw_hi);
  return p;
}

}  // namespace

Model::Model() : impl_(std::make_unique<Impl>()) {}
Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::Model(const Model& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
Model& Model::operator=(const Model& o) {
  if (this != &o) impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}

json Model::to_json() const {
  json groups = json::array();
  for (const auto& g : impl_->groups) {
    json regimes = json::array();
    for (const auto& r : g.regimes) regimes.push_back(regime_json(r));
    json refits = json::array();
    for (const auto& rs : g.refits) {
      json flat = json::array();
      for (const auto& r : rs) {
        flat.push_back(r.latency_us);
        flat.push_back(r.step_us);
        flat.push_back(r.us_per_byte);
        flat.push_back(r.us_per_net_byte);
      }
      refits.push_back(flat);
    }
    json bic = json::array();  // null: that number of regimes was not a candidate
    for (double b : g.bic) bic.push_back(std::isfinite(b) ? json(b) : json(nullptr));
    json by_nodes = json::array();
    for (const auto& cv : g.cv_nodes)
      by_nodes.push_back({{"nodes", cv.nodes},
                          {"extrapolated", cv.extrapolated},
                          {"rms_log", cv.rms_log},
                          {"max_abs_log", cv.max_abs_log},
                          {"rows", cv.rows}});
    groups.push_back({{"op", std::string(name(g.op))},
                      {"profile", g.profile},
                      {"ranks_per_node", g.ranks_per_node},
                      {"spec_gbps", g.spec_gbps},
                      {"nodes", g.nodes},
                      {"bytes_min", g.bytes_min},
                      {"bytes_max", g.bytes_max},
                      {"bytes_by_nodes", g.bytes_by_nodes},
                      {"rows", g.rows},
                      {"dtypes", g.dtypes},
                      {"regimes", regimes},
                      {"bic_by_regimes", bic},
                      {"efficiency", g.efficiency},
                      {"accuracy",
                       {{"residual_rms_log", g.resid_rms_log},
                        {"residual_sigma_log", g.resid_sigma_log},
                        {"cv_leave_one_node_out",
                         {{"rms_log", g.cv_node_rms_log},
                          {"sigma_log", g.cv_node_sigma_log},
                          {"up_sigma_log", g.cv_node_up_sigma_log},
                          {"up_reach_log2_nodes", g.cv_node_up_reach_log2},
                          {"down_sigma_log", g.cv_node_down_sigma_log},
                          {"down_reach_log2_nodes", g.cv_node_down_reach_log2},
                          {"by_nodes", by_nodes}}},
                        {"cv_held_out_sizes", {{"rms_log", g.cv_sizes_rms_log}, {"sigma_log", g.cv_sizes_sigma_log}}}}},
                      {"refits", refits}});
  }
  json out = {{"model_version", kModelVersion},
              {"generator", "ccbench model fit"},
              {"time_model",
               "t = min over regimes of latency_us + step_us * steps(N) + S * busfactor(op, N * ranks_per_node) * "
               "us_per_byte + S * netfactor(op, N) * us_per_net_byte"},
              {"refits", impl_->refits},
              {"inputs", impl_->inputs},
              {"groups", groups}};
  // Absent: a curve of the rows' medians (what every model file before it holds).
  if (impl_->percentile > 0) out["percentile"] = impl_->percentile;
  return out;
}

Model Model::from_json(const json& j, const std::string& where) {
  if (!j.is_object()) bad(where, "/", "a model file is a JSON object");
  const json& version = need(j, "model_version", where, "");
  if (!version.is_number_integer() || version.get<long long>() != kModelVersion)
    bad(where, "model_version",
        fmt::format("is {}, this ccbench reads model_version {}{}", version.dump(), kModelVersion,
                    // an older file's time model had other terms: its coefficients mean nothing here
                    version.is_number_integer() && version.get<long long>() < kModelVersion
                        ? " (refit it: ccbench model fit RESULTS -o FILE)"
                        : ""));
  auto impl = std::make_unique<Impl>();
  if (j.contains("inputs") && j["inputs"].is_array()) impl->inputs = j["inputs"];
  if (j.contains("refits") && j["refits"].is_number_integer()) impl->refits = j["refits"].get<int>();
  if (j.contains("percentile")) {
    const json& p = j["percentile"];
    if (!p.is_number() || !(p.get<double>() > 0) || !(p.get<double>() < 100))
      bad(where, "percentile", fmt::format("is {}, expected a level strictly between 0 and 100", p.dump()));
    impl->percentile = p.get<double>();
  }
  const json& groups = need(j, "groups", where, "");
  if (!groups.is_array()) bad(where, "groups", "must be an array");
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const json& gj = groups[gi];
    const std::string path = fmt::format("groups/{}", gi);
    Group g;
    const json& op = need(gj, "op", where, path);
    const auto parsed = op.is_string() ? parse_op(op.get<std::string>()) : std::nullopt;
    if (!parsed) bad(where, path + "/op", fmt::format("unknown op {}", op.dump()));
    g.op = *parsed;
    const json& profile = need(gj, "profile", where, path);
    if (!profile.is_string() || profile.get<std::string>().empty())
      bad(where, path + "/profile", "must be a non-empty string");
    g.profile = profile.get<std::string>();
    g.ranks_per_node = need_int(gj, "ranks_per_node", where, path, 1, kMaxRanksPerNode);
    g.spec_gbps = need_number(gj, "spec_gbps", where, path);
    const json& nodes = need(gj, "nodes", where, path);
    if (!nodes.is_array() || nodes.empty()) bad(where, path + "/nodes", "must be a non-empty array of node counts");
    for (const auto& n : nodes) {
      if (!n.is_number_integer() || n.get<long long>() < 1 || n.get<long long>() > kMaxNodes)
        bad(where, path + "/nodes", fmt::format("must hold integers in 1..{}", kMaxNodes));
      g.nodes.push_back(n.get<int>());
    }
    // increasing, as fit writes them: bytes_by_nodes follows this order
    if (std::adjacent_find(g.nodes.begin(), g.nodes.end(), std::greater_equal<>()) != g.nodes.end())
      bad(where, path + "/nodes", "must be increasing");
    g.bytes_min = static_cast<std::uint64_t>(need_number(gj, "bytes_min", where, path, true, 0x1p63));
    g.bytes_max = static_cast<std::uint64_t>(need_number(gj, "bytes_max", where, path, true, 0x1p63));
    if (g.bytes_min == 0 || g.bytes_max < g.bytes_min) bad(where, path + "/bytes_max", "must be >= bytes_min > 0");
    const json& by_nodes = need(gj, "bytes_by_nodes", where, path);
    if (!by_nodes.is_array() || by_nodes.size() != nodes.size())
      bad(where, path + "/bytes_by_nodes", "must hold one [bytes_min, bytes_max] per node count");
    for (std::size_t k = 0; k < by_nodes.size(); ++k) {
      const json& r = by_nodes[k];
      const auto in_group = [&](const json& x) {
        return x.is_number_unsigned() && x.get<std::uint64_t>() >= g.bytes_min && x.get<std::uint64_t>() <= g.bytes_max;
      };
      if (!r.is_array() || r.size() != 2 || !in_group(r[0]) || !in_group(r[1]) ||
          r[1].get<std::uint64_t>() < r[0].get<std::uint64_t>())
        bad(where, fmt::format("{}/bytes_by_nodes/{}", path, k), "must be [min, max] inside bytes_min..bytes_max");
      g.bytes_by_nodes.push_back({r[0].get<std::uint64_t>(), r[1].get<std::uint64_t>()});
    }
    g.rows = need_int(gj, "rows", where, path, 0);
    // Optional (absent in files written before it): the element types fitted.
    if (gj.contains("dtypes")) {
      const json& dtypes = gj["dtypes"];
      if (!dtypes.is_array()) bad(where, path + "/dtypes", "must be an array of element type names");
      for (const auto& d : dtypes) {
        if (!d.is_string() || d.get<std::string>().empty())
          bad(where, path + "/dtypes", "must be an array of element type names");
        g.dtypes.push_back(d.get<std::string>());
      }
    }
    const json& regimes = need(gj, "regimes", where, path);
    if (!regimes.is_array() || regimes.empty()) bad(where, path + "/regimes", "must be a non-empty array");
    for (std::size_t k = 0; k < regimes.size(); ++k)
      g.regimes.push_back(regime_from(regimes[k], where, fmt::format("{}/regimes/{}", path, k)));
    if (gj.contains("bic_by_regimes") && gj["bic_by_regimes"].is_array())
      for (const auto& b : gj["bic_by_regimes"])
        g.bic.push_back(b.is_number() ? b.get<double>() : std::numeric_limits<double>::quiet_NaN());
    g.efficiency = gj.contains("efficiency") && gj["efficiency"].is_number() ? gj["efficiency"].get<double>() : 0.0;
    const json& acc = need(gj, "accuracy", where, path);
    g.resid_rms_log = need_log_error(acc, "residual_rms_log", where, path + "/accuracy", false);
    g.resid_sigma_log = need_log_error(acc, "residual_sigma_log", where, path + "/accuracy", false);
    const json& cvn = need(acc, "cv_leave_one_node_out", where, path + "/accuracy");
    const std::string cvn_path = path + "/accuracy/cv_leave_one_node_out";
    g.cv_node_rms_log = need_log_error(cvn, "rms_log", where, cvn_path, true);
    g.cv_node_sigma_log = need_log_error(cvn, "sigma_log", where, cvn_path, true);
    g.cv_node_up_sigma_log = need_log_error(cvn, "up_sigma_log", where, cvn_path, true);
    g.cv_node_up_reach_log2 = need_number(cvn, "up_reach_log2_nodes", where, cvn_path, true, 20);
    g.cv_node_down_sigma_log = need_log_error(cvn, "down_sigma_log", where, cvn_path, true);
    g.cv_node_down_reach_log2 = need_number(cvn, "down_reach_log2_nodes", where, cvn_path, true, 20);
    if (cvn.contains("by_nodes") && cvn["by_nodes"].is_array())
      for (const auto& c : cvn["by_nodes"]) {
        CvNode cv;
        cv.nodes = c.value("nodes", 0);
        cv.extrapolated = c.value("extrapolated", false);
        cv.rms_log = c.value("rms_log", 0.0);
        cv.max_abs_log = c.value("max_abs_log", 0.0);
        cv.rows = c.value("rows", 0);
        g.cv_nodes.push_back(cv);
      }
    const json& cvs = need(acc, "cv_held_out_sizes", where, path + "/accuracy");
    g.cv_sizes_rms_log = need_log_error(cvs, "rms_log", where, path + "/accuracy/cv_held_out_sizes", true);
    g.cv_sizes_sigma_log = need_log_error(cvs, "sigma_log", where, path + "/accuracy/cv_held_out_sizes", true);
    const json& refits = need(gj, "refits", where, path);
    if (!refits.is_array()) bad(where, path + "/refits", "must be an array");
    for (std::size_t b = 0; b < refits.size(); ++b) {
      const json& flat = refits[b];
      if (!flat.is_array() || flat.size() != 4 * g.regimes.size())
        bad(where, fmt::format("{}/refits/{}", path, b),
            fmt::format("must hold {} numbers (4 per regime)", 4 * g.regimes.size()));
      std::vector<Regime> rs = g.regimes;
      for (std::size_t k = 0; k < rs.size(); ++k) {
        double v[4];
        for (std::size_t c = 0; c < 4; ++c) {
          const json& x = flat[4 * k + c];
          if (!x.is_number() || !std::isfinite(x.get<double>()))
            bad(where, fmt::format("{}/refits/{}/{}", path, b, 4 * k + c), "must be a number");
          v[c] = x.get<double>();
        }
        rs[k].latency_us = v[0];
        rs[k].step_us = v[1];
        rs[k].us_per_byte = v[2];
        rs[k].us_per_net_byte = v[3];
      }
      g.refits.push_back(std::move(rs));
    }
    impl->groups.push_back(std::move(g));
  }
  return Model(std::move(impl));
}

Model Model::load(const std::filesystem::path& path) {
  // read_input_file refuses a FIFO (it would block), a folder, a device (/dev/zero never ends).
  const std::string text = read_input_file(path);
  check_json_depth(text, path.string());  // a value nested 10^6 deep overflowed the stack in a message
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ParseError(fmt::format("{}: not JSON (byte {})", path.string(), e.byte));
  } catch (const json::out_of_range& e) {
    // A number too large for a double (1e999) is valid JSON text nlohmann cannot hold.
    throw ParseError(fmt::format("{}: a number out of range ({})", path.string(), e.what()));
  }
  return from_json(j, path.string());
}

std::vector<std::string> Model::profiles() const {
  std::set<std::string> s;
  for (const auto& g : impl_->groups) s.insert(g.profile);
  return {s.begin(), s.end()};
}

std::vector<GroupSummary> Model::groups() const {
  std::vector<GroupSummary> out;
  for (const auto& g : impl_->groups) {
    GroupSummary s;
    s.op = g.op;
    s.profile = g.profile;
    s.ranks_per_node = g.ranks_per_node;
    s.nodes_fitted = g.nodes;
    s.bytes_min = g.bytes_min;
    s.bytes_max = g.bytes_max;
    s.regimes = static_cast<int>(g.regimes.size());
    s.residual_rms_log = g.resid_rms_log;
    s.cv_node_rms_log = g.cv_node_rms_log;
    s.cv_sizes_rms_log = g.cv_sizes_rms_log;
    out.push_back(s);
  }
  return out;
}

double Model::percentile() const { return impl_->percentile; }

namespace {

std::string statistic_text(double percentile) {
  return percentile > 0 ? fmt::format("the {}", percentiles::key(percentile)) : std::string("the median");
}

}  // namespace

Prediction Model::predict(const PredictQuery& q) const {
  if (q.bytes == 0) throw UsageError("--bytes: must be positive");
  if (q.percentile != impl_->percentile) {
    throw UsageError(fmt::format(
        "the model is fitted on {} of a call's time, not {}{}", statistic_text(impl_->percentile),
        statistic_text(q.percentile),
        q.percentile > 0
            ? fmt::format(" (fit one with `ccbench model fit --percentile {}` on runs with --percentiles {})",
                          q.percentile, q.percentile)
            : std::string(" (fit one with `ccbench model fit` without --percentile)")));
  }
  if (q.nodes < 1) throw UsageError("--nodes: must be at least 1");
  std::vector<const Group*> for_op;
  std::set<std::string> op_profiles;
  for (const auto& g : impl_->groups)
    if (g.op == q.op) {
      for_op.push_back(&g);
      op_profiles.insert(g.profile);
    }
  if (for_op.empty()) {
    std::set<std::string> ops;
    for (const auto& g : impl_->groups) ops.insert(std::string(name(g.op)));
    throw UsageError(fmt::format("--op: the model has no fit for {} (fitted: {})", name(q.op), fmt::join(ops, ", ")));
  }
  std::string profile = q.profile;
  if (profile.empty()) {
    if (op_profiles.size() != 1)
      throw UsageError(fmt::format("--profile: the model holds several profiles for {}; name one of: {}", name(q.op),
                                   fmt::join(op_profiles, ", ")));
    profile = *op_profiles.begin();
  }
  auto finish = [&](const Point& p, int rpn) {
    Prediction out;
    out.profile = profile;
    out.ranks_per_node = rpn;
    out.time_us = p.t;
    out.time_lo_us = p.lo;
    out.time_hi_us = p.hi;
    out.extrapolated = p.extrapolated;
    out.latency_share = p.latency_share;
    const int ranks = q.nodes * rpn;
    out.busbw_gbps = curve_busbw_gbps(q.op, ranks, q.bytes, p.t);
    out.busbw_lo_gbps = curve_busbw_gbps(q.op, ranks, q.bytes, p.hi);
    out.busbw_hi_gbps = curve_busbw_gbps(q.op, ranks, q.bytes, p.lo);
    return out;
  };
  // Picks the group of a profile: the query's layout, or the one with the most rows.
  auto pick = [&](const std::string& prof) -> const Group* {
    const Group* best = nullptr;
    for (const Group* g : for_op) {
      if (g->profile != prof) continue;
      if (q.ranks_per_node > 0 && g->ranks_per_node != q.ranks_per_node) continue;
      if (!best || g->rows > best->rows) best = g;
    }
    return best;
  };
  if (op_profiles.count(profile)) {
    const Group* g = pick(profile);
    if (!g) {
      std::set<int> rpns;
      for (const Group* x : for_op)
        if (x->profile == profile) rpns.insert(x->ranks_per_node);
      throw UsageError(fmt::format("--ranks-per-node: {} on {} was fitted with {} ranks per node only", name(q.op),
                                   profile, fmt::join(rpns, ", ")));
    }
    return finish(predict_group(*g, q.bytes, q.nodes, 1.0), g->ranks_per_node);
  }
  // A profile never measured: its spec times the efficiency learned on the measured ones.
  const auto spec = system::find_instance_profile(profile);
  if (!spec || spec->efa_gbps <= 0)
    throw UsageError(
        fmt::format("--profile: '{}' was not measured and has no spec in configs/instances/aws.yaml "
                    "(measured: {})",
                    profile, fmt::join(op_profiles, ", ")));
  std::vector<const Group*> refs;
  for (const Group* g : for_op) {
    if (g->spec_gbps <= 0) continue;
    if (q.ranks_per_node > 0 && g->ranks_per_node != q.ranks_per_node) continue;
    const Group* best = pick(g->profile);
    if (best == g) refs.push_back(g);
  }
  if (refs.empty())
    throw UsageError(
        fmt::format("--profile: '{}' was not measured and no measured profile of {} has a spec to learn "
                    "its efficiency from",
                    profile, name(q.op)));
  double log_t = 0, log_lo = 0, log_hi = 0, latency_share = 0;
  double min_log_t = 1e300, max_log_t = -1e300;
  bool extrapolated = false;
  for (const Group* g : refs) {
    const Point p = predict_group(*g, q.bytes, q.nodes, g->spec_gbps / spec->efa_gbps);
    log_t += std::log(p.t);
    log_lo += std::log(p.lo / p.t);
    log_hi += std::log(p.hi / p.t);
    latency_share += p.latency_share;
    min_log_t = std::min(min_log_t, std::log(p.t));
    max_log_t = std::max(max_log_t, std::log(p.t));
    extrapolated = extrapolated || p.extrapolated;
  }
  const double n = static_cast<double>(refs.size());
  const double spread = refs.size() >= 2 ? (max_log_t - min_log_t) / 2 : 0.0;
  const double extra = kZ90 * std::max(kFromSpecSigma, spread);
  Point p;
  p.t = std::exp(log_t / n);
  p.lo = p.t * std::exp(-std::sqrt(std::pow(log_lo / n, 2) + extra * extra));
  p.hi = p.t * std::exp(std::sqrt(std::pow(log_hi / n, 2) + extra * extra));
  p.extrapolated = extrapolated;
  p.latency_share = latency_share / n;
  Prediction out = finish(p, q.ranks_per_node > 0 ? q.ranks_per_node : refs.front()->ranks_per_node);
  out.from_spec = true;
  return out;
}

}  // namespace ccbench::model
