// Running launchers: each job in a process group of its own (so the whole job, the launcher and
// whatever it started, can be ended), its output in a log file, bounded by a deadline after which
// the group gets SIGTERM and, a grace later, SIGKILL. The caller hears of each job as it ends.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ccbench::launch {

struct Job {
  std::vector<std::string> argv;
  std::filesystem::path log_file;  // stdout and stderr; its first line is "# " and the command line
};

// How a job ended.
struct JobEnd {
  bool started = false;     // false: the log could not be opened or fork failed (start_error says)
  std::string start_error;  // then exit_status is 127
  double elapsed_s = 0;
  int exit_status = 0;              // the launcher's exit code, 128 + N when signal N ended it
  int signal = 0;                   // the signal that ended the launcher, 0 when it exited
  bool killed_at_deadline = false;  // the deadline passed and its group was ended
};

struct RunLimits {
  std::size_t concurrency = 0;  // jobs at once, 0: all
  double deadline_s = 60;       // from the job's start
  double kill_grace_s = 5;      // SIGTERM at the deadline, SIGKILL this much later
  // Launchers started in the same instant race for shared state (Open MPI's session folder: "A
  // call to mkdir was unable to create the desired directory ... File exists", measured on 2 of
  // 30 emulated screens): a short gap between starts.
  std::chrono::milliseconds start_gap{200};
  std::chrono::milliseconds poll{50};
  std::string who = "ccbench";  // names the caller in the log when exec fails
};

// What varies when jobs run: the clock, and the processes a job is. ccbench uses the system's
// (steady_clock; fork, process groups, waitpid); tests give fakes, so that the loop's deadlines,
// interruption and concurrency are tested in one process without waiting or launching.
class JobClock {
 public:
  virtual ~JobClock() = default;
  virtual std::chrono::steady_clock::time_point now() = 0;
  virtual void sleep_for(std::chrono::milliseconds duration) = 0;
};

struct JobExit {
  long id = 0;
  int exit_status = 0;  // 128 + N when signal N ended it
  int signal = 0;       // 0 when it exited
};

class JobProcesses {
 public:
  virtual ~JobProcesses() = default;
  // Starts the job in a group of its own, output to its log. Returns its id (> 0), or -1 with
  // `why` set when the log cannot be opened or the process cannot be made.
  virtual long start(const Job& job, const std::string& who, std::string& why) = 0;
  // A started job that has ended since the last call, if any; never blocks.
  virtual std::optional<JobExit> poll_ended() = 0;
  virtual void terminate(long id) = 0;  // the job's group: SIGCONT (a stopped group ignores TERM), SIGTERM
  virtual void kill(long id) = 0;       // the job's group: SIGKILL
  virtual void wait(long id) = 0;       // until the killed job has ended (reaped)
};

struct JobRuntime {
  JobProcesses& processes;
  JobClock& clock;
};

// The system's clock and processes.
JobRuntime system_job_runtime();

// Runs the jobs (in order, at most `concurrency` at once), calling on_end(index, end) on this
// thread as each ends. Returns false when `interrupt` became nonzero: every running job's group is
// then ended (SIGCONT, SIGTERM, SIGKILL) and reaped, and on_end is not called for them.
bool run_jobs(const std::vector<Job>& jobs, const RunLimits& limits, const std::atomic<int>& interrupt,
              const std::function<void(std::size_t, const JobEnd&)>& on_end, JobRuntime runtime = system_job_runtime());

// One job, no interruption.
JobEnd run_job(const Job& job, const RunLimits& limits);

}  // namespace ccbench::launch
