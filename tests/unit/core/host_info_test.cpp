// Discovery on a fake /sys + /proc tree: EFA devices by driver, raw PCI ids, GPUs, DMI name.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "system/host_info.hpp"
#include "system/instance_profile.hpp"

namespace ccbench::system {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(HostInfo, ReadsEfaDevicesGpusAndDmiFromAFakeTree) {
  const fs::path root = fs::temp_directory_path() / ("ccbench_sysfs_" + std::to_string(::getpid()));
  fs::remove_all(root);
  write(root / "etc/hostname", "node-a\n");
  write(root / "proc/cpuinfo", "processor\t: 0\nmodel name\t: Fake CPU @ 3GHz\nprocessor\t: 1\nmodel name\t: Fake CPU @ 3GHz\n");
  write(root / "proc/meminfo", "MemTotal:       1000 kB\nMemFree:         10 kB\nMemAvailable:    500 kB\n");
  write(root / "sys/devices/virtual/dmi/id/product_name", "p5en.48xlarge\n");
  // rdmap0: an EFA device; mlx5_0: not efa (p6-b200 lists NVLink controllers there too).
  for (const auto& [dev, driver, id] : {std::tuple{"rdmap0", "efa", "0xefa2"}, std::tuple{"mlx5_0", "mlx5_core", "0x101d"}}) {
    const fs::path pci = root / "sys/devices/pci0000:00" / (std::string("0000:00:1") + (driver[0] == 'e' ? "a" : "b") + ".0");
    write(pci / "vendor", driver[0] == 'e' ? "0x1d0f\n" : "0x15b3\n");
    write(pci / "device", std::string(id) + "\n");
    write(pci / "subsystem_device", "0xefa2\n");
    fs::create_directories(root / "sys/bus/pci/drivers" / driver);
    fs::create_symlink(root / "sys/bus/pci/drivers" / driver, pci / "driver");
    fs::create_directories(root / "sys/class/infiniband" / dev);
    fs::create_directory_symlink(pci, root / "sys/class/infiniband" / dev / "device");
  }
  write(root / "proc/driver/nvidia/gpus/0000:53:00.0/information", "Model: \t NVIDIA H200\nIRQ: 1\n");

  const HostInfo host = read_host_info(root.string());
  EXPECT_EQ(host.hostname, "node-a");
  EXPECT_EQ(host.cpu_model, "Fake CPU @ 3GHz");
  EXPECT_EQ(host.cpu_count, 2);
  EXPECT_EQ(host.memory_bytes, 1000u * 1024u);
  EXPECT_EQ(host.memory_available_bytes, 500u * 1024u);
  EXPECT_EQ(host.product_name, "p5en.48xlarge");
  ASSERT_EQ(host.efa.size(), 1u);
  EXPECT_EQ(host.efa[0].name, "rdmap0");
  EXPECT_EQ(host.efa[0].vendor_id, "0x1d0f");
  EXPECT_EQ(host.efa[0].device_id, "0xefa2");
  EXPECT_EQ(host.efa[0].subsystem_id, "0xefa2");
  ASSERT_EQ(host.gpus.size(), 1u);
  EXPECT_EQ(host.gpus[0].model, "NVIDIA H200");
  EXPECT_EQ(host.gpus[0].pci_bus_id, "0000:53:00.0");
  const auto j = to_json(host);
  EXPECT_EQ(j["efa"][0]["device_id"], "0xefa2");
  fs::remove_all(root);
}

TEST(InstanceProfile, KnownTypesAndUnknown) {
  const auto p5en = find_instance_profile("p5en.48xlarge");
  ASSERT_TRUE(p5en.has_value());
  EXPECT_EQ(p5en->efa_generation, "v3");
  EXPECT_DOUBLE_EQ(p5en->efa_gbps, 3200);
  const auto b300 = find_instance_profile("p6-b300.48xlarge");
  ASSERT_TRUE(b300.has_value());
  EXPECT_EQ(b300->efa_generation, "v4");
  EXPECT_DOUBLE_EQ(b300->efa_gbps, 6400);
  EXPECT_FALSE(find_instance_profile("Standard PC (Q35 + ICH9, 2009)").has_value());
}

}  // namespace
}  // namespace ccbench::system
