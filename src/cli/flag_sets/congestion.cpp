#include "cli/flag_sets/congestion.hpp"

#include "cli/parse_flags.hpp"
#include "sweep/percentiles_flag.hpp"
#include "sweep/run_flags.hpp"

namespace ccbench::cli {

CongestionFlags::CongestionFlags()
    : FlagSet("ccbench congestion: congestion impact factor of collectives (launch with mpirun or srun)",
              congestion_run::kCommand) {
  config.trials = 4;
  config.in_place = InPlaceMode::no;
  shared.max_time_per_size = "0.5";
  add_shared_flags(*this, config, shared, "collective");
  // The measured tests have their own sizes; the sweep's size flags do not apply.
  // (and there is no per-size progress line).
  // Its phase loop does not run the path probe yet (docs/path-proof.md, "Not yet").
  remove_flags(*this, {"--min-bytes", "--max-bytes", "--step-factor", "--step-bytes", "--progress", "--require-path",
                       "--require-rails"});
  get_option("--trials")->description("trials: pairs of phases (isolated, congested) per pattern, interleaved");
  get_option("--json")->description("PATH.json: writes PATH.<pattern>.<isolated|congested>.json and PATH.impact.json");
  add_backend_flag(*this, config.backend, "mpi (the only backend congestion runs on so far)")
      ->default_val(config.backend);
  add_option("--measured-hosts", measured_hosts,
             "hosts whose ranks are measured (default: the first 20% of the hosts, at least 2 ranks)");
  add_option("--measured-per-host", opt.layout.measured_per_host,
             "measured ranks per measured host (0 = all; the others there are incast receivers)")
      ->default_val(0);
  add_option("--measured-ranks", measured_ranks, "explicit measured ranks, e.g. 0,1 or 0-3 (must hold 0)");
  add_option("--ranks-per-host", opt.ranks_per_host,
             "treat blocks of K consecutive ranks as one host (0 = by hostname)")
      ->default_val(0);
  add_option("--congestors", opt.patterns, "congestor patterns: alltoall,incast,bcast")->default_str(opt.patterns);
  add_option("--lat-bytes", opt.lat_bytes, "size of the latency allreduce")->default_str(opt.lat_bytes);
  add_option("--bw-bytes", opt.bw_bytes, "size of the bandwidth allreduce and alltoall")->default_str(opt.bw_bytes);
  add_option("--congestor-bytes", opt.congestor_bytes, "size of one congestor op")->default_str(opt.congestor_bytes);
  add_percentiles_flag(*this, percentiles, "one op of a measured test a sample, in each phase");
  add_option("--max-impact", opt.max_impact, "gate: exit 1 when an impact factor is shown above this");
  add_option("--fabric-path", config.fabric_path, "record the fabric path (shm, tcp, efa, ...)");
  add_option("--fabric-generation", config.fabric_generation, "record the fabric generation (v3, v4, ...)");
  add_option("--link-gbps", link_gbps, "record the per-node link rate in Gbit/s");
}

std::unique_ptr<CLI::App> congestion_flags() { return std::make_unique<CongestionFlags>(); }

}  // namespace ccbench::cli
