#include "backends/nccl/efa_counters.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ccbench::nccl {
namespace {

namespace fs = std::filesystem;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ccbench-efa-" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
  void device(const std::string& name, const std::string& vendor, std::uint64_t tx, std::uint64_t rx) {
    write(root_ / name / "device" / "vendor", vendor);
    const fs::path c = root_ / name / "ports" / "1" / "hw_counters";
    write(c / "tx_bytes", std::to_string(tx));
    write(c / "rx_bytes", std::to_string(rx));
    write(c / "rdma_read_bytes", "0");
    write(c / "lifespan", "12");  // not one of ours
  }
  fs::path root_;
};

TEST_F(FakeSysfs, ReadsEfaDevicesOnlyAndComputesDeltas) {
  device("rdmap16s27", "0x1d0f", 1000, 2000);
  device("mlx5_0", "0x15b3", 5, 5);  // not EFA
  const EfaCounters start = read_efa_counters(root_);
  ASSERT_EQ(start.size(), 1u);
  EXPECT_EQ(start.at("rdmap16s27/1").at("tx_bytes"), 1000u);
  EXPECT_EQ(start.at("rdmap16s27/1").count("lifespan"), 0u);

  device("rdmap16s27", "0x1d0f", 1500, 2600);
  const EfaCounters delta = counter_delta(start, read_efa_counters(root_));
  EXPECT_EQ(delta.at("rdmap16s27/1").at("tx_bytes"), 500u);
  EXPECT_EQ(delta.at("rdmap16s27/1").at("rx_bytes"), 600u);
  EXPECT_EQ(delta.at("rdmap16s27/1").at("rdma_read_bytes"), 0u);
  EXPECT_EQ(to_json(delta)["rdmap16s27/1"]["tx_bytes"], 500);

  // A counter that went backwards (driver reload) is not a huge unsigned number.
  device("rdmap16s27", "0x1d0f", 10, 10);
  EXPECT_EQ(counter_delta(start, read_efa_counters(root_)).at("rdmap16s27/1").at("tx_bytes"), 0u);
}

TEST_F(FakeSysfs, MissingDirectoryIsEmpty) {
  EXPECT_TRUE(read_efa_counters(root_ / "nope").empty());
  EXPECT_TRUE(to_json(EfaCounters{}).empty());
}

}  // namespace
}  // namespace ccbench::nccl
