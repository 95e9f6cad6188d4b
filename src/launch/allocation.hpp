// The Slurm allocation a command runs inside, from srun/sbatch/salloc's environment: its nodes
// (SLURM_JOB_NODELIST) and the CPUs Slurm gave it on each (SLURM_JOB_CPUS_PER_NODE, "4(x2),2").
// A job step (srun) can start at most that many tasks on a node unless it overcommits.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::launch {

struct Allocation {
  std::vector<std::string> nodes;
  std::vector<int> cpus_per_node;  // same order as nodes; empty when Slurm did not say
  std::string cpus_text;           // SLURM_JOB_CPUS_PER_NODE as given
};

// "4(x2),2" -> {4, 4, 2}. Throws UsageError naming `what` when it does not parse.
std::vector<int> expand_cpus_per_node(std::string_view text, std::string_view what);

// From the environment; nullopt outside an allocation (no SLURM_JOB_NODELIST). Throws UsageError
// naming the variable that does not parse, or whose lengths disagree.
std::optional<Allocation> allocation_from_environment();

// Refuses (UsageError naming --ranks-per-host, the node and the variable) a srun step of
// `ranks_per_host` tasks on a screened node of the allocation that has fewer CPUs. Nodes outside
// the allocation are not judged here (srun names them itself).
void check_ranks_fit(const Allocation& allocation, const std::vector<std::string>& hosts, int ranks_per_host);

}  // namespace ccbench::launch
