#include "system/instance_profile.hpp"

#include <yaml-cpp/yaml.h>

#include "system/instance_profiles_yaml.hpp"  // generated: kInstanceProfilesYaml

namespace ccbench::system {

std::optional<InstanceProfile> find_instance_profile(const std::string& instance_type) {
  static const YAML::Node root = YAML::Load(std::string(kInstanceProfilesYaml));
  const YAML::Node node = root["instances"][instance_type];
  if (!node || !node.IsMap()) return std::nullopt;
  InstanceProfile p;
  p.instance_type = instance_type;
  p.gpus = node["gpus"].as<int>(0);
  p.gpu = node["gpu"].as<std::string>("");
  p.efa_generation = node["efa_generation"].as<std::string>("");
  p.efa_devices = node["efa_devices"].as<int>(0);
  p.efa_gbps = node["efa_gbps"].as<double>(0.0);
  p.nvlink = node["nvlink"].as<std::string>("");
  return p;
}

}  // namespace ccbench::system
