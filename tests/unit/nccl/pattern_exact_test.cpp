// The seeded pattern (core/pattern.hpp, the header the NCCL kernels compile for the device) must
// make every reduction exact in the narrowest type, in any order NCCL may reduce in (ring, tree,
// NVLS), for every rank count up to 64. The reduction is simulated here in the real narrow type:
// a software round-to-nearest-even to the type's precision, cross-checked against CUDA's own host
// conversions (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/pattern.hpp"
#include "core/types.hpp"

namespace ccbench {
namespace {

// Significand bits (with the implicit one) of the floating types; 0 for integers.
int precision(DType d) {
  switch (d) {
    case DType::float32:
      return 24;
    case DType::float64:
      return 53;
    case DType::float16:
      return 11;
    case DType::bfloat16:
      return 8;
    case DType::fp8_e4m3:
      return 4;
    case DType::fp8_e5m2:
      return 3;
    default:
      return 0;
  }
}

// Largest finite value (floating) or the integer range.
double max_value(DType d) {
  switch (d) {
    case DType::int8:
      return 127;
    case DType::uint8:
      return 255;
    case DType::int32:
      return 2147483647.0;
    case DType::int64:
      return 9.2e18;
    case DType::float16:
      return 65504;
    case DType::bfloat16:
      return 3.38e38;
    case DType::fp8_e4m3:
      return 448;
    case DType::fp8_e5m2:
      return 57344;
    default:
      return 1e300;
  }
}

double min_value(DType d) {
  if (d == DType::uint8) return 0;
  if (d == DType::int8) return -128;
  return -max_value(d);
}

// Rounds v to the type: round to nearest even at the type's precision (normal range; the pattern's
// values are integers and 1/n, far from subnormals), integers truncate like C casts.
double round_to(DType d, double v) {
  const int p = precision(d);
  if (p == 0) return std::trunc(v);
  if (v == 0) return 0;
  int e = 0;
  std::frexp(v, &e);  // v = m * 2^e, 0.5 <= |m| < 1
  const double scale = std::ldexp(1.0, p - e);
  return std::nearbyint(v * scale) / scale;
}

bool representable(DType d, double v) { return round_to(d, v) == v && v >= min_value(d) && v <= max_value(d); }

double ulp(DType d, double v) { return v == 0 ? 0 : std::ldexp(1.0, std::ilogb(v) - (precision(d) - 1)); }

pattern::Params params_for(DType d, RedOp redop, int nranks, std::uint32_t seed) {
  const DTypeInfo& t = info(d);
  pattern::Params p;
  p.nranks = nranks;
  p.seed = seed;
  p.exact_limit = t.exact_int_limit;
  p.is_signed = t.is_signed;
  p.is_floating = t.is_floating;
  p.redop = redop;
  return p;
}

double apply(RedOp op, double a, double b) {
  switch (op) {
    case RedOp::prod:
      return a * b;
    case RedOp::min:
      return std::min(a, b);
    case RedOp::max:
      return std::max(a, b);
    default:
      return a + b;
  }
}

// Reduces in the narrow type in a given order: sequential, reversed, or a pairwise tree.
double reduce_in_type(DType d, RedOp op, const std::vector<double>& v, int order) {
  std::vector<double> x = v;
  if (order == 1) std::reverse(x.begin(), x.end());
  if (order == 2) {
    while (x.size() > 1) {
      std::vector<double> next;
      for (std::size_t i = 0; i + 1 < x.size(); i += 2) next.push_back(round_to(d, apply(op, x[i], x[i + 1])));
      if (x.size() % 2 == 1) next.push_back(x.back());
      x = std::move(next);
    }
    return x[0];
  }
  double acc = x[0];
  for (std::size_t i = 1; i < x.size(); ++i) acc = round_to(d, apply(op, acc, x[i]));
  return acc;
}

constexpr std::uint32_t kSeeds[] = {0u, 0xC0FFEEu};
constexpr std::uint64_t kIndices = 64;

TEST(PatternExact, SoftwareRoundingMatchesCudaHostConversions) {
  for (int i = -600; i <= 600; ++i) {
    for (int den : {1, 2, 3, 7, 64}) {
      const float v = static_cast<float>(i) / static_cast<float>(den);
      EXPECT_EQ(static_cast<double>(__half2float(__float2half_rn(v))), round_to(DType::float16, v)) << v;
      EXPECT_EQ(static_cast<double>(__bfloat162float(__float2bfloat16_rn(v))), round_to(DType::bfloat16, v)) << v;
      if (std::fabs(v) <= 448) {
        EXPECT_EQ(static_cast<double>(static_cast<float>(__nv_fp8_e4m3(v))), round_to(DType::fp8_e4m3, v)) << v;
      }
      EXPECT_EQ(static_cast<double>(static_cast<float>(__nv_fp8_e5m2(v))), round_to(DType::fp8_e5m2, v)) << v;
    }
  }
}

TEST(PatternExact, ExactIntLimitsAreExact) {
  for (DType d : all_dtypes()) {
    const double limit = static_cast<double>(info(d).exact_int_limit);
    if (precision(d) == 0) continue;
    EXPECT_TRUE(representable(d, limit)) << name(d);
    EXPECT_TRUE(representable(d, limit - 1)) << name(d);
    if (precision(d) < 53) {
      EXPECT_FALSE(representable(d, limit + 1)) << name(d);  // the limit is the largest such N
    }
  }
}

TEST(PatternExact, InputsAreRepresentableInEveryType) {
  for (DType d : all_dtypes()) {
    for (RedOp op : {RedOp::sum, RedOp::prod, RedOp::min, RedOp::max, RedOp::avg, RedOp::none}) {
      for (int n = 1; n <= 64; ++n) {
        for (std::uint32_t seed : kSeeds) {
          const pattern::Params p = params_for(d, op, n, seed);
          for (std::uint64_t i = 0; i < kIndices; ++i) {
            for (int r = 0; r < n; ++r) {
              const auto v = static_cast<double>(op == RedOp::none ? pattern::data_value(p, r, i)
                                                                   : pattern::reduce_input(p, r, i));
              ASSERT_TRUE(representable(d, v)) << name(d) << " " << name(op) << " n=" << n << " v=" << v;
            }
          }
        }
      }
    }
  }
}

TEST(PatternExact, ReductionsAreExactInAnyOrder) {
  for (DType d : all_dtypes()) {
    const auto limit = static_cast<double>(info(d).exact_int_limit);
    for (RedOp op : {RedOp::sum, RedOp::prod, RedOp::min, RedOp::max}) {
      for (int n = 1; n <= 64; ++n) {
        for (std::uint32_t seed : kSeeds) {
          const pattern::Params p = params_for(d, op, n, seed);
          std::vector<double> inputs(static_cast<std::size_t>(n));
          for (std::uint64_t i = 0; i < kIndices; ++i) {
            double total = 0;
            for (int r = 0; r < n; ++r) {
              inputs[static_cast<std::size_t>(r)] = static_cast<double>(pattern::reduce_input(p, r, i));
              total += std::fabs(inputs[static_cast<std::size_t>(r)]);
            }
            const auto expected = static_cast<double>(pattern::reduced_value(p, i));
            ASSERT_TRUE(representable(d, expected)) << name(d) << " " << name(op) << " n=" << n;
            if (op == RedOp::sum) {
              // Summands are non-negative: every partial sum of any subset is <= the total.
              ASSERT_LE(total, limit) << name(d) << " n=" << n;
            }
            for (int order = 0; order < 3; ++order) {
              ASSERT_EQ(reduce_in_type(d, op, inputs, order), expected)
                  << name(d) << " " << name(op) << " n=" << n << " seed=" << seed << " i=" << i << " order=" << order;
            }
          }
        }
      }
    }
  }
}

// avg: NCCL sums then divides for integer types, and multiplies each input by 1/n (rounded to the
// type) before summing for floating types. The pattern gives one rank n*k and the others 0, so the
// integer path is exact and the floating path is within one ulp of k: the kernel's tolerance.
TEST(PatternExact, AvgIsExactOrWithinOneUlp) {
  for (DType d : all_dtypes()) {
    const DTypeInfo& t = info(d);
    for (int n = 1; n <= 64; ++n) {
      for (std::uint32_t seed : kSeeds) {
        const pattern::Params p = params_for(d, RedOp::avg, n, seed);
        if (pattern::avg_scaled(p)) continue;  // AvgPastTheExactRangeIsExact
        for (std::uint64_t i = 0; i < kIndices; ++i) {
          double sum = 0;
          int contributors = 0;
          double premul = 0;
          const double inv_n = round_to(d, 1.0 / n);
          for (int r = 0; r < n; ++r) {
            const auto v = static_cast<double>(pattern::reduce_input(p, r, i));
            contributors += v != 0 ? 1 : 0;
            sum = round_to(d, sum + v);
            premul = round_to(d, premul + round_to(d, v * inv_n));
          }
          const auto expected = static_cast<double>(pattern::reduced_value(p, i));
          ASSERT_LE(contributors, 1);
          ASSERT_LE(sum, static_cast<double>(t.exact_int_limit));
          ASSERT_EQ(std::fmod(sum, n), 0.0);
          ASSERT_EQ(sum / n, expected) << name(d) << " n=" << n;
          if (t.is_floating) {
            ASSERT_LE(std::fabs(premul - expected), ulp(d, expected)) << name(d) << " n=" << n << " i=" << i;
          }
        }
      }
    }
  }
}

// `v` converted to the type and back (CUDA's host conversions).
double in_type(DType d, double v) {
  const auto f = static_cast<float>(v);
  switch (d) {
    case DType::float16:
      return __half2float(__float2half_rn(f));
    case DType::bfloat16:
      return __bfloat162float(__float2bfloat16_rn(f));
    case DType::fp8_e4m3:
      return static_cast<float>(__nv_fp8_e4m3(f));
    case DType::fp8_e5m2:
      return static_cast<float>(__nv_fp8_e5m2(f));
    default:
      return f;
  }
}

// NCCL's avg scale for a floating type: float(1.0 / n) converted to the type (enqueue.cc), with
// CUDA's own host conversions (subnormals included), as a double. float64 and the integer types
// use 1.0 / n unrounded.
double nccl_avg_scale(DType d, int n) {
  switch (d) {
    case DType::float16:
    case DType::bfloat16:
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::float32:
      return in_type(d, static_cast<float>(1.0 / n));
    default:
      return 1.0 / n;
  }
}

// avg of a floating type past its exact range (pattern::avg_scaled): the owner's k*2^j times
// NCCL's scale is exactly a value of the type (so the kernel compares exactly), nonzero for k > 0
// at every n up to 4096 except e4m3 from 1024 ranks, where the scale itself is 0 (reported
// unsupported, nccl::avg_fixed_result).
TEST(PatternExact, AvgPastTheExactRangeIsExact) {
  EXPECT_GT(nccl_avg_scale(DType::fp8_e4m3, 1023), 0.0);
  EXPECT_EQ(nccl_avg_scale(DType::fp8_e4m3, 1024), 0.0);
  for (DType d : {DType::float16, DType::bfloat16, DType::fp8_e4m3, DType::fp8_e5m2}) {
    for (int n = static_cast<int>(info(d).exact_int_limit) + 1; n <= 4096; ++n) {
      const pattern::Params p = params_for(d, RedOp::avg, n, 7);
      ASSERT_TRUE(pattern::avg_scaled(p)) << name(d) << " n=" << n;
      const double scale = nccl_avg_scale(d, n);
      if (d == DType::fp8_e4m3 && n >= 1024) {
        ASSERT_EQ(scale, 0.0);
        continue;
      }
      ASSERT_GT(scale, 0.0) << name(d) << " n=" << n;
      for (std::uint64_t i = 0; i < 16; ++i) {
        int contributors = 0;
        double nccl = 0;  // NCCL: every input times the scale in the type, then summed in the type
        for (int r = 0; r < n; ++r) {
          const auto v = static_cast<double>(pattern::reduce_input(p, r, i));
          ASSERT_TRUE(representable(d, v)) << name(d) << " n=" << n << " v=" << v;
          contributors += v != 0 ? 1 : 0;
          nccl = in_type(d, nccl + in_type(d, v * scale));
        }
        ASSERT_LE(contributors, 1);
        const double expected = static_cast<double>(pattern::reduced_value(p, i)) * scale;
        ASSERT_EQ(in_type(d, expected), expected) << name(d) << " n=" << n;  // a value of the type
        ASSERT_EQ(nccl, expected) << name(d) << " n=" << n << " i=" << i;
      }
    }
  }
}

TEST(PatternExact, ExpectedValuesOfDataOpsComeFromTheRightRank) {
  const pattern::Params p = params_for(DType::float32, RedOp::none, 4, 7);
  const std::uint64_t count = 10;
  for (std::uint64_t i = 0; i < 4 * count; ++i) {
    EXPECT_EQ(pattern::expected_value(Op::allgather, p, 2, i, count),
              pattern::data_value(p, static_cast<int>(i / count), i % count));
    EXPECT_EQ(pattern::expected_value(Op::alltoall, p, 2, i, count),
              pattern::input_value(Op::alltoall, p, static_cast<int>(i / count), 2 * count + i % count));
  }
  pattern::Params root2 = p;
  root2.root = 2;
  EXPECT_EQ(pattern::expected_value(Op::broadcast, root2, 0, 5, count), pattern::data_value(p, 2, 5));
  // reduce_scatter: rank r holds block r of the reduction.
  pattern::Params sum = params_for(DType::float32, RedOp::sum, 4, 7);
  EXPECT_EQ(pattern::expected_value(Op::reduce_scatter, sum, 3, 1, count), pattern::reduced_value(sum, 3 * count + 1));
}

}  // namespace
}  // namespace ccbench
