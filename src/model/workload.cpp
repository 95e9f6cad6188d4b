// Workload files and the collectives of one training step. The formulas are those of docs/model.md,
// section "Planning a training step"; keep the two in step.
#include "model/workload.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/moe_router.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "core/yaml_checks.hpp"

namespace ccbench::model {

std::string_view name(Sharding s) {
  switch (s) {
    case Sharding::none:
      return "none";
    case Sharding::zero1:
      return "zero1";
    case Sharding::zero2:
      return "zero2";
    case Sharding::zero3:
      return "zero3";
    case Sharding::fsdp:
      return "fsdp";
  }
  return "?";
}

std::optional<Sharding> parse_sharding(std::string_view text) {
  for (Sharding s : {Sharding::none, Sharding::zero1, Sharding::zero2, Sharding::zero3, Sharding::fsdp}) {
    if (name(s) == text) return s;
  }
  return std::nullopt;
}

std::string_view name(Phase phase) {
  switch (phase) {
    case Phase::step:
      return "step";
    case Phase::prefill:
      return "prefill";
    case Phase::kv_transfer:
      return "kv_transfer";
    case Phase::decode:
      return "decode";
  }
  return "?";
}

std::string_view name(StepOp op) {
  switch (op) {
    case StepOp::allreduce:
      return "allreduce";
    case StepOp::allgather:
      return "allgather";
    case StepOp::reduce_scatter:
      return "reduce_scatter";
    case StepOp::alltoall:
      return "alltoall";
    case StepOp::sendrecv:
      return "sendrecv";
    case StepOp::moe_dispatch:
      return "moe_dispatch";
    case StepOp::moe_combine:
      return "moe_combine";
  }
  return "?";
}

Op to_op(StepOp op) {
  switch (op) {
    case StepOp::allreduce:
      return Op::allreduce;
    case StepOp::allgather:
      return Op::allgather;
    case StepOp::reduce_scatter:
      return Op::reduce_scatter;
    case StepOp::alltoall:
      return Op::alltoall;
    case StepOp::sendrecv:
      return Op::sendrecv;
    case StepOp::moe_dispatch:
      return Op::moe_dispatch;
    case StepOp::moe_combine:
      return Op::moe_combine;
  }
  return Op::allreduce;
}

namespace {

constexpr int kMaxRanks = 1 << 24;

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    const auto mark = at.Mark();
    if (mark.line >= 0) throw ParseError(fmt::format("{}:{}: {}", source_, mark.line + 1, what));
    throw ParseError(fmt::format("{}: {}", source_, what));
  }

