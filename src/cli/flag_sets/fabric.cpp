#include "cli/flag_sets/fabric.hpp"

#include "sweep/percentiles_flag.hpp"

namespace ccbench::cli {

FabricFlags::FabricFlags()
    : FlagSet("ccbench fabric: libfabric point-to-point latency and bandwidth (mpirun -np 2)", "ccbench fabric") {
  RunConfig& run = config.run;
  run.backend = "libfabric";
  run.dtype = DType::uint8;
  run.redop = RedOp::none;
  run.in_place = InPlaceMode::no;
  run.sizes.min_bytes = 8;
  run.sizes.max_bytes = 4ULL << 20;
  shared.max_bytes = "4M";
  add_option("--ops", ops, "comma list: pingpong,bw,bibw,write,read")->default_str(ops);
  add_option("-p,--provider", config.provider,
             "libfabric provider (efa, shm, tcp, ...); default: efa, else shm on one host, else tcp");
  add_option("-D,--domain", config.domain, "libfabric domain (NIC), default: the provider's first");
  add_flag("--list-providers", config.list_providers, "print the providers fi_getinfo offers and exit");
  add_option("--window", config.window, "outstanding operations of bw, bibw, write, read")->default_val(64);
  add_option("--memory", memory, "host | cuda (GPU buffers through FI_HMEM)")->default_str("host");
  add_shared_flags(*this, run, shared, "operation");
  add_percentiles_flag(*this, percentiles, "one iteration a sample (a round trip halved, or a window over --window)");
}

std::unique_ptr<CLI::App> fabric_flags() { return std::make_unique<FabricFlags>(); }

}  // namespace ccbench::cli
