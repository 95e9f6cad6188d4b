#include "checkpoint/drain.hpp"

#include <algorithm>

#include "checkpoint/shard_data.hpp"

namespace ccbench::checkpoint {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

DrainTimes drain(const DrainJob& job, Clock::time_point t0) {
  DrainTimes d;
  try {
    AlignedBuffer buffer = AlignedBuffer::allocate(static_cast<std::size_t>(job.transfer_bytes));
    d.start_s = since(t0);
    auto t = Clock::now();
    auto in = job.from->open(job.from_path, OpenFor::read, {.direct = job.direct});
    auto out = job.to->open(job.to_path, OpenFor::create_write, {.direct = job.direct});
    d.direct = in->direct() && out->direct();
    d.open_s = since(t);
    t = Clock::now();
    for (std::uint64_t off = 0; off < job.bytes; off += job.transfer_bytes) {
      const auto n = static_cast<std::size_t>(std::min(job.transfer_bytes, job.bytes - off));
      in->read_at(buffer.get(), n, off);
      out->write_at(buffer.get(), n, off);
    }
    d.io_s = since(t);
    if (job.fsync) {
      t = Clock::now();
      out->sync();
      d.fsync_s = since(t);
    }
    t = Clock::now();
    out->close();
    in->close();
    d.close_s = since(t);
    d.end_s = since(t0);
  } catch (const StorageError& e) {
    d.error = e.what();
  } catch (const std::bad_alloc&) {
    d.error = "drain: out of memory for the transfer buffer";
  }
  return d;
}

}  // namespace ccbench::checkpoint