  // Every key of `map` must be one of `known`; `where` names the map in messages.
  void only_keys(const YAML::Node& map, std::string_view where, std::initializer_list<std::string_view> known) const {
    if (!map.IsMap()) fail(map, fmt::format("{} must be a mapping of keys", where));
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        fail(kv.first, fmt::format("unknown key '{}{}' (known: {})", where.empty() ? "" : std::string(where) + ".", key,
                                   fmt::join(known, ", ")));
      }
    }
  }

  static std::string path(std::string_view where, std::string_view key) {
    return where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
  }

  // By value: assigning to a yaml-cpp node that is already bound would rewrite the tree.
  YAML::Node need(const YAML::Node& map, std::string_view where, std::string_view key) const {
    YAML::Node out = map[std::string(key)];
    if (!out) fail(map, fmt::format("missing key '{}'", path(where, key)));
    return out;
  }

  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, fmt::format("{}: expected a single value", key));
    return n.Scalar();
  }

  // A count: a number, optionally with a decimal suffix K, M, B (1e9) or T ("70B", "1.2T", "70e9").
  double count(const YAML::Node& n, const std::string& key) const {
    std::string text = scalar(n, key);
    double scale = 1;
    if (!text.empty()) {
      const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
      const std::array<std::pair<char, double>, 4> suffixes{{{'K', 1e3}, {'M', 1e6}, {'B', 1e9}, {'T', 1e12}}};
      for (const auto& [s, v] : suffixes) {
        if (c == s) {
          scale = v;
          text.pop_back();
        }
      }
    }
    std::size_t used = 0;
    double v = 0;
    // Decimal only: std::stod also reads hexadecimal ("0x10" as 16), "inf" and "nan".
    const bool decimal = !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) {
      return std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' ||
             ch == '-';
    });
    try {
      if (decimal) v = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(v) || v < 0) {
      fail(n, fmt::format("{}: '{}' is not a non-negative number (70e9, 70B, 1.2T)", key, n.Scalar()));
    }
    return v * scale;
  }

  int integer(const YAML::Node& n, const std::string& key, int min) const {
    const std::string text = scalar(n, key);
    std::size_t used = 0;
    long long v = 0;
    bool too_large = false;
    try {
      v = std::stoll(text, &used);
    } catch (const std::out_of_range&) {
      // Digits beyond long long: a whole number too large, not a malformed one.
      too_large =
          std::all_of(text.begin(), text.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
      used = too_large ? text.size() : 0;
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || (!too_large && v < min)) {
      fail(n, fmt::format("{}: '{}' is not an integer >= {}", key, text, min));
    }
    if (too_large || v > (1LL << 30)) fail(n, fmt::format("{}: {} is above 2^30 (1073741824)", key, text));
    return static_cast<int>(v);
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    const std::string text = scalar(n, key);
    if (text == "true") return true;
    if (text == "false") return false;
    fail(n, fmt::format("{}: '{}' is not true or false", key, text));
  }

  DType dtype(const YAML::Node& n, const std::string& key) const {
    const auto d = parse_dtype(scalar(n, key));
    if (!d) fail(n, fmt::format("{}: unknown dtype '{}' (bf16, fp16, fp32, fp8_e4m3, ...)", key, n.Scalar()));
    return *d;
  }

 private:
  std::string source_;
};

// `serving:` (docs/model.md "Planning a serving step"), after `model:` and `parallel:` are read.
Serving read_serving(const Reader& r, const YAML::Node& s, const Workload& w) {
  r.only_keys(
      s, "serving",
      {"batch", "prompt_tokens", "generated_tokens", "kv_bytes_per_token", "percentile", "disaggregated", "prefill"});
  Serving out;
  out.batch = r.integer(r.need(s, "serving", "batch"), "serving.batch", 1);
  out.prompt_tokens = r.integer(r.need(s, "serving", "prompt_tokens"), "serving.prompt_tokens", 1);
  out.generated_tokens = r.integer(r.need(s, "serving", "generated_tokens"), "serving.generated_tokens", 1);
  out.kv_bytes_per_token = r.count(r.need(s, "serving", "kv_bytes_per_token"), "serving.kv_bytes_per_token");
  if (!(out.kv_bytes_per_token >= 1)) r.fail(s["kv_bytes_per_token"], "serving.kv_bytes_per_token: must be at least 1");
  if (const YAML::Node p = s["percentile"]) {
    const std::string text = r.scalar(p, "serving.percentile");
    if (text == "median") {
      out.percentile = 0;
    } else {
      const double v = r.count(p, "serving.percentile");
      if (!(v > 0 && v < 100))
        r.fail(p, fmt::format("serving.percentile: '{}' is not median or a level strictly "
                              "between 0 and 100 (99, 99.9)",
                              text));
      out.percentile = v;
    }
  }
  if (s["disaggregated"]) out.disaggregated = r.boolean(s["disaggregated"], "serving.disaggregated");
  out.prefill_tp = w.tp;
  out.prefill_pp = w.pp;
  out.prefill_ep = w.ep;
  if (const YAML::Node pre = s["prefill"]) {
    r.only_keys(pre, "serving.prefill", {"batch", "tp", "pp", "ep"});
    if (pre["batch"]) out.prefill_batch = r.integer(pre["batch"], "serving.prefill.batch", 1);
    if (pre["tp"]) out.prefill_tp = r.integer(pre["tp"], "serving.prefill.tp", 1);
    if (pre["pp"]) out.prefill_pp = r.integer(pre["pp"], "serving.prefill.pp", 1);
    if (pre["ep"]) out.prefill_ep = r.integer(pre["ep"], "serving.prefill.ep", 1);
    const YAML::Node at = pre["pp"] ? pre["pp"] : pre;
    if (w.layers % out.prefill_pp != 0)
      r.fail(at, fmt::format("serving.prefill.pp: {} does not divide model.layers ({})", out.prefill_pp, w.layers));
    if (w.moe_layers % out.prefill_pp != 0)
      r.fail(at, fmt::format("serving.prefill.pp: {} does not divide model.moe.moe_layers ({})", out.prefill_pp,
                             w.moe_layers));
    const YAML::Node ep = pre["ep"] ? pre["ep"] : pre;
    if (out.prefill_ep > 1 && w.experts == 0) r.fail(ep, "serving.prefill.ep: above 1 needs model.moe");
    if (w.experts > 0 && w.experts % out.prefill_ep != 0)
      r.fail(ep,
             fmt::format("serving.prefill.ep: {} does not divide model.moe.experts ({})", out.prefill_ep, w.experts));
    if (1LL * out.prefill_tp * out.prefill_pp * out.prefill_ep > kMaxRanks)
      r.fail(pre, fmt::format("serving.prefill: tp x pp x ep is above {} ranks", kMaxRanks));
  }
  if (!out.disaggregated && s["prefill"])
    r.fail(s["prefill"],
           "serving.prefill: a layout of its own needs serving.disaggregated: true (colocated prefill "
           "runs on the decode ranks, in their layout)");
  // Sizes stay far inside 64 bits (as a training step's): at most 2^50 elements in one buffer.
  const double prefill_elements =
      static_cast<double>(out.prefill_batch) * out.prompt_tokens * w.hidden * std::max(1, w.top_k);
  const double decode_elements = static_cast<double>(out.batch) * w.hidden * std::max(1, w.top_k);
  if (prefill_elements > 0x1p50 || decode_elements > 0x1p50 ||
      static_cast<double>(out.prompt_tokens) * out.kv_bytes_per_token > 0x1p50) {
    r.fail(s, "serving: a prefill's, decode step's or KV cache's buffer is above 2^50 elements or bytes");
  }
  return out;
}

}  // namespace

