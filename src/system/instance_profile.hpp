// Instance profiles (configs/instances/aws.yaml, compiled in): what an instance type implies about
// the EFA generation and link bandwidth, which the comparator needs to normalise.
#pragma once

#include <optional>
#include <string>

namespace ccbench::system {

struct InstanceProfile {
  std::string instance_type;
  int gpus = 0;
  std::string gpu;
  std::string efa_generation;  // "v1".."v4"
  int efa_devices = 0;
  double efa_gbps = 0;  // total EFA bandwidth per node, Gbit/s
  std::string nvlink;
};

// nullopt for an unknown type (off EC2 the DMI product name is something else).
std::optional<InstanceProfile> find_instance_profile(const std::string& instance_type);

}  // namespace ccbench::system
