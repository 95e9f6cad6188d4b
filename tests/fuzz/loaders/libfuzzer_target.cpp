// libFuzzer entry point over the same loader table (clang -fsanitize=fuzzer). The loader comes from
// CCBENCH_FUZZ_LOADER (default result_json):
//   CCBENCH_FUZZ_LOADER=claim ./ccbench_libfuzzer tests/fuzz/corpus/claim -max_total_time=60
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "loaders.hpp"

namespace {

const ccbench::fuzz::Loader& loader() {
  static const ccbench::fuzz::Loader* l = [] {
    const char* name = std::getenv("CCBENCH_FUZZ_LOADER");
    const auto* found = ccbench::fuzz::find_loader(name ? name : "result_json");
    if (found == nullptr) std::abort();
    return found;
  }();
  return *l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("ccbench-libfuzzer-" + std::to_string(::getpid()) + std::string(loader().extension));
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    loader().load(path);
  } catch (const ccbench::ParseError&) {
  } catch (const ccbench::UsageError&) {
  }
  // Any other exception escapes: libFuzzer reports it as a crash with the input.
  return 0;
}
