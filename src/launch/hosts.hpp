// Host sets as users and Slurm write them: a comma list, an Open MPI hostfile, or a Slurm hostlist
// expression (SLURM_JOB_NODELIST, "gpu[01-04,07],login1"), both ways: expanded to names and
// compressed back (`scontrol show hostnames` / `scontrol show hostlist`). Errors throw UsageError
// naming the flag or file and line.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::launch {

// "a,b,c" -> {a, b, c}; an item with brackets is a hostlist expression ("a,n[1-3]"). `what` names
// the source in errors (e.g. "--hosts").
std::vector<std::string> parse_host_list(std::string_view text, std::string_view what);

// Open MPI hostfile: one host per line, optional "slots=N" / "max_slots=N" / "max-slots=N" after
// it, '#' comments and blank lines ignored.
std::vector<std::string> parse_hostfile_text(std::string_view text, std::string_view where);
std::vector<std::string> read_hostfile(const std::filesystem::path& path);

// Slurm hostlist expression -> host names, in order: "n[1-3,5],x" -> n1 n2 n3 n5 x; zero padding
// of a range's first bound is kept ("n[08-10]" -> n08 n09 n10); several bracket groups in one name
// expand as Slurm does, the first one outermost ("a[1-2]b[3-4]" -> a1b3 a1b4 a2b3 a2b4). Nested
// brackets are not Slurm's and are refused.
std::vector<std::string> expand_slurm_nodelist(std::string_view expression, std::string_view what);

// Host names -> the shortest hostlist expression Slurm writes for them, order kept: adjacent names
// with the same prefix share one bracket, consecutive numbers of the same width one range
// ("n1,n2,n3,n5,x" -> "n[1-3,5],x"; "n08,n09,n10" -> "n[08-10]"). expand_slurm_nodelist inverts it.
std::string compress_hostlist(const std::vector<std::string>& hosts);

// Every name once; a duplicate is a usage error naming it.
void require_unique(const std::vector<std::string>& hosts, std::string_view what);

}  // namespace ccbench::launch
