#include "launch/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include "launch/command_line.hpp"

namespace ccbench::launch {
namespace {

using Clock = std::chrono::steady_clock;

// Starts the job in a process group of its own, output to its log. Returns the pid, or -1 with
// `why` set when the log cannot be opened or fork fails.
pid_t start_process(const Job& job, const std::string& who, std::string& why) {
  const int fd = ::open(job.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    why = std::strerror(errno);
    return -1;
  }
  const std::string header = "# " + shell_join(job.argv) + "\n";
  if (::write(fd, header.data(), header.size()) < 0) {
    why = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  std::vector<std::string> words = job.argv;
  std::vector<char*> args;
  for (auto& a : words) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    why = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "%s: cannot start %s: %s\n", who.c_str(), args[0], std::strerror(errno));
    std::_Exit(127);
  }
  ::setpgid(pid, pid);  // both sides: the parent may signal the group before the child runs
  ::close(fd);
  return pid;
}

class SystemClock final : public JobClock {
 public:
  Clock::time_point now() override { return Clock::now(); }
  void sleep_for(std::chrono::milliseconds duration) override { std::this_thread::sleep_for(duration); }
};

class SystemProcesses final : public JobProcesses {
 public:
  long start(const Job& job, const std::string& who, std::string& why) override { return start_process(job, who, why); }
  std::optional<JobExit> poll_ended() override {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return std::nullopt;
    return JobExit{pid, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                   WIFSIGNALED(status) ? WTERMSIG(status) : 0};
  }
  void terminate(long id) override {
    ::kill(-static_cast<pid_t>(id), SIGCONT);  // a stopped process group would never act on SIGTERM
    ::kill(-static_cast<pid_t>(id), SIGTERM);
  }
  void kill(long id) override { ::kill(-static_cast<pid_t>(id), SIGKILL); }
  void wait(long id) override {
    int ignored = 0;
    ::waitpid(static_cast<pid_t>(id), &ignored, 0);
  }
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

JobRuntime system_job_runtime() {
  static SystemProcesses processes;
  static SystemClock clock;
  return JobRuntime{processes, clock};
}

bool run_jobs(const std::vector<Job>& jobs, const RunLimits& limits, const std::atomic<int>& interrupt,
              const std::function<void(std::size_t, const JobEnd&)>& on_end, JobRuntime runtime) {
  JobProcesses& processes = runtime.processes;
  JobClock& clock = runtime.clock;
  const std::size_t limit = limits.concurrency == 0 ? jobs.size() : limits.concurrency;
  std::size_t next = 0, running = 0, finished = 0;
  struct Live {
    std::size_t index;
    Clock::time_point started;
    bool term_sent = false;
    Clock::time_point term_at;
  };
  std::map<long, Live> live;
  while (finished < jobs.size()) {
    while (running < limit && next < jobs.size()) {
      const std::size_t index = next++;
      JobEnd end;
      const auto started = clock.now();
      const long id = processes.start(jobs[index], limits.who, end.start_error);
      if (id < 0) {
        end.exit_status = 127;
        ++finished;
        on_end(index, end);
        continue;
      }
      live[id] = Live{index, started, false, {}};
      ++running;
      if (next < jobs.size() && running < limit) clock.sleep_for(limits.start_gap);
    }
    const std::optional<JobExit> exited = processes.poll_ended();
    const auto now = clock.now();
    if (exited && live.count(exited->id)) {
      const Live l = live[exited->id];
      live.erase(exited->id);
      processes.kill(exited->id);  // whatever the launcher left in its group
      --running;
      ++finished;
      JobEnd end;
      end.started = true;
      end.elapsed_s = seconds(now - l.started);
      end.exit_status = exited->exit_status;
      end.signal = exited->signal;
      end.killed_at_deadline = l.term_sent;
      on_end(l.index, end);
      continue;
    }
    for (auto& [id, l] : live) {
      if (!l.term_sent && seconds(now - l.started) > limits.deadline_s) {
        processes.terminate(id);
        l.term_sent = true;
        l.term_at = now;
      } else if (l.term_sent && seconds(now - l.term_at) > limits.kill_grace_s) {
        processes.kill(id);
      }
    }
    if (interrupt != 0) {
      for (auto& [id, l] : live) {
        processes.terminate(id);
        processes.kill(id);
        processes.wait(id);
      }
      return false;
    }
    clock.sleep_for(limits.poll);
  }
  return true;
}

JobEnd run_job(const Job& job, const RunLimits& limits) {
  const std::atomic<int> never{0};
  JobEnd out;
  run_jobs({job}, limits, never, [&](std::size_t, const JobEnd& end) { out = end; });
  return out;
}

}  // namespace ccbench::launch
