#include "cli/run_metadata.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "system/host_info.hpp"
#include "system/instance_profile.hpp"
#include "system/library_versions.hpp"
#include "system/tool_version.hpp"

namespace ccbench::cli {

ResultFile describe_run(const RunConfig& config, ControlChannel& channel, const Backend& backend,
                        const Plan& plan, int argc, char** argv) {
  const system::HostInfo local = system::read_host_info();
  const auto hosts_json = channel.gather_to_root(system::to_json(local).dump());
  ResultFile file;
  if (!channel.is_root()) return file;

  // One entry per host, in rank order of first appearance.
  nlohmann::json hosts = nlohmann::json::array();
  std::map<std::string, int> ranks_on_host;
  for (const auto& text : hosts_json) {
    nlohmann::json host = nlohmann::json::parse(text);
    const std::string name = host.value("hostname", "");
    if (ranks_on_host[name]++ == 0) hosts.push_back(host);
  }
  int ranks_per_node = 0;
  for (const auto& [name, count] : ranks_on_host) ranks_per_node = std::max(ranks_per_node, count);
  const int nodes = static_cast<int>(ranks_on_host.size());

  std::string instance_type = config.instance_type;
  if (instance_type.empty()) {
    const char* forced = std::getenv("OFI_NCCL_FORCE_PRODUCT_NAME");  // what aws-ofi-nccl honours
    instance_type = forced != nullptr ? forced : local.product_name;
  }
  const auto profile = system::find_instance_profile(instance_type);

  file.tool = {{"name", "ccbench"}, {"version", system::tool_version()}, {"git", system::tool_git_commit()}};
  file.run.started_at = utc_timestamp_now();
  file.run.command.assign(argv, argv + argc);
  if (!file.run.command.empty()) file.run.command[0] = "ccbench run";
  file.run.label = config.label;
  file.system = {{"instance_type", instance_type},
                 {"nodes", nodes},
                 {"ranks", channel.size()},
                 {"ranks_per_node", ranks_per_node},
                 {"hosts", hosts}};
  if (profile) {
    file.system["instance_profile"] = {{"gpus", profile->gpus},
                                       {"gpu", profile->gpu},
                                       {"efa_generation", profile->efa_generation},
                                       {"efa_devices", profile->efa_devices},
                                       {"efa_gbps", profile->efa_gbps},
                                       {"nvlink", profile->nvlink}};
  }

  nlohmann::json backend_meta = backend.metadata();
  // Fabric: what the user asserted wins, then what the backend knows, then what we can infer.
  std::string path = config.fabric_path;
  const nlohmann::json backend_fabric = backend_meta.value("fabric", nlohmann::json::object());
  if (path.empty()) path = backend_fabric.value("path", "");
  if (path.empty()) path = nodes == 1 ? "shm" : "network";
  file.fabric = {{"path", path},
                 {"provider", backend_fabric.value("provider", nlohmann::json(nullptr))},
                 {"generation", nullptr},
                 {"link_gbps", nullptr}};
  if (!config.fabric_generation.empty()) {
    file.fabric["generation"] = config.fabric_generation;
  } else if (profile) {
    file.fabric["generation"] = profile->efa_generation;
  }
  if (config.link_gbps > 0) {
    file.fabric["link_gbps"] = config.link_gbps;
  } else if (profile) {
    file.fabric["link_gbps"] = profile->efa_gbps;
  }
  backend_meta.erase("fabric");

  file.software = system::library_versions();
  file.software.update(built_in_library_versions());
  file.software.update(backend_meta);
  file.environment = system::environment_at_startup();
  file.config = to_json(config);
  file.config["clock"] = backend.clock();
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : plan.skipped) skipped.push_back({{"what", s.what}, {"reason", s.reason}});
  file.config["skipped"] = skipped;
  file.config["cases_per_trial"] = plan.cases_per_trial;
  return file;
}

}  // namespace ccbench::cli
