#include "core/types.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/comma_list.hpp"
#include "core/error.hpp"

namespace ccbench {
namespace {

constexpr std::array kOps = {
    OpInfo{Op::allreduce, "allreduce", true, true},
    OpInfo{Op::allgather, "allgather", false, true},
    OpInfo{Op::alltoall, "alltoall", false, true},
    OpInfo{Op::reduce_scatter, "reduce_scatter", true, true},
    OpInfo{Op::broadcast, "broadcast", false, true},
    OpInfo{Op::fabric_pingpong, "fabric_pingpong", false, false},
    OpInfo{Op::fabric_bw, "fabric_bw", false, false},
    OpInfo{Op::fabric_bibw, "fabric_bibw", false, false},
    OpInfo{Op::fabric_write, "fabric_write", false, false},
    OpInfo{Op::fabric_read, "fabric_read", false, false},
    OpInfo{Op::checkpoint_write, "checkpoint_write", false, false},
    OpInfo{Op::checkpoint_read, "checkpoint_read", false, false},
    OpInfo{Op::checkpoint_commit, "checkpoint_commit", false, false},
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

constexpr std::array<std::string_view, 6> kRedOpNames = {"sum", "prod", "min", "max", "avg", "none"};

constexpr std::array kCollectiveOps = {Op::allreduce, Op::allgather, Op::alltoall, Op::reduce_scatter,
                                       Op::broadcast};
constexpr std::array kFabricOps = {Op::fabric_pingpong, Op::fabric_bw, Op::fabric_bibw, Op::fabric_write,
                                   Op::fabric_read};
constexpr std::array kAllDTypes = {DType::int8,    DType::uint8,   DType::int32,    DType::int64,    DType::float32,
                                   DType::float64, DType::float16, DType::bfloat16, DType::fp8_e4m3, DType::fp8_e5m2};
constexpr std::array kAllRedOps = {RedOp::sum, RedOp::prod, RedOp::min, RedOp::max, RedOp::avg};

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
std::string_view name(RedOp redop) { return kRedOpNames[static_cast<std::size_t>(redop)]; }

std::span<const Op> all_collective_ops() { return kCollectiveOps; }
std::span<const Op> all_fabric_ops() { return kFabricOps; }
std::span<const DType> all_dtypes() { return kAllDTypes; }
std::span<const RedOp> all_redops() { return kAllRedOps; }

std::optional<Op> parse_op(std::string_view text) {
  std::string key = lower(text);
  std::erase(key, '-');
  std::erase(key, '_');
  for (const auto& entry : kOps) {
    std::string candidate(entry.name);
    std::erase(candidate, '_');
    if (candidate == key) return entry.op;
  }
  if (key == "bcast") return Op::broadcast;
  if (key == "reducescatter") return Op::reduce_scatter;
  if (key == "pingpong") return Op::fabric_pingpong;
  if (key == "bw") return Op::fabric_bw;
  if (key == "bibw") return Op::fabric_bibw;
  if (key == "write") return Op::fabric_write;
  if (key == "read") return Op::fabric_read;
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
  for (std::size_t i = 0; i < kRedOpNames.size(); ++i) {
    if (kRedOpNames[i] == key) return static_cast<RedOp>(i);
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
