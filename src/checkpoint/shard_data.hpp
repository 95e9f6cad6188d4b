// A shard's bytes: seeded random data (incompressible, so LZ4 on FSx or a compressing SSD cannot
// shrink it), generated before the timed region into one aligned pool per shard that repeats every
// pool_bytes (at most 64 MiB, far beyond LZ4's 64 KiB window). The seed mixes --seed, the trial and
// the writer, so a shard of another trial or rank never reads back as right.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

namespace ccbench::checkpoint {

inline constexpr std::uint64_t kMaxPoolBytes = 64ULL << 20;

// A 4 KiB-aligned buffer (O_DIRECT).
struct AlignedBuffer {
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> data;
  std::size_t bytes = 0;
  static AlignedBuffer allocate(std::size_t bytes);  // throws std::bad_alloc
  std::byte* get() const { return data.get(); }
};

class ShardData {
 public:
  // The pool of the shard of `writer` in `trial`: min(shard, max(transfer, 64 MiB rounded down to
  // transfers)) bytes, a whole number of transfers, so every transfer is one contiguous slice.
  ShardData(std::uint64_t seed, int trial, int writer, std::uint64_t shard_bytes, std::uint64_t transfer_bytes);

  // The bytes expected at `offset` of the shard, `bytes` long (within one transfer).
  std::span<const std::byte> at(std::uint64_t offset, std::size_t bytes) const;
  std::uint64_t pool_bytes() const { return pool_.bytes; }

  // The first offset in [offset, offset + got.size()) where `got` differs from the shard, or nullopt.
  std::optional<std::uint64_t> first_mismatch(std::uint64_t offset, std::span<const std::byte> got) const;

 private:
  AlignedBuffer pool_;
};

}  // namespace ccbench::checkpoint
