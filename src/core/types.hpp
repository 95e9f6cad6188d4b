// Ops, element types and reduction operators: the vocabulary every other layer shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/enums.hpp"

namespace ccbench {

struct OpInfo {
  Op op;
  std::string_view name;
  bool is_reduction;  // takes a redop
  bool is_collective;
};

struct DTypeInfo {
  DType dtype;
  std::string_view name;  // nccl-tests spelling: "float", "double", "half", ...
  std::size_t size_bytes;
  bool is_signed;
  bool is_floating;
  // Largest integer N such that every integer in [-N, N] is exactly representable.
  std::int64_t exact_int_limit;
};

const OpInfo& info(Op op);
const DTypeInfo& info(DType dtype);
std::string_view name(Op op);
std::string_view name(DType dtype);
std::string_view name(RedOp redop);

std::span<const Op> all_collective_ops();
std::span<const Op> all_fabric_ops();
std::span<const DType> all_dtypes();
std::span<const RedOp> all_redops();  // without `none`

// Parsers accept the canonical names and common aliases (fp32, f32, bf16, ...).
std::optional<Op> parse_op(std::string_view text);
std::optional<DType> parse_dtype(std::string_view text);
std::optional<RedOp> parse_redop(std::string_view text);

// Comma-separated op list; throws UsageError naming the bad element.
std::vector<Op> parse_op_list(std::string_view text);

}  // namespace ccbench
