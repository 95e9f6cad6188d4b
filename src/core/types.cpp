#include "core/types.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/pattern.hpp"

namespace ccbench {
namespace {

// One row per Op, in the enum's order (checked below). The aliases are what nccl-tests and
// `ccbench fabric --ops` call them.
// Columns: op, name, alias, family, is_reduction, buffers, bus factor.
constexpr std::array kOps = {
    OpInfo{Op::allreduce, "allreduce", "", OpFamily::collective, true, OpBuffers::whole, BusFactor::allreduce_ring},
    OpInfo{Op::allgather, "allgather", "", OpFamily::collective, false, OpBuffers::gather, BusFactor::ring},
    OpInfo{Op::alltoall, "alltoall", "", OpFamily::collective, false, OpBuffers::exchange, BusFactor::ring},
    OpInfo{Op::reduce_scatter, "reduce_scatter", "", OpFamily::collective, true, OpBuffers::scatter, BusFactor::ring},
    OpInfo{Op::broadcast, "broadcast", "bcast", OpFamily::collective, false, OpBuffers::whole, BusFactor::one},
    OpInfo{Op::sendrecv, "sendrecv", "", OpFamily::collective, false, OpBuffers::whole, BusFactor::one},
    OpInfo{Op::gather, "gather", "", OpFamily::collective, false, OpBuffers::gather, BusFactor::ring},
    OpInfo{Op::scatter, "scatter", "", OpFamily::collective, false, OpBuffers::scatter, BusFactor::ring},
    OpInfo{Op::reduce, "reduce", "", OpFamily::collective, true, OpBuffers::whole, BusFactor::one},
    OpInfo{Op::alltoallv, "alltoallv", "", OpFamily::collective, false, OpBuffers::matrix, BusFactor::off_rank},
    OpInfo{Op::moe_dispatch, "moe_dispatch", "", OpFamily::collective, false, OpBuffers::matrix, BusFactor::off_rank},
    OpInfo{Op::moe_combine, "moe_combine", "", OpFamily::collective, false, OpBuffers::matrix, BusFactor::off_rank},
    OpInfo{Op::moe_pair, "moe_pair", "", OpFamily::collective, false, OpBuffers::matrix, BusFactor::off_rank},
    OpInfo{Op::fabric_pingpong, "fabric_pingpong", "pingpong", OpFamily::fabric, false, OpBuffers::whole,
           BusFactor::one},
    OpInfo{Op::fabric_bw, "fabric_bw", "bw", OpFamily::fabric, false, OpBuffers::whole, BusFactor::one},
    OpInfo{Op::fabric_bibw, "fabric_bibw", "bibw", OpFamily::fabric, false, OpBuffers::whole,
           BusFactor::both_directions},
    OpInfo{Op::fabric_write, "fabric_write", "write", OpFamily::fabric, false, OpBuffers::whole, BusFactor::one},
    OpInfo{Op::fabric_read, "fabric_read", "read", OpFamily::fabric, false, OpBuffers::whole, BusFactor::one},
    OpInfo{Op::checkpoint_write, "checkpoint_write", "", OpFamily::checkpoint, false, OpBuffers::whole, BusFactor::one},
    OpInfo{Op::checkpoint_read, "checkpoint_read", "", OpFamily::checkpoint, false, OpBuffers::whole, BusFactor::one},
    OpInfo{Op::checkpoint_commit, "checkpoint_commit", "", OpFamily::checkpoint, false, OpBuffers::whole,
           BusFactor::one},
};

constexpr std::array kDTypes = {
    DTypeInfo{DType::int8, "int8", 1, true, false, 127},
    DTypeInfo{DType::uint8, "uint8", 1, false, false, 255},
    DTypeInfo{DType::int32, "int32", 4, true, false, 2147483647LL},
    DTypeInfo{DType::int64, "int64", 8, true, false, 9007199254740992LL},
    DTypeInfo{DType::float32, "float", 4, true, true, 16777216LL},
    DTypeInfo{DType::float64, "double", 8, true, true, 9007199254740992LL},
    DTypeInfo{DType::float16, "half", 2, true, true, 2048},
    DTypeInfo{DType::bfloat16, "bfloat16", 2, true, true, 256},
    DTypeInfo{DType::fp8_e4m3, "fp8_e4m3", 1, true, true, 16},
    DTypeInfo{DType::fp8_e5m2, "fp8_e5m2", 1, true, true, 8},
};

struct RedOpInfo {
  RedOp redop;
  std::string_view name;
};

constexpr std::array kRedOps = {
    RedOpInfo{RedOp::sum, "sum"}, RedOpInfo{RedOp::prod, "prod"}, RedOpInfo{RedOp::min, "min"},
    RedOpInfo{RedOp::max, "max"}, RedOpInfo{RedOp::avg, "avg"},   RedOpInfo{RedOp::none, "none"},
};

struct BackendInfo {
  BackendKind backend;
  std::string_view name;
};
constexpr std::array kBackends = {BackendInfo{BackendKind::mpi, "mpi"}, BackendInfo{BackendKind::nccl, "nccl"},
                                  BackendInfo{BackendKind::libfabric, "libfabric"}};

struct NcclPathInfo {
  NcclPath path;
  std::string_view name;
};
constexpr std::array kNcclPaths = {NcclPathInfo{NcclPath::nvlink, "nvlink"}, NcclPathInfo{NcclPath::efa, "efa"},
                                   NcclPathInfo{NcclPath::all, "all"}};

// Each table holds every enumerator exactly once, in the enum's order, so info(x) = table[x]: a
// new enumerator without its row (or a row out of place) does not compile.
template <typename Enum, typename Table, typename Key>
constexpr bool covers_in_order(const Table& table, Enum last, Key key) {
  if (table.size() != static_cast<std::size_t>(last) + 1) return false;
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (static_cast<std::size_t>(key(table[i])) != i) return false;
  }
  return true;
}
static_assert(covers_in_order(kOps, kLastOp, [](const OpInfo& row) { return row.op; }),
              "kOps must hold one row per Op, in the enum's order");
static_assert(covers_in_order(kDTypes, kLastDType, [](const DTypeInfo& row) { return row.dtype; }),
              "kDTypes must hold one row per DType, in the enum's order");
static_assert(covers_in_order(kRedOps, kLastRedOp, [](const RedOpInfo& row) { return row.redop; }),
              "kRedOps must hold one row per RedOp, in the enum's order");
static_assert(covers_in_order(kBackends, kLastBackendKind, [](const BackendInfo& row) { return row.backend; }),
              "kBackends must hold one row per BackendKind, in the enum's order");
static_assert(covers_in_order(kNcclPaths, kLastNcclPath, [](const NcclPathInfo& row) { return row.path; }),
              "kNcclPaths must hold one row per NcclPath, in the enum's order");
constexpr auto kAllBackends = [] {
  std::array<BackendKind, kBackends.size()> all{};
  for (std::size_t i = 0; i < kBackends.size(); ++i) all[i] = kBackends[i].backend;
  return all;
}();
// The device code's reduction test (core/pattern.hpp, which cannot read this table) agrees with it.
static_assert([] {
  for (const OpInfo& row : kOps) {
    if (row.is_reduction != pattern::is_reduction(row.op)) return false;
  }
  return true;
}(), "core/pattern.hpp's is_reduction must match kOps");

// The ops of one family, in table order, computed at compile time.
template <OpFamily family>
constexpr auto ops_of() {
  constexpr std::size_t count = [] {
    std::size_t n = 0;
    for (const OpInfo& row : kOps) n += row.family == family ? 1 : 0;
    return n;
  }();
  std::array<Op, count> ops{};
  std::size_t i = 0;
  for (const OpInfo& row : kOps) {
    if (row.family == family) ops[i++] = row.op;
  }
  return ops;
}
constexpr auto kCollectiveOps = ops_of<OpFamily::collective>();
constexpr auto kFabricOps = ops_of<OpFamily::fabric>();

constexpr auto kAllDTypes = [] {
  std::array<DType, kDTypes.size()> all{};
  for (std::size_t i = 0; i < kDTypes.size(); ++i) all[i] = kDTypes[i].dtype;
  return all;
}();
constexpr auto kAllRedOps = [] {  // every reduction but `none` (the last row)
  std::array<RedOp, kRedOps.size() - 1> all{};
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = kRedOps[i].redop;
  return all;
}();
static_assert(kRedOps.back().redop == RedOp::none, "`none` is the last RedOp: all_redops() leaves it out");

template <typename Items, typename Name>
std::string joined(const Items& items, std::string_view separator, Name name_of) {
  std::string out;
  for (const auto& item : items) {
    const std::string_view name = name_of(item);
    if (name.empty()) continue;
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const OpInfo& info(Op op) { return kOps[static_cast<std::size_t>(op)]; }
const DTypeInfo& info(DType dtype) { return kDTypes[static_cast<std::size_t>(dtype)]; }
std::string_view name(Op op) { return info(op).name; }
std::string_view name(DType dtype) { return info(dtype).name; }
std::string_view name(RedOp redop) { return kRedOps[static_cast<std::size_t>(redop)].name; }

std::span<const Op> all_collective_ops() { return kCollectiveOps; }
std::span<const Op> all_fabric_ops() { return kFabricOps; }
std::span<const DType> all_dtypes() { return kAllDTypes; }
std::span<const RedOp> all_redops() { return kAllRedOps; }

std::string_view name(BackendKind backend) { return kBackends[static_cast<std::size_t>(backend)].name; }
std::string_view name(NcclPath path) { return kNcclPaths[static_cast<std::size_t>(path)].name; }
std::span<const BackendKind> all_backends() { return kAllBackends; }

BackendKind backend_flag(std::string_view text) {
  for (const BackendInfo& row : kBackends) {
    if (row.name == text) return row.backend;
  }
  throw UsageError("--backend: unknown backend '" + std::string(text) + "' (known: " +
                   joined(kAllBackends, ", ", [](BackendKind b) { return name(b); }) + ")");
}

NcclPath nccl_path_flag(std::string_view text) {
  std::string expected;  // "nvlink, efa or all"
  for (std::size_t i = 0; i < kNcclPaths.size(); ++i) {
    if (kNcclPaths[i].name == text) return kNcclPaths[i].path;
    expected += (i == 0 ? "" : i + 1 == kNcclPaths.size() ? " or " : ", ") + std::string(kNcclPaths[i].name);
  }
  throw UsageError("--path: expected " + expected + ", got '" + std::string(text) + "'");
}

std::string op_names(std::span<const Op> ops, std::string_view separator) {
  return joined(ops, separator, [](Op op) { return name(op); });
}
std::string op_aliases(std::span<const Op> ops, std::string_view separator) {
  return joined(ops, separator, [](Op op) { return info(op).alias; });
}
std::string dtype_names(std::string_view separator) {
  return joined(kAllDTypes, separator, [](DType dtype) { return name(dtype); });
}
std::string redop_names(std::string_view separator) {
  return joined(kAllRedOps, separator, [](RedOp redop) { return name(redop); });
}

std::optional<Op> parse_op(std::string_view text) {
  std::string key = lower(text);
  std::erase(key, '-');
  std::erase(key, '_');
  for (const auto& entry : kOps) {
    std::string candidate(entry.name);
    std::erase(candidate, '_');
    if (candidate == key || (!entry.alias.empty() && entry.alias == key)) return entry.op;
  }
  return std::nullopt;
}

std::optional<DType> parse_dtype(std::string_view text) {
  const std::string key = lower(text);
  for (const auto& entry : kDTypes) {
    if (entry.name == key) return entry.dtype;
  }
  struct Alias {
    std::string_view alias;
    DType dtype;
  };
  static constexpr std::array kAliases = {
      Alias{"char", DType::int8},         Alias{"i8", DType::int8},          Alias{"u8", DType::uint8},
      Alias{"int", DType::int32},         Alias{"i32", DType::int32},        Alias{"i64", DType::int64},
      Alias{"float32", DType::float32},   Alias{"fp32", DType::float32},     Alias{"f32", DType::float32},
      Alias{"float64", DType::float64},   Alias{"fp64", DType::float64},     Alias{"f64", DType::float64},
      Alias{"float16", DType::float16},   Alias{"fp16", DType::float16},     Alias{"f16", DType::float16},
      Alias{"bf16", DType::bfloat16},     Alias{"e4m3", DType::fp8_e4m3},    Alias{"f8e4m3", DType::fp8_e4m3},
      Alias{"e5m2", DType::fp8_e5m2},     Alias{"f8e5m2", DType::fp8_e5m2},
  };
  for (const auto& entry : kAliases) {
    if (entry.alias == key) return entry.dtype;
  }
  return std::nullopt;
}

std::optional<RedOp> parse_redop(std::string_view text) {
  const std::string key = lower(text);
  for (const RedOpInfo& entry : kRedOps) {
    if (entry.name == key) return entry.redop;
  }
  return std::nullopt;
}

std::vector<Op> parse_op_list(std::string_view text) {
  std::vector<Op> ops;
  for (const std::string_view item : split_commas(text)) {
    if (item.empty()) continue;
    const auto op = parse_op(item);
    if (!op) throw UsageError("unknown op '" + std::string(item) + "'");
    if (std::ranges::find(ops, *op) == ops.end()) ops.push_back(*op);
  }
  if (ops.empty()) throw UsageError("empty op list");
  return ops;
}

}  // namespace ccbench
