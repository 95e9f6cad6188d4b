// Google Benchmark micro-benchmarks of the harness's hot paths: the data fill and check (should run
// near memory bandwidth) and the statistics over 1e6 samples.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <random>
#include <vector>

#include "backends/mpi/mpi_backend.hpp"
#include "core/stats.hpp"

namespace {

using namespace ccbench;

CaseSpec allreduce_case(std::uint64_t bytes) {
  CaseSpec c;
  c.op = Op::allreduce;
  c.dtype = DType::float32;
  c.redop = RedOp::sum;
  c.nranks = 2;
  c.layout = layout_for(c.op, c.dtype, bytes, c.nranks);
  return c;
}

pattern::Params params_for(const CaseSpec& c) {
  pattern::Params p;
  p.nranks = c.nranks;
  p.seed = 1;
  p.exact_limit = info(c.dtype).exact_int_limit;
  p.is_signed = true;
  p.redop = c.redop;
  return p;
}

// fill() writes the send buffer and poisons the receive buffer: 2 x bytes of stores.
void BM_Fill(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  MpiBackend backend(MPI_COMM_NULL);
  const CaseSpec c = allreduce_case(bytes);
  backend.allocate(bytes, bytes);
  const auto p = params_for(c);
  for (auto _ : state) backend.fill(c, p);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(2 * bytes));
}
BENCHMARK(BM_Fill)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMillisecond);

// verify() reads the output and recomputes the expected reduction over ranks per element.
void BM_Verify(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  MpiBackend backend(MPI_COMM_NULL);
  const CaseSpec c = allreduce_case(bytes);
  backend.allocate(bytes, bytes);
  const auto p = params_for(c);
  backend.fill(c, p);
  for (auto _ : state) benchmark::DoNotOptimize(backend.verify(c, p));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_Verify)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMillisecond);

// References for the two above in the same run: a plain read of the buffer (what verify cannot beat)
// and a plain write of send + receive buffers (fill). benchmarks/harness/data_check_ratio.sh prints
// verify/read and fill/write ratios from them.
void BM_ReadReference(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  std::vector<std::uint64_t> buf(bytes / sizeof(std::uint64_t), 1);  // integer sum: vectorised, memory-bound
  for (auto _ : state) {
    std::uint64_t sum = 0;
    for (std::uint64_t v : buf) sum += v;
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_ReadReference)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMillisecond);

void BM_WriteReference(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  std::vector<float> a(bytes / sizeof(float)), b(bytes / sizeof(float));
  for (auto _ : state) {
    std::fill(a.begin(), a.end(), 1.0f);
    std::fill(b.begin(), b.end(), 2.0f);
    benchmark::DoNotOptimize(a.data());
    benchmark::DoNotOptimize(b.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(2 * bytes));
}
BENCHMARK(BM_WriteReference)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMillisecond);

void BM_Summarize(benchmark::State& state) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(3.0, 0.3);
  std::vector<double> samples(static_cast<std::size_t>(state.range(0)));
  for (double& s : samples) s = dist(rng);
  for (auto _ : state) benchmark::DoNotOptimize(stats::summarize(samples));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Summarize)->Arg(1000)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_MedianCiIndices(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(stats::median_ci_indices(static_cast<std::size_t>(state.range(0)), 0.95));
}
BENCHMARK(BM_MedianCiIndices)->Arg(100)->Arg(1000000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
