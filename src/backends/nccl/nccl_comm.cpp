#include "backends/nccl/nccl_comm.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "backends/backend.hpp"

namespace ccbench::nccl {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void park_forever() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

}  // namespace

struct Communicator::State {
  explicit State(NcclApi& a) : api(a) {}
  NcclApi& api;
  std::mutex lock;                   // held by every use of `comm` and `graph`
  std::atomic<bool> aborted{false};  // set before the abort waits for `lock`
  ncclComm_t comm = nullptr;
  cudaGraphExec_t graph = nullptr;
  bool failed = false;
  struct Registration {
    void* buf;
    BufferRegistration mode;
    void* handle;  // ncclCommRegister's handle or the ncclWindow_t
  };
  std::vector<Registration> registrations;
  // abort_within's helper signals here when it is done.
  std::mutex done_lock;
  std::condition_variable done_cv;
  bool abort_done = false;

  // ncclCommDeregister is local and runs on every ending. A window's deregistration is collective:
  // after an error or on an abort the peers may never join it, so it is left to ncclCommAbort, which
  // releases the communicator's windows itself.
  void deregister_locked(const Registration& r, bool abort) noexcept {
    if (comm == nullptr) return;
    if (r.mode == BufferRegistration::comm_register) api.comm_deregister(comm, r.handle);
    if (r.mode == BufferRegistration::symmetric_window && !abort) api.window_deregister(comm, r.handle);
  }

  // Graphs first: NCCL's finalize and abort wait until every graph that captured the comm is gone.
  // Then the registrations, latest first, before the communicator.
  void release_locked(bool abort) noexcept {
    if (graph != nullptr) api.graph_exec_destroy(graph);
    graph = nullptr;
    for (auto r = registrations.rbegin(); r != registrations.rend(); ++r) deregister_locked(*r, abort);
    registrations.clear();
    if (comm == nullptr) return;
    if (!abort && api.comm_finalize(comm) == ncclSuccess) {
      api.comm_destroy(comm);
    } else {
      api.comm_abort(comm);
    }
    comm = nullptr;
  }
};

Communicator::Communicator(NcclApi& api, std::function<void()> on_aborted)
    : state_(std::make_shared<State>(api)), on_aborted_(std::move(on_aborted)) {}

Communicator::~Communicator() { close(); }

void Communicator::found_aborted() {
  if (on_aborted_) on_aborted_();
  park_forever();
}

