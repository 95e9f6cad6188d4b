// Item 16: a busy host is recorded (system.host_load) and named in one sentence.
#include <unistd.h>

#include <sstream>

#include "core/host_load_note.hpp"
#include "system/host_load.hpp"
#include "test_support.hpp"

namespace ccbench::harden_test {
namespace {

namespace fs = std::filesystem;

// A fake /proc: uptime, loadavg, stat, and processes with (ppid, utime+stime ticks, last CPU).
struct FakeProc {
  fs::path root;
  void at(double uptime, double load, std::uint64_t total_user, std::uint64_t steal) {
    fs::create_directories(root / "proc");
    write(root / "proc/uptime", std::to_string(uptime) + " 0\n");
    write(root / "proc/loadavg", std::to_string(load) + " 0.5 0.5 1/100 999\n");
    write(root / "proc/stat", "cpu  " + std::to_string(total_user) + " 0 0 0 0 0 0 " + std::to_string(steal) +
                                  " 0 0\ncpu0 1 0 0 0 0 0 0 0 0 0\ncpu1 1 0 0 0 0 0 0 0 0 0\n");
  }
  void process(int pid, const std::string& name, int ppid, std::uint64_t ticks, int cpu, const std::string& allowed) {
    const auto dir = root / "proc" / std::to_string(pid);
    fs::create_directories(dir);
    // Fields 3..39 after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    // utime stime cutime cstime priority nice threads itreal starttime ... processor (39).
    std::ostringstream stat;
    stat << pid << " (" << name << ") R " << ppid << " 0 0 0 0 0 0 0 0 0 " << ticks << " 0 0 0 20 0 1 0 5";
    for (int f = 23; f < 39; ++f) stat << " 0";
    stat << " " << cpu << " 0 0\n";
    write(dir / "stat", stat.str());
    std::ostringstream status;
    status << "Name:\t" << name << "\nCpus_allowed_list:\t" << allowed << "\n";
    write(dir / "status", status.str());
  }
};

TEST(HostLoad, CpuList) {
  EXPECT_EQ(system::parse_cpu_list("0-3,8,10-11\n"), (std::set<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(system::parse_cpu_list("x"), std::set<int>{});
  EXPECT_EQ(system::parse_cpu_list("3-1"), std::set<int>{});
}

TEST(HostLoad, OtherProcessesShareOfTheRanksCores) {
  const long hz = ::sysconf(_SC_CLK_TCK);
  FakeProc p{fresh_dir("hostload")};
  // Start: mpirun 100 (parent 1), ranks 200 and 201 (parent 100), stress 300 on core 1, a job 400 on core 3.
  p.at(1000.0, 0.5, 1000, 0);
  p.process(100, "mpirun", 1, 0, 0, "0-3");
  p.process(200, "ccbench", 100, 0, 0, "0");
  p.process(201, "ccbench", 100, 0, 1, "1");
  p.process(300, "stress-ng (cpu)", 1, 0, 1, "0-3");
  p.process(400, "other", 1, 0, 3, "0-3");
  const auto start = system::sample_host_load(p.root.string());
  // 10 s later: ranks 20 s, stress-ng 6 s on core 1, other 10 s on core 3 (not a rank core); steal 50 of 1000 ticks.
  p.at(1010.0, 3.5, 1950, 50);
  p.process(100, "mpirun", 1, static_cast<std::uint64_t>(hz), 0, "0-3");
  p.process(200, "ccbench", 100, static_cast<std::uint64_t>(10 * hz), 0, "0");
  p.process(201, "ccbench", 100, static_cast<std::uint64_t>(10 * hz), 1, "1");
  p.process(300, "stress-ng (cpu)", 1, static_cast<std::uint64_t>(6 * hz), 1, "0-3");
  p.process(400, "other", 1, static_cast<std::uint64_t>(10 * hz), 3, "0-3");
  const auto end = system::sample_host_load(p.root.string());

  const auto ours = system::own_processes(end, 200);
  EXPECT_EQ(ours, (std::set<int>{100, 200, 201}));
  const auto cores = system::cores_of({200, 201}, p.root.string());
  EXPECT_EQ(cores, (std::set<int>{0, 1}));
  const auto j = system::host_load_json(start, end, ours, cores);
  EXPECT_DOUBLE_EQ(j["window_s"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j["others_core_share"].get<double>(), 0.3);  // 6 s of 2 cores x 10 s
  EXPECT_DOUBLE_EQ(j["steal_share"].get<double>(), 0.05);       // 50 of 1000 ticks
  EXPECT_EQ(j["others_top"][0]["name"], "stress-ng (cpu)");
  EXPECT_DOUBLE_EQ(j["others_top"][0]["core_share"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(j["load_avg_1m"]["end"].get<double>(), 3.5);
  EXPECT_EQ(j["cpus_online"], 2);
  EXPECT_FALSE(j.contains("gpu_other_processes"));  // no /dev/nvidiaN under the fake root

  const auto note = busy_host_note({{"host_load", j}});
  ASSERT_TRUE(note.has_value());
  EXPECT_EQ(*note,
            "host busy: other processes used 30% of the ranks' 2 cores (stress-ng (cpu) 60%); steal 5%; load average "
            "0.5 -> 3.5");
}

// The ranks' own packets: ksoftirqd's time is recorded apart and never makes the host busy (it
// marked the fast links' tests of e2e.screen.two_slow busy, and the screen cleared both slow hosts).
TEST(HostLoad, SoftirqThreadsAreTheRunsOwnNetworkWork) {
  const long hz = ::sysconf(_SC_CLK_TCK);
  FakeProc p{fresh_dir("hostload-softirq")};
  p.at(1000.0, 0.5, 1000, 0);
  p.process(100, "mpirun", 1, 0, 0, "0-1");
  p.process(200, "ccbench", 100, 0, 0, "0");
  p.process(12, "ksoftirqd/0", 2, 0, 0, "0");
  p.process(18, "ksoftirqd/1", 2, 0, 1, "1");
  p.process(300, "make", 1, 0, 1, "0-1");
  const auto start = system::sample_host_load(p.root.string());
  // 10 s later: ksoftirqd 2.4 s and 0.6 s, make 1 s, on the ranks' cores 0-1.
  p.at(1010.0, 1.0, 2000, 0);
  p.process(100, "mpirun", 1, 0, 0, "0-1");
  p.process(200, "ccbench", 100, static_cast<std::uint64_t>(10 * hz), 0, "0");
  p.process(12, "ksoftirqd/0", 2, static_cast<std::uint64_t>(2.4 * static_cast<double>(hz)), 0, "0");
  p.process(18, "ksoftirqd/1", 2, static_cast<std::uint64_t>(0.6 * static_cast<double>(hz)), 1, "1");
  p.process(300, "make", 1, static_cast<std::uint64_t>(hz), 1, "0-1");
  const auto end = system::sample_host_load(p.root.string());
  const auto j = system::host_load_json(start, end, system::own_processes(end, 200), {0, 1});
  EXPECT_DOUBLE_EQ(j["others_core_share"].get<double>(), 0.05);   // make's 1 s of 2 cores x 10 s
  EXPECT_DOUBLE_EQ(j["softirq_core_share"].get<double>(), 0.15);  // 3 s of 20
  ASSERT_EQ(j["others_top"].size(), 1u);
  EXPECT_EQ(j["others_top"][0]["name"], "make");
  EXPECT_FALSE(busy_host_note({{"host_load", j}}).has_value());  // 20% counted as others would be busy
  EXPECT_TRUE(system::is_softirq_thread("ksoftirqd/15"));
  EXPECT_FALSE(system::is_softirq_thread("ksoftirqd"));
  EXPECT_FALSE(system::is_softirq_thread("kworker/0:1"));
}

TEST(HostLoad, AQuietHostSaysNothing) {
  const nlohmann::json quiet = {{"host_load",
                                 {{"others_core_share", 0.02},
                                  {"steal_share", 0.0},
                                  {"cores", {0, 1}},
                                  {"load_avg_1m", {{"start", 0.1}, {"end", 2.0}}}}}};
  EXPECT_FALSE(busy_host_note(quiet).has_value());
  EXPECT_FALSE(busy_host_note(nlohmann::json::object()).has_value());
  EXPECT_FALSE(busy_host_note({{"host_load", "garbage"}}).has_value());
  const nlohmann::json gpu = {{"host_load", {{"others_core_share", 0.0}, {"gpu_other_processes", {{{"pid", 7}}}}}}};
  EXPECT_EQ(*busy_host_note(gpu),
            "host busy: other processes used 0% of the ranks' cores; steal 0%; 1 other "
            "process(es) on the GPUs");
}

}  // namespace
}  // namespace ccbench::harden_test
