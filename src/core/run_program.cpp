#include "core/run_program.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace ccbench {
namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point end) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Reaps `pid` before `end`; false when it is still running then.
bool reap_before(pid_t pid, Clock::time_point end, int& status) {
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // ECHILD: nothing left to wait for
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The spawn's file actions and attributes, released on every path out.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

ProgramRun run_program(const std::vector<std::string>& argv, const ProgramOptions& options) {
  if (argv.empty() || argv.front().empty()) throw std::invalid_argument("run_program: empty argument vector");
  ProgramRun out;
  const auto end = Clock::now() + options.deadline;
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.error = argv.front() + ": pipe: " + std::strerror(errno);
    return out;
  }
  SpawnSetup setup;
  posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, fds[1], 1);
  if (options.capture_stderr) {
    posix_spawn_file_actions_adddup2(&setup.actions, fds[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&setup.actions, 2, "/dev/null", O_WRONLY, 0);
  }
  // Its own process group, so a deadline kills what it started too; default signal handling and an
  // empty mask, whatever this process (MPI, the watchdog) changed.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setsigdefault(&setup.attr, &all);
  posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, args[0], &setup.actions, &setup.attr, args.data(), environ);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    out.error = argv.front() + ": " + std::strerror(spawned);
    return out;
  }
  out.started = true;

  char buf[4096];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, ms_left(end));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      out.timed_out = true;
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of output (or an error reading it)
    const std::size_t room = options.max_output_bytes - std::min(options.max_output_bytes, out.output.size());
    out.output.append(buf, std::min(room, static_cast<std::size_t>(n)));  // the rest is read and dropped
  }
  ::close(fds[0]);
  int status = 0;
  if (out.timed_out || !reap_before(pid, end, status)) {
    out.timed_out = true;
    ::kill(-pid, SIGKILL);
    // A process stuck in the kernel (a hung mount) may not die at once: give up on it after a second
    // rather than hang; it is left to init.
    (void)reap_before(pid, Clock::now() + std::chrono::seconds(1), status);
    return out;
  }
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

bool program_on_path(const std::string& program) {
  const auto executable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (program.empty()) return false;
  if (program.find('/') != std::string::npos) return executable(program);
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = dirs.find(':', start);
    const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (executable((dir.empty() ? std::string(".") : dir) + "/" + program)) return true;
    if (colon == std::string::npos) return false;
    start = colon + 1;
  }
}

}  // namespace ccbench
