// Where `ccbench screen` gets its hosts: a comma list, an Open MPI hostfile, or the Slurm
// allocation's node list (SLURM_JOB_NODELIST, hostlist syntax "gpu[01-04,07],login1").
// Errors throw UsageError naming the flag or file and line.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::screen {

// "a,b,c" -> {a, b, c}. `what` names the source in errors (e.g. "--hosts").
std::vector<std::string> parse_host_list(std::string_view text, std::string_view what);

// Open MPI hostfile: one host per line, optional "slots=N" / "max_slots=N" / "max-slots=N" after
// it, '#' comments and blank lines ignored.
std::vector<std::string> parse_hostfile_text(std::string_view text, std::string_view where);
std::vector<std::string> read_hostfile(const std::filesystem::path& path);

// Slurm hostlist expression -> host names, in order: "n[1-3,5],x" -> n1 n2 n3 n5 x; zero padding
// of the range's first bound is kept ("n[08-10]" -> n08 n09 n10). Nested brackets are not Slurm's.
std::vector<std::string> expand_slurm_nodelist(std::string_view expression, std::string_view what);

// Every name once; a duplicate is a usage error naming it.
void require_unique(const std::vector<std::string>& hosts, std::string_view what);

}  // namespace ccbench::screen
