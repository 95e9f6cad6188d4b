// Shared by the hardening tests: a fresh temporary folder per test and a helper that returns the
// message of the ParseError/UsageError a call throws ("" when it throws nothing).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"

namespace ccbench::harden_test {

inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("ccbench-harden-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

inline std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ParseError& e) {
    return e.what();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace ccbench::harden_test
