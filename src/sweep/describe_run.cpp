#include "sweep/describe_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/run_metadata.hpp"
#include "system/host_info.hpp"
#include "system/instance_profile.hpp"
#include "system/library_versions.hpp"
#include "system/tool_version.hpp"

namespace ccbench {

std::vector<std::string> recorded_command(std::string_view command, int argc, char** argv) {
  std::vector<std::string> line(argv, argv + argc);
  if (!line.empty()) line[0] = command;
  return line;
}

ResultFile describe_run(const RunConfig& config, ControlChannel& channel, const Backend& backend, const Plan& plan,
                        const std::vector<std::string>& command) {
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
  file.run.command = command;
  file.run.label = config.label;
  file.system = nlohmann::json::object();
  record_topology(file, {.ranks = channel.size(),
                         .nodes = nodes,
                         .ranks_per_node = ranks_per_node,
                         .instance_type = instance_type,
                         .hosts = hosts});
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
  if (path.empty() && backend_fabric.is_object() && backend_fabric.contains("path")) {
    path = metadata_text(backend_fabric["path"]);
  }
  if (path.empty()) path = nodes == 1 ? "shm" : "network";
  FabricRecord fabric;
  fabric.path = path;
  if (const auto* p = backend_fabric.is_object() ? &backend_fabric : nullptr; p && p->contains("provider")) {
    const std::string provider = metadata_text((*p)["provider"]);
    if (!provider.empty()) fabric.provider = provider;
  }
  if (!config.fabric_generation.empty()) {
    fabric.generation = config.fabric_generation;
  } else if (profile) {
    fabric.generation = profile->efa_generation;
  }
  // The profile's EFA rate describes the EFA path only: a run over shm or NVLink records no link
  // rate unless --link-gbps says one.
  fabric.link_gbps = link_gbps_for_path(path, config.link_gbps,
                                        profile ? std::optional<double>(profile->efa_gbps) : std::optional<double>());
  record_fabric(file, fabric);
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

}  // namespace ccbench
