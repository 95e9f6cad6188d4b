// `ccbench info`: the discovered system as JSON. From a shell it describes this host; under mpirun
// or srun it gathers every rank's host, as a result file's "system" section would.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>

#include "backends/backend.hpp"
#include "cli/flag_sets/info.hpp"
#include "cli/measuring_commands.hpp"
#include "core/error.hpp"
#include "core/output_folders.hpp"
#include "core/result.hpp"
#include "sweep/flag_suggestion.hpp"
#include "sweep/mpi_channel.hpp"
#include "system/host_info.hpp"
#include "system/instance_profile.hpp"
#include "system/library_versions.hpp"
#include "system/tool_version.hpp"

namespace ccbench::cli {
namespace {

// MPI_Init only under a launcher: a singleton MPI_Init from a plain shell is slow, and in some
// containers fails, for no benefit here.
bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

int info_main(int argc, char** argv) {
  InfoFlags app;  // the row's flag set (cli/flag_sets/info.hpp)
  std::string& instance_type = app.instance_type;
  const std::string& out = app.out;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return exit_code::ok;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench info: %s\n", parse_error_text(app, e).c_str());
    return exit_code::usage;
  }

  const bool use_mpi = launched_by_mpi();
  std::optional<MpiChannel> channel;
  if (use_mpi) channel.emplace(MpiChannel::init_world(argc, argv));
  const int rank = channel ? channel->rank() : 0;
  const system::HostInfo local = system::read_host_info();
  std::string mine = system::to_json(local).dump();
  std::vector<std::string> all{mine};
  if (channel) all = channel->gather_to_root(mine);
  int rc = exit_code::ok;
  if (rank == 0) {
    nlohmann::json hosts = nlohmann::json::array();
    std::map<std::string, int> ranks_on_host;
    for (const auto& text : all) {
      const nlohmann::json host = nlohmann::json::parse(text);
      if (ranks_on_host[host.value("hostname", "")]++ == 0) hosts.push_back(host);
    }
    int ranks_per_node = 0;
    for (const auto& [name, count] : ranks_on_host) ranks_per_node = std::max(ranks_per_node, count);
    if (instance_type.empty()) {
      const char* forced = std::getenv("OFI_NCCL_FORCE_PRODUCT_NAME");
      instance_type = forced != nullptr ? forced : local.product_name;
    }
    nlohmann::json profile = nullptr;
    if (const auto p = system::find_instance_profile(instance_type)) {
      profile = {{"gpus", p->gpus},
                 {"gpu", p->gpu},
                 {"efa_generation", p->efa_generation},
                 {"efa_devices", p->efa_devices},
                 {"efa_gbps", p->efa_gbps},
                 {"nvlink", p->nvlink}};
    }
    nlohmann::json backends = nlohmann::json::array();
    for (const auto& b : backend_table()) {
      backends.push_back(
          {{"name", b.name},
           {"built_in", b.create != nullptr},
           {"summary", b.summary},
           {"missing_reason", b.create != nullptr ? nlohmann::json(nullptr) : nlohmann::json(b.missing_reason)}});
    }
    nlohmann::json software = system::library_versions();
    software.update(built_in_library_versions());
    const nlohmann::json doc = {
        {"tool", {{"name", "ccbench"}, {"version", system::tool_version()}, {"git", system::tool_git_commit()}}},
        {"system",
         {{"instance_type", instance_type},
          {"instance_profile", profile},
          {"nodes", static_cast<int>(ranks_on_host.size())},
          {"ranks", channel ? channel->size() : 1},
          {"ranks_per_node", ranks_per_node},
          {"hosts", hosts}}},
        {"software", software},
        {"backends", backends},
        {"environment", system::captured_environment()},
    };
    const std::string text = doc.dump(2) + "\n";
    if (out.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      try {
        prepare_output_file(out, "--out");
        write_file_atomically(out, text);
      } catch (const UsageError& e) {
        std::fprintf(stderr, "ccbench info: %s\n", e.what());
        rc = exit_code::usage;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ccbench info: --out %s: cannot write (%s)\n", out.c_str(), e.what());
        rc = exit_code::usage;
      }
    }
  }
  return channel ? MpiChannel::finalize(rc) : rc;
}

}  // namespace

// info needs no frame: it measures nothing, and starts MPI itself only under a launcher.
std::optional<int> info_before_mpi(int argc, char** argv) { return info_main(argc, argv); }

}  // namespace ccbench::cli
