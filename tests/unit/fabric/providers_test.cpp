#include "fabric/providers.hpp"

#include <gtest/gtest.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <algorithm>

namespace ccbench::fabric {
namespace {

TEST(DefaultProvider, EfaWinsThenShmOnOneHostThenTcp) {
  EXPECT_EQ(choose_default_provider({"shm", "tcp;ofi_rxm", "efa"}, true), "efa");
  EXPECT_EQ(choose_default_provider({"tcp;ofi_rxm", "shm"}, true), "shm");
  EXPECT_EQ(choose_default_provider({"tcp;ofi_rxm", "shm"}, false), "tcp");
  EXPECT_EQ(choose_default_provider({"udp;ofi_rxd", "sockets"}, false), "udp;ofi_rxd");
  EXPECT_EQ(choose_default_provider({}, true), "");
}

TEST(DefaultProvider, CoreProviderIsThePath) {
  EXPECT_EQ(core_provider("tcp;ofi_rxm"), "tcp");
  EXPECT_EQ(core_provider("efa"), "efa");
  EXPECT_EQ(core_provider(""), "");
}

TEST(ProviderNames, CapsAndMrModes) {
  EXPECT_EQ(cap_names(FI_MSG | FI_TAGGED | FI_RMA | FI_HMEM),
            (std::vector<std::string>{"msg", "tagged", "rma", "hmem"}));
  EXPECT_EQ(mr_mode_names(FI_MR_LOCAL | FI_MR_PROV_KEY | FI_MR_HMEM),
            (std::vector<std::string>{"FI_MR_LOCAL", "FI_MR_PROV_KEY", "FI_MR_HMEM"}));
  EXPECT_TRUE(mr_mode_names(0).empty());
}

// Debian's libfabric 1.17 ships shm and tcp (reliable datagrams through ofi_rxm).
TEST(ProviderQuery, ListsShmAndTcpWithReliableDatagrams) {
  const auto entries = query_providers();
  const auto rdm = rdm_provider_names(entries);
  EXPECT_NE(std::ranges::find(rdm, "shm"), rdm.end());
  EXPECT_TRUE(std::ranges::any_of(rdm, [](const std::string& p) { return core_provider(p) == "tcp"; }));
  const std::string table = format_provider_list(entries);
  EXPECT_NE(table.find("provider"), std::string::npos);
  EXPECT_NE(table.find("shm"), std::string::npos);
  EXPECT_NE(table.find("tcp"), std::string::npos);
}

}  // namespace
}  // namespace ccbench::fabric