void Communicator::init(const ncclUniqueId& id, int nranks, int rank, double timeout_s) {
  NcclApi& api = state_->api;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  auto fail = [&](ncclComm_t comm, const std::string& what) {
    if (comm != nullptr) api.comm_abort(comm);
    throw BackendError("--backend nccl: " + what);
  };
  // Polls a nonblocking call on `comm` until it completes or the deadline passes.
  auto finish = [&](ncclComm_t comm, ncclResult_t r, const char* what, ncclComm_t also_abort) {
    while (r == ncclInProgress && comm != nullptr) {
      if (timeout_s > 0 && Clock::now() > deadline) {
        if (also_abort != nullptr) api.comm_abort(also_abort);
        fail(comm, std::string(what) + " did not finish within " + std::to_string(timeout_s) +
                       " s (a rank is missing or the network is unreachable; CCBENCH_NCCL_INIT_TIMEOUT changes the "
                       "limit, inside the set-up watchdog's)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (api.comm_get_async_error(comm, &r) != ncclSuccess) r = ncclInternalError;
    }
    if (r != ncclSuccess) {
      const std::string text = std::string(api.nccl_error_string(r)) + " " + api.last_error(comm);
      if (also_abort != nullptr) api.comm_abort(also_abort);
      fail(comm, std::string(what) + " failed: " + text);
    }
  };

  ncclConfig_t boot_config = NCCL_CONFIG_INITIALIZER;
  boot_config.blocking = 0;  // polled: the init timeout can abort it
  ncclComm_t boot = nullptr;
  finish(boot, api.comm_init_rank_config(&boot, nranks, id, rank, &boot_config), "ncclCommInitRank", nullptr);

  ncclConfig_t measured_config = NCCL_CONFIG_INITIALIZER;
  measured_config.blocking = 1;  // what is timed: no implicit group thread per call
  ncclComm_t measured = nullptr;
  const ncclResult_t split = api.comm_split(boot, 0, rank, &measured, &measured_config);
  if (measured == nullptr && split == ncclInProgress) {
    finish(boot, split, "ncclCommSplit", nullptr);
  } else {
    finish(measured, split, "ncclCommSplit", boot);
  }
  if (measured == nullptr) fail(boot, "ncclCommSplit returned no communicator");
  // The split child has resources of its own (splitShare 0): the nonblocking parent is not needed.
  if (api.comm_finalize(boot) == ncclSuccess) {
    ncclResult_t r = ncclInProgress;
    while (r == ncclInProgress && api.comm_get_async_error(boot, &r) == ncclSuccess) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    api.comm_destroy(boot);
  } else {
    api.comm_abort(boot);
  }
  std::lock_guard hold(state_->lock);
  state_->comm = measured;
}

ncclResult_t Communicator::use(const std::function<ncclResult_t(ncclComm_t)>& call) {
  std::unique_lock hold(state_->lock);
  if (state_->aborted.load() || state_->comm == nullptr) {
    hold.unlock();
    found_aborted();
  }
  return call(state_->comm);
}

ncclResult_t Communicator::async_error(ncclResult_t* state) {
  return use([&](ncclComm_t comm) { return state_->api.comm_get_async_error(comm, state); });
}

std::string Communicator::last_error() {
  std::lock_guard hold(state_->lock);
  const char* text = state_->api.last_error(state_->aborted.load() ? nullptr : state_->comm);
  return text != nullptr ? text : "";
}

void Communicator::mark_failed() {
  std::lock_guard hold(state_->lock);
  state_->failed = true;
}

void Communicator::adopt_graph(cudaGraphExec_t exec) {
  std::unique_lock hold(state_->lock);
  if (state_->aborted.load()) {
    state_->api.graph_exec_destroy(exec);
    hold.unlock();
    found_aborted();
  }
  if (state_->graph != nullptr) state_->api.graph_exec_destroy(state_->graph);
  state_->graph = exec;
}

bool Communicator::has_graph() const {
  std::lock_guard hold(state_->lock);
  return state_->graph != nullptr;
}

cudaError_t Communicator::launch_graph(cudaStream_t stream) {
  std::unique_lock hold(state_->lock);
  if (state_->aborted.load() || state_->graph == nullptr) {
    hold.unlock();
    found_aborted();
  }
  return state_->api.graph_launch(state_->graph, stream);
}

void Communicator::destroy_graph() {
  std::lock_guard hold(state_->lock);
  if (state_->graph != nullptr) state_->api.graph_exec_destroy(state_->graph);
  state_->graph = nullptr;
}

ncclResult_t Communicator::register_buffer(void* buf, std::size_t bytes, BufferRegistration mode) {
  if (mode == BufferRegistration::none) return ncclSuccess;
  std::unique_lock hold(state_->lock);
  if (state_->aborted.load() || state_->comm == nullptr) {
    hold.unlock();
    found_aborted();
  }
  void* handle = nullptr;
  const ncclResult_t r = mode == BufferRegistration::comm_register
                             ? state_->api.comm_register(state_->comm, buf, bytes, &handle)
                             : state_->api.window_register(state_->comm, buf, bytes, &handle);
  if (r == ncclSuccess) state_->registrations.push_back({buf, mode, handle});
  return r;
}

void Communicator::deregister(void* buf) noexcept {
  std::lock_guard hold(state_->lock);
  auto& all = state_->registrations;
  for (auto it = all.begin(); it != all.end(); ++it) {
    if (it->buf != buf) continue;
    // After an abort the communicator (and with it the registration) is gone already.
    if (!state_->aborted.load()) state_->deregister_locked(*it, state_->failed);
    all.erase(it);
    return;
  }
}

void Communicator::close() noexcept {
  if (state_->aborted.load()) return;  // the abort owns the release
  std::lock_guard hold(state_->lock);
  state_->release_locked(state_->failed);
}

void Communicator::abort_within(double wait_s) noexcept {
  if (state_->aborted.exchange(true)) return;
  // The helper holds the state, so a helper that outlives this call (the measuring thread is stuck
  // in a call) never touches freed memory; the process is ending then.
  try {
    std::thread([state = state_] {
      {
        std::lock_guard hold(state->lock);
        state->release_locked(/*abort=*/true);
      }
      std::lock_guard done(state->done_lock);
      state->abort_done = true;
      state->done_cv.notify_all();
    }).detach();
  } catch (...) {
    return;  // no thread: leave the communicator to the process's end
  }
  std::unique_lock done(state_->done_lock);
  state_->done_cv.wait_for(done, std::chrono::duration<double>(wait_s), [&] { return state_->abort_done; });
}

}  // namespace ccbench::nccl
