#include "checkpoint/shard_data.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ccbench::checkpoint {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

void AlignedBuffer::Free::operator()(std::byte* p) const { std::free(p); }

AlignedBuffer AlignedBuffer::allocate(std::size_t bytes) {
  void* p = nullptr;
  if (::posix_memalign(&p, 4096, bytes == 0 ? 4096 : bytes) != 0) throw std::bad_alloc();
  AlignedBuffer b;
  b.data.reset(static_cast<std::byte*>(p));
  b.bytes = bytes;
  return b;
}

ShardData::ShardData(std::uint64_t seed, int trial, int writer, std::uint64_t shard_bytes,
                     std::uint64_t transfer_bytes) {
  const std::uint64_t per_pool = std::max<std::uint64_t>(1, kMaxPoolBytes / transfer_bytes);
  const std::uint64_t transfers = (shard_bytes + transfer_bytes - 1) / transfer_bytes;
  const std::uint64_t pool = std::min(transfers, per_pool) * transfer_bytes;
  pool_ = AlignedBuffer::allocate(static_cast<std::size_t>(pool));
  std::uint64_t state = seed * 0x100000001B3ULL ^ (static_cast<std::uint64_t>(trial) << 32) ^
                        static_cast<std::uint64_t>(writer) * 0xC2B2AE3D27D4EB4FULL;
  auto* words = reinterpret_cast<std::uint64_t*>(pool_.get());
  for (std::size_t i = 0; i < pool / 8; ++i) words[i] = splitmix64(state);
}

std::span<const std::byte> ShardData::at(std::uint64_t offset, std::size_t bytes) const {
  return {pool_.get() + offset % pool_.bytes, bytes};
}

std::optional<std::uint64_t> ShardData::first_mismatch(std::uint64_t offset, std::span<const std::byte> got) const {
  const auto want = at(offset, got.size());
  if (std::memcmp(want.data(), got.data(), got.size()) == 0) return std::nullopt;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (want[i] != got[i]) return offset + i;
  }
  return std::nullopt;
}

}  // namespace ccbench::checkpoint
