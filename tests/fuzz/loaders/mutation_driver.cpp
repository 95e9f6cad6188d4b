// A mutation fuzzer over every loader (loaders.cpp), for toolchains without libFuzzer and for CI:
// deterministic (seeded), bounded by executions or seconds, built with the sanitizers when
// CCBENCH_SANITIZE is on (a sanitizer report aborts the process; the input is saved first).
//
//   ccbench_fuzz [--loader NAME|all] [--corpus DIR] [--seconds S | --runs N] [--seed N]
//                [--findings DIR] [--fail-on exception,unnamed,slow] [--replay FILE...]
//
// Findings, by kind: "exception" (a loader threw something other than ParseError/UsageError),
// "unnamed" (an exit-2 message that does not name the file), "slow" (one input took longer than
// --slow-ms). Exit 1 when a finding of a kind in --fail-on (default: all three) occurred, 0 otherwise
// (the others are still listed), 2 on bad arguments. A crash ends the process (sanitizer
// report on stderr) after the input is copied to DIR/crash-<loader>.<ext>.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "loaders.hpp"

namespace fs = std::filesystem;
using ccbench::fuzz::Loader;

namespace {

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
};

// Tokens that broke or nearly broke loaders in the issue's hand-written set: non-finite and huge
// numbers, integer limits, JSON escapes, Latin-1 bytes, YAML structure where scalars belong.
const std::vector<std::string> kDictionary = {
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "1e30",
    "1e300",
    "1e999",
    "-1",
    "0",
    "-0",
    "007",
    "1.",
    ".5",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "4294967297",
    "2147483648",
    "1099511627776",
    "\"samples\\u005fus\"",
    "\\u0000",
    "\xE9",
    "\xC3",
    "\xFF",
    "null",
    "true",
    "false",
    "[]",
    "{}",
    "[{a: 1}]",
    "{a: 1}",
    "[[1]]",
    "!!binary",
    "&a ",
    "*a",
    "<<: *a",
    "\t",
    "\r\n",
    "\n",
    "\"",
    "'",
    "#",
    "%",
    "K",
    "G",
    "T",
    "E",
    ",",
    ":",
    "[",
    "]",
    "{",
    "}",
    "  ",
    "\"samples_us\"",
    "\"bytes\"",
    "\"results\"",
    "\"ranks\"",
    "\"schema_version\"",
    "\"run\"",
    "\"status\"",
    "\"time_us\"",
    "\"median\"",
    "expected_speedup: ",
    "ops: ",
    "statement: \"",
    "# nThread 1 nGpus 1",
    "#  Rank  0",
    "# Avg bus bandwidth",
    "# OSU MPI",
    "# Size",
};

