// The owner of run metadata (core/run_metadata.hpp): typed accessors, the key table, the fabric
// writer and the link rate a run records.
#include "core/run_metadata.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace ccbench {
namespace {

ResultFile sample_file() {
  ResultFile f;
  f.system = {{"instance_type", "p5en.48xlarge"},
              {"nodes", 2},
              {"ranks", 16},
              {"ranks_per_node", 8},
              {"hosts", {{{"hostname", "a"}, {"gpus", {{{"name", "H200"}}}}}}}};
  f.fabric = {{"path", "efa"}, {"provider", "efa"}, {"generation", "v3"}, {"link_gbps", 3200.0}};
  f.software = {{"nccl", "2.23.4"}, {"mpi", "Open MPI 4.1.6"}, {"cuda_driver", "570.1"}};
  f.config = {{"backend", "nccl"}, {"timing", "ccbench"}, {"iters", "auto"}};
  f.run.label = "v4 trial";
  return f;
}

TEST(RunMetadata, TypedAccessors) {
  const ResultFile f = sample_file();
  const RunMetadata m(f);
  EXPECT_EQ(m.fabric_path(), "efa");
  EXPECT_EQ(m.provider(), "efa");
  EXPECT_EQ(m.efa_generation(), "v3");
  EXPECT_EQ(m.link_gbps(), 3200.0);
  EXPECT_EQ(m.instance_type(), "p5en.48xlarge");
  EXPECT_EQ(m.nodes(), 2);
  EXPECT_EQ(m.ranks(), 16);
  EXPECT_EQ(m.ranks_per_node(), 8);
  EXPECT_EQ(m.backend(), "nccl");
  EXPECT_EQ(m.gpu(), "H200");
  EXPECT_EQ(m.version("nccl"), "2.23.4");
  EXPECT_EQ(m.version("driver"), "570.1");  // from software.cuda_driver
  EXPECT_EQ(m.version("cuda"), std::nullopt);
  EXPECT_EQ(m.timing(), "ccbench");
  EXPECT_EQ(m.iteration_policy(), "auto");
  EXPECT_EQ(m.label(), "v4 trial");
  EXPECT_EQ(m.text("link_gbps"), "3200");
  EXPECT_EQ(m.text("schema_version"), "1");
  EXPECT_EQ(m.text("ops"), "");  // per-row: read from the rows
}

TEST(RunMetadata, AbsentAndMalformedValuesAreAbsent) {
  ResultFile f;
  f.fabric = {{"link_gbps", nullptr}, {"path", nullptr}};
  f.system = {{"nodes", "two"}, {"ranks", 1.5}};
  const RunMetadata m(f);
  EXPECT_EQ(m.link_gbps(), std::nullopt);
  EXPECT_EQ(m.fabric_path(), std::nullopt);
  EXPECT_EQ(m.nodes(), std::nullopt);
  EXPECT_EQ(m.ranks(), std::nullopt);
  for (const auto& bad : {nlohmann::json(-5), nlohmann::json(0), nlohmann::json("3200")}) {
    f.fabric["link_gbps"] = bad;
    EXPECT_EQ(RunMetadata(f).link_gbps(), std::nullopt) << bad.dump();
  }
  // Out-of-range numbers print as numbers (the old integral test converted 1e300 to long long: UB).
  EXPECT_EQ(metadata_text(nlohmann::json(1e300)), "1e+300");
  EXPECT_EQ(metadata_text(nlohmann::json(200.0)), "200");
  EXPECT_EQ(metadata_text(nlohmann::json(12.5)), "12.5");
}

TEST(RunMetadata, OneTableOfKeys) {
  const auto must = metadata_key_names(meta_role::must_match);
  EXPECT_EQ(
      std::vector<std::string_view>(must.begin(), must.end()),
      (std::vector<std::string_view>{"ops", "dtype", "redop", "ranks", "groups", "durable", "cache", "ranks_per_node",
                                     "timing", "iteration_policy", "schema_version", "registration"}));
  // run -R: what config.registration says; a file without it (before -R, an import) registered nothing.
  ResultFile registered;
  EXPECT_EQ(RunMetadata(registered).text("registration"), "none");
  registered.config["registration"] = "comm_register";
  EXPECT_EQ(RunMetadata(registered).text("registration"), "comm_register");
  const auto claim = metadata_key_names(meta_role::claim_requirement);
  EXPECT_EQ(claim, (std::vector<std::string_view>{"instance_type", "efa_generation", "link_gbps", "fabric_path",
                                                  "provider", "backend", "gpu"}));
  ASSERT_NE(find_metadata_key("provider"), nullptr);
  EXPECT_EQ(find_metadata_key("provider")->prometheus, "fabric_provider");
  EXPECT_EQ(find_metadata_key("link_gbps")->location, "fabric.link_gbps");
  EXPECT_EQ(find_metadata_key("colour"), nullptr);
  // Every key a file-level accessor can read answers through text().
  const ResultFile f = sample_file();
  for (const auto& k : metadata_keys()) {
    if ((k.roles & meta_role::per_row) != 0 || k.name == "cuda" || k.name == "ofi_nccl" || k.name == "libfabric") {
      continue;
    }
    EXPECT_NE(RunMetadata(f).text(k.name), "") << k.name;
  }
}

// Bug: without --link-gbps a run recorded the instance profile's EFA rate even when the path was
// shm or NVLink. The profile's rate describes EFA only.
TEST(RunMetadata, LinkRateOnlyForTheEfaPath) {
  EXPECT_EQ(link_gbps_for_path("shm", 0, 3200.0), std::nullopt);
  EXPECT_EQ(link_gbps_for_path("nvlink", 0, 3200.0), std::nullopt);
  EXPECT_EQ(link_gbps_for_path("tcp", 0, 3200.0), std::nullopt);
  EXPECT_EQ(link_gbps_for_path("efa", 0, 3200.0), 3200.0);
  EXPECT_EQ(link_gbps_for_path("network", 0, 3200.0), 3200.0);
  EXPECT_EQ(link_gbps_for_path("mixed", 0, 3200.0), 3200.0);  // NCCL: NVLink inside nodes, EFA between
  EXPECT_EQ(link_gbps_for_path("efa", 0, std::nullopt), std::nullopt);
  EXPECT_EQ(link_gbps_for_path("shm", 100.0, 3200.0), 100.0);  // what the user says wins
}

TEST(RunMetadata, RecordFabricWritesTheFourKeys) {
  ResultFile f;
  f.fabric = {{"domain", "efa_0-rdm"}};
  record_fabric(f, {"efa", std::string("efa"), std::nullopt, 3200.0});
  EXPECT_EQ(f.fabric, (nlohmann::json{{"domain", "efa_0-rdm"},
                                      {"path", "efa"},
                                      {"provider", "efa"},
                                      {"generation", nullptr},
                                      {"link_gbps", 3200.0}}));
}

}  // namespace
}  // namespace ccbench