Workload parse_workload(const std::string& yaml_text, const std::string& source) {
  Reader r(source);
  YAML::Node loaded;
  try {
    loaded = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw ParseError(fmt::format("{}:{}: malformed YAML ({})", source, e.mark.line + 1, e.msg));
  }
  // A key given twice: yaml-cpp would keep one silently (claims and configs refuse it the same way).
  yaml_checks::check_document(source, yaml_text, loaded);
  const YAML::Node root = loaded;  // const: a lookup of a missing key must not add it
  if (!root || !root.IsMap()) throw ParseError(fmt::format("{}: a workload file is a mapping of keys", source));
  Workload w;
  w.source = source;
  try {
    r.only_keys(root, "",
                {"name", "model", "dtype", "grad_dtype", "sequence_length", "micro_batch", "micro_batches", "parallel",
                 "sharding", "shard_group", "bucket", "checkpoint", "serving"});
    const YAML::Node serving = root["serving"];
    if (serving) {
      // A serving request has no optimizer step, micro-batches or gradients: a key of those is a
      // training file's, not silently ignored.
      for (const char* key :
           {"sequence_length", "micro_batch", "micro_batches", "grad_dtype", "sharding", "shard_group", "bucket"}) {
        if (root[key])
          r.fail(root[key], fmt::format("{}: a training key; a serving workload (serving:) gives prompt_tokens, "
                                        "generated_tokens and batch instead",
                                        key));
      }
    }
    w.name = root["name"] ? r.scalar(root["name"], "name") : std::filesystem::path(source).stem().string();

    const YAML::Node model = r.need(root, "", "model");
    r.only_keys(model, "model", {"parameters", "layers", "hidden", "moe"});
    w.parameters = r.count(r.need(model, "model", "parameters"), "model.parameters");
    w.layers = r.integer(r.need(model, "model", "layers"), "model.layers", 1);
    w.hidden = r.integer(r.need(model, "model", "hidden"), "model.hidden", 1);
    if (w.parameters < 1) r.fail(model["parameters"], "model.parameters: must be at least 1");
    if (w.parameters > 1e15) r.fail(model["parameters"], "model.parameters: above 1e15 (1000T)");
    if (const YAML::Node moe = model["moe"]) {
      r.only_keys(moe, "model.moe", {"experts", "top_k", "expert_parameters", "moe_layers", "routing", "seed"});
      w.experts = r.integer(r.need(moe, "model.moe", "experts"), "model.moe.experts", 1);
      w.top_k = r.integer(r.need(moe, "model.moe", "top_k"), "model.moe.top_k", 1);
      w.expert_parameters = r.count(r.need(moe, "model.moe", "expert_parameters"), "model.moe.expert_parameters");
      w.moe_layers = moe["moe_layers"] ? r.integer(moe["moe_layers"], "model.moe.moe_layers", 1) : w.layers;
      if (w.top_k > w.experts) {
        r.fail(moe["top_k"], fmt::format("model.moe.top_k: {} exceeds experts ({})", w.top_k, w.experts));
      }
      if (!(w.expert_parameters < w.parameters)) {
        r.fail(moe["expert_parameters"], "model.moe.expert_parameters: must be less than model.parameters");
      }
      if (w.moe_layers > w.layers) {
        r.fail(moe["moe_layers"], fmt::format("model.moe.moe_layers: {} exceeds layers ({})", w.moe_layers, w.layers));
      }
      if (moe["seed"]) {
        if (!moe["routing"]) r.fail(moe["seed"], "model.moe.seed: only with model.moe.routing");
        w.routing_seed = static_cast<std::uint32_t>(r.integer(moe["seed"], "model.moe.seed", 0));
      }
    }

    w.dtype = r.dtype(r.need(root, "", "dtype"), "dtype");
    w.grad_dtype = root["grad_dtype"] ? r.dtype(root["grad_dtype"], "grad_dtype") : w.dtype;
    if (!serving) {
      w.sequence_length = r.integer(r.need(root, "", "sequence_length"), "sequence_length", 1);
      w.micro_batch = r.integer(r.need(root, "", "micro_batch"), "micro_batch", 1);
      if (root["micro_batches"]) w.micro_batches = r.integer(root["micro_batches"], "micro_batches", 1);
      // Sizes stay far inside 64 bits: an activation (or all-to-all buffer) of at most 2^50 elements.
      const double elements = static_cast<double>(w.micro_batch) * w.sequence_length * w.hidden * std::max(1, w.top_k);
      if (elements > 0x1p50) {
        r.fail(root["micro_batch"],
               fmt::format("micro_batch x sequence_length x model.hidden{} = {:.3g} elements: above 2^50",
                           w.top_k > 0 ? " x model.moe.top_k" : "", elements));
      }
    }

    const YAML::Node par = r.need(root, "", "parallel");
    r.only_keys(par, "parallel", {"ranks", "ranks_per_node", "tp", "pp", "dp", "ep"});
    w.ranks = r.integer(r.need(par, "parallel", "ranks"), "parallel.ranks", 1);
    if (w.ranks > kMaxRanks) r.fail(par["ranks"], fmt::format("parallel.ranks: {} is above {}", w.ranks, kMaxRanks));
    w.ranks_per_node = r.integer(r.need(par, "parallel", "ranks_per_node"), "parallel.ranks_per_node", 1);
    w.dp = r.integer(r.need(par, "parallel", "dp"), "parallel.dp", 1);
    if (par["tp"]) w.tp = r.integer(par["tp"], "parallel.tp", 1);
    if (par["pp"]) w.pp = r.integer(par["pp"], "parallel.pp", 1);
    if (par["ep"]) w.ep = r.integer(par["ep"], "parallel.ep", 1);
    const long long product = 1LL * w.tp * w.pp * w.dp;
    if (product != w.ranks) {
      r.fail(par, fmt::format("parallel: tp x pp x dp = {} x {} x {} = {}, but ranks is {}", w.tp, w.pp, w.dp, product,
                              w.ranks));
    }
    if (w.ranks % w.ranks_per_node != 0) {
      r.fail(par["ranks_per_node"],
             fmt::format("parallel.ranks_per_node: {} does not divide ranks ({})", w.ranks_per_node, w.ranks));
    }
    if (w.dp % w.ep != 0) {
      r.fail(par["ep"] ? par["ep"] : par, fmt::format("parallel.ep: {} does not divide dp ({}): expert parallelism "
                                                      "splits the data-parallel group",
                                                      w.ep, w.dp));
    }
    if (w.ep > 1 && w.experts == 0) r.fail(par["ep"], "parallel.ep: above 1 needs model.moe");
    if (w.experts > 0 && w.experts % w.ep != 0) {
      r.fail(par["ep"] ? par["ep"] : par,
             fmt::format("parallel.ep: {} does not divide model.moe.experts ({})", w.ep, w.experts));
    }
    if (w.layers % w.pp != 0) {
      r.fail(par["pp"], fmt::format("parallel.pp: {} does not divide model.layers ({})", w.pp, w.layers));
    }
    if (w.moe_layers % w.pp != 0) {
      r.fail(par["pp"], fmt::format("parallel.pp: {} does not divide model.moe.moe_layers ({})", w.pp, w.moe_layers));
    }
    if (serving) w.serving = read_serving(r, serving, w);

    if (const YAML::Node routing =
            model["moe"] && model["moe"]["routing"] ? model["moe"]["routing"] : YAML::Node(YAML::NodeType::Undefined)) {
      const std::string text = r.scalar(routing, "model.moe.routing");
      // The router of `run --moe`: its spec text, one micro-batch's tokens per rank (a serving
      // workload: one decode step's batch; its prefill routes its own tokens, step_collectives).
      const std::uint64_t tokens = w.serving ? static_cast<std::uint64_t>(w.serving->batch)
                                             : 1ULL * static_cast<unsigned>(w.micro_batch) * w.sequence_length;
      const std::string spec = fmt::format("{},{},{},{},{}", w.experts, w.top_k, tokens, w.hidden, text);
      try {
        w.routing = parse_moe_spec(spec);
      } catch (const UsageError& e) {
        r.fail(routing,
               fmt::format("model.moe.routing: '{}' is not uniform, zipf:S or hot:E:FRACTION ({})", text, e.what()));
      }
    }

    if (root["sharding"]) {
      const auto s = parse_sharding(r.scalar(root["sharding"], "sharding"));
      if (!s)
        r.fail(root["sharding"],
               fmt::format("sharding: '{}' is not one of none, zero1, zero2, zero3, fsdp", root["sharding"].Scalar()));
      w.sharding = *s;
    }
    if (root["shard_group"]) {
      if (w.sharding != Sharding::fsdp && w.sharding != Sharding::zero3) {
        r.fail(root["shard_group"], "shard_group: only with sharding fsdp or zero3");
      }
      w.shard_group = r.integer(root["shard_group"], "shard_group", 1);
      if (w.dp % w.shard_group != 0) {
        r.fail(root["shard_group"], fmt::format("shard_group: {} does not divide dp ({})", w.shard_group, w.dp));
      }
    }
    if (root["bucket"]) {
      try {
        w.bucket_bytes = parse_bytes(r.scalar(root["bucket"], "bucket"));
      } catch (const UsageError& e) {
        r.fail(root["bucket"], fmt::format("bucket: {}", e.what()));
      }
      if (w.bucket_bytes == 0) r.fail(root["bucket"], "bucket: must be above 0 bytes");
    }
    // `ccbench checkpoint` (docs/checkpoint.md): bytes a parameter takes in a checkpoint.
    if (const YAML::Node ckpt = root["checkpoint"]) {
      r.only_keys(ckpt, "checkpoint", {"bytes_per_parameter"});
      if (ckpt["bytes_per_parameter"]) {
        w.checkpoint_bytes_per_parameter = r.count(ckpt["bytes_per_parameter"], "checkpoint.bytes_per_parameter");
        if (!(w.checkpoint_bytes_per_parameter > 0) || w.checkpoint_bytes_per_parameter > 1024) {
          r.fail(ckpt["bytes_per_parameter"], "checkpoint.bytes_per_parameter: must be above 0 and at most 1024");
        }
      }
    }
  } catch (const YAML::Exception& e) {
    throw ParseError(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
  return w;
}

Workload load_workload(const std::filesystem::path& path) {
  // read_input_file refuses a FIFO (it would block), a folder, a device (/dev/zero never ends).
  return parse_workload(read_input_file(path), path.string());
}

int nodes_spanned(int size, int stride, int ranks_per_node) {
  // Members i x stride sit on node floor(i x stride / R). With stride >= R no two share a node; with
  // stride < R consecutive members are at most one node apart, so every node from the first to the
  // last is used.
  if (size <= 0) return 0;
  if (stride >= ranks_per_node) return size;
  return static_cast<int>(1LL * (size - 1) * stride / ranks_per_node) + 1;
}

namespace {

std::uint64_t to_bytes(double v) { return static_cast<std::uint64_t>(std::llround(v)); }

// `total` bytes in equal buckets of at most `bucket` bytes: {bytes per bucket, buckets}.
std::pair<std::uint64_t, std::uint64_t> buckets(double total, std::uint64_t bucket) {
  const auto n = static_cast<std::uint64_t>(std::ceil(total / static_cast<double>(bucket)));
  return {to_bytes(total / static_cast<double>(n)), n};
}

struct Group {
  int size;
  int stride;
};

// Gradient and parameter traffic of one parameter set among its data-parallel replicas.
// `params` is the count one rank holds before data-parallel sharding; `units` the layers it is wrapped in.
void data_parallel(const Workload& w, std::vector<StepCollective>& out, const std::string& label, double params,
                   int units, Group dp, int shard, bool allow_hybrid) {
  if (dp.size <= 1 || params <= 0) return;
  const double b = static_cast<double>(info(w.dtype).size_bytes);
  const double g = static_cast<double>(info(w.grad_dtype).size_bytes);
  const double grads = params * g;    // G: gradient bytes before sharding
  const double weights = params * b;  // W: parameter bytes before sharding
  const auto mb = static_cast<std::uint64_t>(w.micro_batches);
  auto add = [&](std::string what, StepOp op, std::uint64_t bytes, Group grp, std::uint64_t count, bool overlaps) {
    out.push_back(
        {std::move(what), op, bytes, grp.size, nodes_spanned(grp.size, grp.stride, w.ranks_per_node), count, overlaps});
  };
  switch (w.sharding) {
    case Sharding::none: {
      const auto [bytes, n] = buckets(grads, w.bucket_bytes);
      add(label + "gradient all-reduce, per bucket", StepOp::allreduce, bytes, dp, n, true);
      break;
    }
    case Sharding::zero1:
    case Sharding::zero2: {
      const auto [gbytes, gn] = buckets(grads, w.bucket_bytes);
      if (w.sharding == Sharding::zero1) {
        add(label + "gradient all-reduce, per bucket", StepOp::allreduce, gbytes, dp, gn, true);
      } else {
        add(label + "gradient reduce-scatter, per bucket and micro-batch", StepOp::reduce_scatter, gbytes, dp, gn * mb,
            true);
      }
      const auto [pbytes, pn] = buckets(weights, w.bucket_bytes);
      add(label + "parameter all-gather after the optimizer step, per bucket", StepOp::allgather, pbytes, dp, pn,
          false);
      break;
    }
    case Sharding::zero3:
    case Sharding::fsdp: {
      const int s = allow_hybrid && shard > 0 ? shard : dp.size;
      const Group sg{s, dp.stride};
      const auto u = static_cast<std::uint64_t>(units);
      if (s > 1) {
        add(label + "parameter all-gather, per layer (forward and backward)", StepOp::allgather,
            to_bytes(weights / units), sg, 2 * u * mb, true);
        add(label + "gradient reduce-scatter, per layer", StepOp::reduce_scatter, to_bytes(grads / units), sg, u * mb,
            true);
      }
      if (s < dp.size) {
        const Group replicas{dp.size / s, dp.stride * s};
        add(label + "gradient all-reduce across shard replicas, per layer", StepOp::allreduce,
            to_bytes(grads / units / s), replicas, u * mb, true);
      }
      break;
    }
  }
}

// The rows of an expert exchange over `ep` ranks (members `stride` apart), `tokens` tokens per rank:
// with model.moe.routing the router's dispatch and its transpose, the combine, each `routed_calls`
// times and priced at the most loaded rank's off-rank bytes; without it an even all-to-all of
// tokens x top_k x hidden elements, `alltoall_calls` times.
struct ExpertRows {
  std::string dispatch, combine, alltoall;
  std::uint64_t routed_calls = 0, alltoall_calls = 0;
};

void expert_exchange(const Workload& w, std::vector<StepCollective>& out, std::uint64_t tokens, int ep, int stride,
                     const ExpertRows& rows) {
  if (w.experts == 0 || ep <= 1) return;
  const int nodes = nodes_spanned(ep, stride, w.ranks_per_node);
  const auto b = info(w.dtype).size_bytes;
  if (w.routing) {
    // The router's dispatch over the ep ranks: the same matrix as `run --moe` with this seed.
    MoeSpec spec = *w.routing;
    spec.tokens_per_rank = tokens;
    const MoeRoute route = route_tokens(spec, ep, w.routing_seed);
    const MatrixLoad load = load_of(dispatch_matrix(route, static_cast<std::uint64_t>(w.hidden), b));
    const double imbalance = load.mean_off_rank_send_bytes > 0
                                 ? static_cast<double>(load.most_loaded_off_rank_bytes) / load.mean_off_rank_send_bytes
                                 : 1.0;
    // The combine is the dispatch's transpose: the same most loaded rank, the same bytes.
    for (const auto& [what, op] : {std::pair{rows.dispatch, StepOp::moe_dispatch}, {rows.combine, StepOp::moe_combine}})
      out.push_back({what, op, to_bytes(load.mean_send_bytes), ep, nodes, rows.routed_calls, false,
                     load.most_loaded_off_rank_bytes, imbalance});
  } else {
    out.push_back({rows.alltoall, StepOp::alltoall,
                   to_bytes(static_cast<double>(tokens) * w.top_k * w.hidden * static_cast<double>(b)), ep, nodes,
                   rows.alltoall_calls, false});
  }
}

// One forward pass of `tokens` tokens through every layer, as a serving request waits on it: the
// stages run in turn, so every layer's calls are on its path (not one stage's, as in a training
// step whose stages overlap), and the activations cross pp - 1 stage boundaries. `stride`: the rank
// distance between pipeline stages.
void forward_pass(const Workload& w, std::vector<StepCollective>& out, double tokens, int tp, int pp, int ep,
                  int stride, const std::string& whose) {
  const double activation = tokens * w.hidden * static_cast<double>(info(w.dtype).size_bytes);
  const int R = w.ranks_per_node;
  if (tp > 1) {
    out.push_back({fmt::format("tensor-parallel all-reduce of {} activations, 2 per layer", whose), StepOp::allreduce,
                   to_bytes(activation), tp, nodes_spanned(tp, 1, R), 2ULL * static_cast<std::uint64_t>(w.layers),
                   false});
  }
  const auto moe_layers = static_cast<std::uint64_t>(w.moe_layers);
  expert_exchange(w, out, static_cast<std::uint64_t>(tokens), ep, tp,
                  {fmt::format("expert dispatch of {} tokens, per MoE layer", whose),
                   fmt::format("expert combine of {} tokens, per MoE layer", whose),
                   fmt::format("expert all-to-all of {} tokens (dispatch + combine), per MoE layer", whose), moe_layers,
                   2 * moe_layers});
  if (pp > 1) {
    out.push_back({fmt::format("pipeline send/recv of {} activations, per stage boundary", whose), StepOp::sendrecv,
                   to_bytes(activation / tp), 2, nodes_spanned(2, stride, R), static_cast<std::uint64_t>(pp - 1),
                   false});
  }
}

// A serving request (docs/model.md "Planning a serving step"): the prefill of its prompt, the move of
// its KV cache to the decode ranks when they are others, and one decode step, which recurs once per
// generated token and is priced at the workload's percentile.
std::vector<StepCollective> serving_collectives(const Workload& w) {
  const Serving& s = *w.serving;
  std::vector<StepCollective> out;
  auto tag = [&out](std::size_t from, Phase phase, double percentile, double per_request) {
    for (std::size_t i = from; i < out.size(); ++i) {
      out[i].phase = phase;
      out[i].percentile = percentile;
      out[i].per_request = per_request;
    }
  };
  forward_pass(w, out, static_cast<double>(s.prefill_batch) * s.prompt_tokens, s.prefill_tp, s.prefill_pp, s.prefill_ep,
               s.prefill_tp * s.prefill_ep, "the prompts'");
  tag(0, Phase::prefill, 0, 1);
  if (s.disaggregated) {
    // Each prefill rank holds the KV of its heads (tp) and its layers (pp) and sends that shard to
    // the decode rank that serves them; the shards move at once, one pair of ranks each.
    const std::size_t from = out.size();
    const double shards = static_cast<double>(s.prefill_tp) * s.prefill_pp;
    out.push_back({"KV cache of one request, each prefill rank's shard to its decode rank", StepOp::sendrecv,
                   to_bytes(static_cast<double>(s.prompt_tokens) * s.kv_bytes_per_token / shards), 2, 2, 1, false});
    tag(from, Phase::kv_transfer, 0, 1);
  }
  const std::size_t from = out.size();
  forward_pass(w, out, s.batch, w.tp, w.pp, w.ep, w.tp * w.dp, "the batch's");
  tag(from, Phase::decode, s.percentile, s.generated_tokens);
  return out;
}

}  // namespace

std::vector<StepCollective> step_collectives(const Workload& w) {
  if (w.serving) return serving_collectives(w);
  std::vector<StepCollective> out;
  const double b = static_cast<double>(info(w.dtype).size_bytes);
  const auto mb = static_cast<std::uint64_t>(w.micro_batches);
  const int stage_layers = w.layers / w.pp;
  const int stage_moe_layers = w.moe_layers / w.pp;
  // Activations of one micro-batch at a layer boundary: micro_batch x sequence x hidden elements.
  const double activation = static_cast<double>(w.micro_batch) * w.sequence_length * w.hidden * b;
  const int R = w.ranks_per_node;

  if (w.tp > 1) {
    out.push_back({"tensor-parallel all-reduce of activations, 2 per layer forward + 2 backward", StepOp::allreduce,
                   to_bytes(activation), w.tp, nodes_spanned(w.tp, 1, R),
                   4ULL * static_cast<std::uint64_t>(stage_layers) * mb, false});
  }
  // Each exchange runs once forward and once backward (the other's gradient), per MoE layer and
  // micro-batch.
  const auto moe_calls = static_cast<std::uint64_t>(stage_moe_layers) * mb;
  expert_exchange(
      w, out, 1ULL * static_cast<unsigned>(w.micro_batch) * w.sequence_length, w.ep, w.tp,
      {"expert dispatch (forward) and the combine's gradient (backward), per MoE layer",
       "expert combine (forward) and the dispatch's gradient (backward), per MoE layer",
       "expert all-to-all (dispatch + combine, forward and backward), per MoE layer", 2 * moe_calls, 4 * moe_calls});
  if (w.pp > 1) {
    const int stride = w.tp * w.dp;
    out.push_back({"pipeline send/recv of activations and their gradients, per micro-batch", StepOp::sendrecv,
                   to_bytes(activation / w.tp), 2, nodes_spanned(2, stride, R), 2ULL * mb, false});
  }
  // Parameters one rank holds before data-parallel sharding: the dense part split by TP and PP; the
  // experts split by EP as well, and kept in step only among the dp / ep ranks holding the same experts.
  const double dense = (w.parameters - w.expert_parameters) / (static_cast<double>(w.tp) * w.pp);
  const double expert = w.expert_parameters / (static_cast<double>(w.tp) * w.pp * w.ep);
  data_parallel(w, out, w.experts > 0 ? "dense " : "", dense, stage_layers, Group{w.dp, w.tp}, w.shard_group, true);
  if (w.experts > 0) {
    data_parallel(w, out, "expert ", expert, stage_moe_layers, Group{w.dp / w.ep, w.tp * w.ep}, 0, false);
  }
  return out;
}

}  // namespace ccbench::model
