// The one owner of the NCCL communicator's lifetime and of the CUDA graphs that captured it.
//
// Two threads touch a communicator: the measuring thread (every NCCL call, the async-error polls,
// the graph launches) and the watchdog thread (abort on a hang or a signal). Every use by the
// measuring thread holds the owner's lock, and abort() marks the communicator aborted *before* it
// waits for that lock: whichever use comes next sees the mark and parks without touching the
// communicator, and only then is it freed. The CUDA graphs that captured the communicator are
// destroyed first, on close and on abort alike, because NCCL's finalize and abort wait (without a
// timeout) until every graph that captured the communicator is gone. See docs/nccl-backend.md.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "backends/nccl/nccl_api.hpp"
#include "core/buffer_registration.hpp"

namespace ccbench::nccl {

class Communicator {
 public:
  // `on_aborted` runs on the measuring thread when it finds the communicator aborted; by default it
  // parks the thread forever (the watchdog is ending the process). Tests pass one that throws.
  explicit Communicator(NcclApi& api, std::function<void()> on_aborted = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // The measured communicator, blocking like nccl-tests' (a nonblocking communicator makes every
  // call an implicit group with a thread created and joined inside the timed region). Init itself
  // is nonblocking, so it can be polled and given up after `timeout_s` (> 0; 0 = no limit), and
  // the blocking communicator is split from it. Throws BackendError naming the step.
  void init(const ncclUniqueId& id, int nranks, int rank, double timeout_s);

  // Runs `call(comm)` holding the communicator; an aborted communicator is never passed.
  ncclResult_t use(const std::function<ncclResult_t(ncclComm_t)>& call);
  // ncclCommGetAsyncError's result and state, under the lock.
  ncclResult_t async_error(ncclResult_t* state);
  // ncclGetLastError of the communicator (or the global one).
  std::string last_error();
  // Set after an error was reported: close() then aborts instead of finalizing.
  void mark_failed();

  // -G: the graph exec that captured this communicator (the previous one is destroyed), and its
  // launch under the lock (a launch never races the abort's destruction of the exec).
  void adopt_graph(cudaGraphExec_t exec);
  bool has_graph() const;
  cudaError_t launch_graph(cudaStream_t stream);
  void destroy_graph();

  // -R 1|2: registers `bytes` at `buf` with the communicator (ncclCommRegister, or the collective
  // ncclCommWindowRegister; the communicator owns the handle). NCCL wants a buffer deregistered
  // before it is freed and before the communicator is destroyed: deregister(buf) before a buffer
  // is freed, and close() and abort_within() deregister what is left before the communicator goes.
  ncclResult_t register_buffer(void* buf, std::size_t bytes, BufferRegistration mode);
  void deregister(void* buf) noexcept;

  // End of the run: graphs, registrations, then ncclCommFinalize + ncclCommDestroy (ncclCommAbort after an error).
  void close() noexcept;
  // From the watchdog thread: marks the communicator aborted, then (within `wait_s`) destroys its
  // graphs and aborts it once the measuring thread is out of its current call. If that call does
  // not return in time (stuck inside NCCL or CUDA), the communicator is left alone: the process is
  // ending, and freeing it under that call would be a use after free.
  void abort_within(double wait_s) noexcept;

 private:
  struct State;
  void found_aborted();
  std::shared_ptr<State> state_;
  std::function<void()> on_aborted_;
};

}  // namespace ccbench::nccl
