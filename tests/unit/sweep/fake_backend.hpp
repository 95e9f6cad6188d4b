// A backend behind our own Backend interface whose times the test chooses: no MPI, no device.
// time_batch_us returns batch x the next time of the script (or of the size's rule), so every
// sample the engine takes is exactly a chosen time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "sweep/run_config.hpp"

namespace ccbench::testing {

class FakeBackend final : public Backend {
 public:
  // Time of one op for a case (when no scripted time is left).
  std::function<double(const CaseSpec&)> op_time_us = [](const CaseSpec&) { return 10.0; };
  // Scripted times, consumed one per timed batch before op_time_us applies.
  std::deque<double> script_us;
  // Wrong elements verify() reports per checked case.
  std::uint64_t wrong_per_case = 0;
  std::uint64_t budget_bytes = 0;  // 0 = unknown (no limit)
  nlohmann::json final = nlohmann::json::object();

  // What the engine did.
  int timed_batches = 0;
  int launches = 0;
  int fills = 0;
  std::uint64_t allocated_send = 0, allocated_recv = 0;

  std::string_view name() const override { return "fake"; }
  std::string_view clock() const override { return "test"; }
  std::optional<std::string> unsupported(const CaseSpec& c) const override {
    if (c.dtype == DType::float16) return "the fake backend has no half type";
    return std::nullopt;
  }
  std::uint64_t memory_budget_bytes(int) const override { return budget_bytes; }
  void allocate(std::uint64_t send, std::uint64_t recv) override {
    allocated_send = send;
    allocated_recv = recv;
  }
  void fill(const CaseSpec&, const pattern::Params&) override { ++fills; }
  void launch(const CaseSpec&) override { ++launches; }
  void synchronize() override {}
  double time_batch_us(const CaseSpec& c, int batch) override {
    ++timed_batches;
    double t = op_time_us(c);
    if (!script_us.empty()) {
      t = script_us.front();
      script_us.pop_front();
    }
    return t * batch;
  }
  std::uint64_t verify(const CaseSpec&, const pattern::Params&) override { return wrong_per_case; }
  void corrupt_output_for_test(const CaseSpec&) override {}
  nlohmann::json metadata() const override { return {{"fake_version", "1.0"}}; }
  nlohmann::json final_metadata() override { return final; }
};

// The plan most engine and session tests run: allreduce out of place at 1 KiB and 2 KiB, no warm-up,
// one op per sample, `iters` samples, no watchdog.
inline RunConfig two_size_allreduce_config(int iters) {
  RunConfig config;
  config.ops = {Op::allreduce};
  config.sizes = {1024, 2048, 2.0, 0};
  config.in_place = InPlaceMode::no;
  config.warmup = 0;
  config.batch = 1;
  config.iters = iters;
  config.timeout_s = 0;
  return config;
}

}  // namespace ccbench::testing
