// The launcher's command line for a host set (Open MPI's mpirun, Slurm's srun), and the shell
// quoting the screen writes into every test's log. Pure: no process is started here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::launch {

enum class Launcher { mpirun, srun };

std::string_view name(Launcher l);
std::optional<Launcher> parse_launcher(std::string_view text);

struct LaunchSpec {
  Launcher launcher = Launcher::mpirun;
  std::vector<std::string> hosts;  // in rank order; ranks_per_host consecutive ranks on each
  int ranks_per_host = 1;
  std::vector<std::string> launcher_args;  // passed through to the launcher, before the program
  std::vector<std::string> program;        // the program and its arguments, as given
  // Put before the launcher, e.g. the emulated fabric's `scripts/emulate/fabric.sh exec --`, so
  // the launcher starts in the emulation's launcher namespace (empty: none).
  std::vector<std::string> wrapper;
};

// mpirun -np R*H --host h1:R,h2:R ARGS PROGRAM...   or
// srun --nodes=H --ntasks=R*H --ntasks-per-node=R --nodelist=h1,h2 ARGS PROGRAM...
// (--ntasks too: inside an allocation srun otherwise takes the allocation's SLURM_NTASKS and
// refuses a step on fewer nodes, "More processors requested than permitted").
std::vector<std::string> launcher_argv(const LaunchSpec& spec);

// An Open MPI hostfile of the hosts ("host slots=N" a line), after a '#' header line when given.
std::string hostfile_text(const std::vector<std::string>& hosts, int slots, std::string_view header = {});

// One word for a POSIX shell: as it is when it holds only safe characters, else in single quotes
// (a single quote inside as '\'').
std::string shell_quote(std::string_view word);
// The argv as one shell command line, each word quoted.
std::string shell_join(const std::vector<std::string>& argv);

// Whether `program` can be run: a path that is executable, or a name found on PATH.
bool on_path(const std::string& program);

}  // namespace ccbench::launch