std::string mutate(const std::string& in, const std::vector<std::string>& corpus, Rng& rng) {
  std::string s = in;
  const std::size_t rounds = 1 + rng.below(4);
  for (std::size_t r = 0; r < rounds; ++r) {
    const std::size_t pos = rng.below(s.size() + 1);
    switch (rng.below(9)) {
      case 0:
        if (!s.empty()) s[rng.below(s.size())] ^= static_cast<char>(1u << rng.below(8));
        break;
      case 1:
        if (!s.empty()) s[rng.below(s.size())] = "\0\xFF\xE9\"\\\n[{:,-.e"[rng.below(13)];
        break;
      case 2:
        s.insert(pos, kDictionary[rng.below(kDictionary.size())]);
        break;
      case 3: {  // replace a number with an interesting one
        std::size_t a = pos;
        while (a < s.size() && !std::isdigit(static_cast<unsigned char>(s[a]))) ++a;
        std::size_t b = a;
        while (b < s.size() && (std::isdigit(static_cast<unsigned char>(s[b])) || s[b] == '.' || s[b] == 'e')) ++b;
        if (a < s.size()) s.replace(a, b - a, kDictionary[rng.below(22)]);
        break;
      }
      case 4:
        if (!s.empty()) s.erase(pos, 1 + rng.below(std::min<std::size_t>(64, s.size() - std::min(pos, s.size()) + 1)));
        break;
      case 5:
        if (!s.empty() && s.size() < (1u << 20)) {
          const std::size_t a = rng.below(s.size()), n = 1 + rng.below(std::min<std::size_t>(256, s.size() - a));
          s.insert(pos, s.substr(a, n));
        }
        break;
      case 6:
        s.resize(rng.below(s.size() + 1));
        break;
      case 7:
        if (!corpus.empty()) {
          const std::string& other = corpus[rng.below(corpus.size())];
          const std::size_t a = rng.below(other.size() + 1);
          s = s.substr(0, pos) + other.substr(a);
        }
        break;
      default: {  // swap a line with another line of the input
        std::vector<std::string> lines;
        std::size_t start = 0;
        while (start <= s.size()) {
          const auto nl = s.find('\n', start);
          lines.push_back(s.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
          if (nl == std::string::npos) break;
          start = nl + 1;
        }
        if (lines.size() > 1) {
          std::swap(lines[rng.below(lines.size())], lines[rng.below(lines.size())]);
          s.clear();
          for (std::size_t i = 0; i < lines.size(); ++i) s += lines[i] + (i + 1 < lines.size() ? "\n" : "");
        }
      }
    }
  }
  return s;
}

// Where the input under test lives; copied out by the crash handler (async-signal-safe syscalls only).
char g_input[4096];
char g_crash[4096];

void on_crash(int sig) {
  const int in = ::open(g_input, O_RDONLY);
  const int out = ::open(g_crash, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char buf[4096];
  ssize_t n;
  while (in >= 0 && out >= 0 && (n = ::read(in, buf, sizeof buf)) > 0) {
    if (::write(out, buf, static_cast<std::size_t>(n)) < 0) break;
  }
  const char msg[] = "\nccbench_fuzz: crash; the input is saved as ";
  (void)!::write(2, msg, sizeof msg - 1);
  (void)!::write(2, g_crash, std::strlen(g_crash));
  (void)!::write(2, "\n", 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

struct Stats {
  std::uint64_t runs = 0, accepted = 0, refused = 0;
  std::map<std::string, std::uint64_t> findings;  // kind: message -> count
  std::map<std::string, std::string> examples;    // same key -> saved input path
};

// One line, the file's path as <file>, quoted and numeric details dropped so that one defect counts
// once ('1e999' and '1e3001024' are the same overflow).
std::string first_line(std::string s, const std::string& path) {
  s = s.substr(0, s.find('\n'));
  for (std::size_t p; (p = s.find(path)) != std::string::npos;) s.replace(p, path.size(), "<file>");
  std::string out;
  bool quoted = false;
  for (char c : s) {
    if (c == '\'') {
      quoted = !quoted;
      if (quoted) out += "'...'";
    } else if (!quoted && std::isdigit(static_cast<unsigned char>(c))) {
      if (out.empty() || out.back() != '#') out += '#';
    } else if (!quoted) {
      out += c;
    }
  }
  s = out;
  return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

void run_one(const Loader& loader, const std::string& data, const fs::path& path, const fs::path& findings_dir,
             double slow_ms, Stats& st) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  std::snprintf(g_input, sizeof g_input, "%s", path.c_str());
  std::snprintf(g_crash, sizeof g_crash, "%s/crash-%.*s%.*s", findings_dir.c_str(),
                static_cast<int>(loader.name.size()), loader.name.data(), static_cast<int>(loader.extension.size()),
                loader.extension.data());
  ++st.runs;
  std::string finding;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    loader.load(path);
    ++st.accepted;
  } catch (const ccbench::ParseError& e) {
    ++st.refused;
    if (std::string(e.what()).find(path.string()) == std::string::npos)
      finding = "unnamed: message names no file: " + first_line(e.what(), path.string());
  } catch (const ccbench::UsageError& e) {
    ++st.refused;
    if (std::string(e.what()).find(path.string()) == std::string::npos)
      finding = "unnamed: message names no file: " + first_line(e.what(), path.string());
  } catch (const std::exception& e) {
    finding = "exception: " + first_line(e.what(), path.string());
  } catch (...) {
    finding = "exception: not a std::exception";
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (finding.empty() && ms > slow_ms)
    finding = "slow: over " + std::to_string(static_cast<int>(slow_ms)) + " ms on one input";
  if (finding.empty()) return;
  const std::string key = std::string(loader.name) + ": " + finding;
  if (st.findings[key]++ == 0) {
    const fs::path saved = findings_dir / (std::string(loader.name) + "-" + std::to_string(st.findings.size()) +
                                           std::string(loader.extension));
    std::error_code ec;
    fs::copy_file(path, saved, fs::copy_options::overwrite_existing, ec);
    st.examples[key] = saved.string();
  }
}

// A seed too large to keep in the repository (JSON nested 10^6 deep is 2 MB), written as lines
// "repeat N TEXT": TEXT (the rest of the line) N times. Any other line is taken as it is.
std::string expand_generated_seed(const std::string& spec) {
  std::string out;
  std::size_t start = 0;
  while (start < spec.size()) {
    const std::size_t nl = spec.find('\n', start);
    const std::string line = spec.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? spec.size() : nl + 1;
    std::size_t n = 0;
    int used = 0;
    if (std::sscanf(line.c_str(), "repeat %zu %n", &n, &used) == 1 && used > 0 && n <= (1u << 24)) {
      const std::string text = line.substr(static_cast<std::size_t>(used));
      out.reserve(out.size() + n * text.size());
      for (std::size_t i = 0; i < n; ++i) out += text;
    } else {
      out += line + "\n";
    }
  }
  return out;
}

std::vector<std::string> read_corpus(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    out.push_back(f.extension() == ".gen" ? expand_generated_seed(text) : std::move(text));
  }
  if (out.empty()) out.emplace_back();
  return out;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "ccbench_fuzz: %s\nusage: ccbench_fuzz [--loader NAME|all] [--corpus DIR] [--seconds S | --runs N] "
               "[--seed N] [--findings DIR] [--slow-ms MS] [--replay FILE...]\nloaders:",
               why);
  for (const auto& l : ccbench::fuzz::loaders())
    std::fprintf(stderr, " %.*s", static_cast<int>(l.name.size()), l.name.data());
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string loader_name = "all";
  fs::path corpus_root = CCBENCH_FUZZ_CORPUS, findings_dir = "fuzz-findings";
  double seconds = 0, slow_ms = 2000;
  std::uint64_t runs = 0, seed = 1;
  std::vector<fs::path> replay;
  std::string fail_on = "exception,unnamed,slow";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--loader")
        loader_name = value();
      else if (a == "--corpus")
        corpus_root = value();
      else if (a == "--seconds")
        seconds = std::stod(value());
      else if (a == "--runs")
        runs = std::stoull(value());
      else if (a == "--seed")
        seed = std::stoull(value());
      else if (a == "--findings")
        findings_dir = value();
      else if (a == "--slow-ms")
        slow_ms = std::stod(value());
      else if (a == "--fail-on")
        fail_on = value();
      else if (a == "--replay") {
        while (i + 1 < argc) replay.emplace_back(argv[++i]);
      } else
        return usage(("unknown argument " + a).c_str());
    } catch (const std::exception& e) {
      return usage(e.what());
    }
  }
  std::vector<const Loader*> chosen;
  for (const auto& l : ccbench::fuzz::loaders()) {
    if (loader_name == "all" || l.name == loader_name) chosen.push_back(&l);
  }
  if (chosen.empty()) return usage(("unknown loader " + loader_name).c_str());
  std::error_code ec;
  fs::create_directories(findings_dir, ec);
  findings_dir = fs::absolute(findings_dir);
  const fs::path work = fs::path(fs::exists("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().c_str()) /
                        ("ccbench-fuzz-" + std::to_string(::getpid()));
  fs::create_directories(work);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_crash);

  std::uint64_t total_runs = 0;
  std::size_t total_findings = 0, failing = 0;
  for (const Loader* l : chosen) {
    Stats st;
    const fs::path input = work / ("input" + std::string(l->extension));
    if (!replay.empty()) {
      for (const auto& f : replay) {
        std::ifstream in(f, std::ios::binary);
        run_one(*l, std::string(std::istreambuf_iterator<char>(in), {}), input, findings_dir, slow_ms, st);
      }
    } else {
      const auto corpus = read_corpus(corpus_root / std::string(l->name));
      for (const auto& c : corpus) run_one(*l, c, input, findings_dir, slow_ms, st);  // seeds first, as they are
      Rng rng{seed * 0x9E3779B97F4A7C15ULL + 1};
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration<double>(seconds / static_cast<double>(chosen.size()));
      const std::uint64_t per_loader = runs / chosen.size();
      // A line on stderr every 10 s: a loader's summary comes at the end of its share, and
      // `--loader config --seconds 60` said nothing for the whole minute.
      const auto loader_start = std::chrono::steady_clock::now();
      auto next_report = loader_start + std::chrono::seconds(10);
      for (std::uint64_t k = 0;; ++k) {
        const auto now = std::chrono::steady_clock::now();
        if (runs > 0 ? k >= per_loader : (seconds <= 0 || now >= deadline)) break;
        if (now >= next_report) {
          std::fprintf(stderr, "ccbench_fuzz: %.*s: %llu executions in %.0f s, %zu kinds of findings so far\n",
                       static_cast<int>(l->name.size()), l->name.data(), static_cast<unsigned long long>(st.runs),
                       std::chrono::duration<double>(now - loader_start).count(), st.findings.size());
          next_report = now + std::chrono::seconds(10);
        }
        run_one(*l, mutate(corpus[rng.below(corpus.size())], corpus, rng), input, findings_dir, slow_ms, st);
      }
    }
    std::printf("%-16.*s %8llu executions: %llu accepted, %llu refused with a message, %zu kinds of findings\n",
                static_cast<int>(l->name.size()), l->name.data(), static_cast<unsigned long long>(st.runs),
                static_cast<unsigned long long>(st.accepted), static_cast<unsigned long long>(st.refused),
                st.findings.size());
    for (const auto& [k, n] : st.findings) {
      std::printf("  finding (%llu times): %s\n    input: %s\n", static_cast<unsigned long long>(n), k.c_str(),
                  st.examples[k].c_str());
    }
    total_runs += st.runs;
    total_findings += st.findings.size();
    for (const auto& [k, n] : st.findings) {
      const std::size_t from = l->name.size() + 2;
      const std::string kind = k.substr(from, k.find(':', from) - from);
      if (("," + fail_on + ",").find("," + kind + ",") != std::string::npos) ++failing;
    }
  }
  fs::remove_all(work, ec);
  std::printf("total: %llu executions, %zu kinds of findings, %zu of a kind in --fail-on (%s)\n",
              static_cast<unsigned long long>(total_runs), total_findings, failing, fail_on.c_str());
  return failing == 0 ? 0 : 1;
}
