// NCCL_IB_HCA against lists of device names, with NCCL's syntax: prefix match by default
// (mlx5_1 also matches mlx5_10), "=" exact, "^" exclude, both combined, ":port".
#include <gtest/gtest.h>

#include "transport/net/ib/ib_devices.h"

namespace braid {
namespace {

std::vector<IbPort> machine() {
  std::vector<IbPort> ports;
  for (const char* name : {"mlx5_0", "mlx5_1", "mlx5_10", "mlx5_bond_0"}) {
    for (int p : {1, 2}) {
      IbPort port;
      port.device = name;
      port.port = p;
      ports.push_back(port);
    }
  }
  return ports;
}

std::string selected(const std::string& spec) {
  std::string out;
  for (const IbPort& port : filterPorts(machine(), spec)) {
    if (!out.empty()) out += ",";
    out += port.device + ":" + std::to_string(port.port);
  }
  return out;
}

TEST(IbHca, EmptyMeansAll) { EXPECT_EQ(filterPorts(machine(), "").size(), 8u); }

TEST(IbHca, PrefixMatchByDefault) {
  EXPECT_EQ(selected("mlx5_1"), "mlx5_1:1,mlx5_1:2,mlx5_10:1,mlx5_10:2");
  EXPECT_EQ(selected("mlx5_b"), "mlx5_bond_0:1,mlx5_bond_0:2");
}

TEST(IbHca, ExactWithEquals) { EXPECT_EQ(selected("=mlx5_1"), "mlx5_1:1,mlx5_1:2"); }

TEST(IbHca, Ports) {
  EXPECT_EQ(selected("mlx5_0:1,mlx5_1:2"), "mlx5_0:1,mlx5_1:2,mlx5_10:2");
  EXPECT_EQ(selected("=mlx5_0:1,mlx5_1:2"), "mlx5_0:1,mlx5_1:2");
}

TEST(IbHca, Exclude) {
  EXPECT_EQ(selected("^mlx5_1"), "mlx5_0:1,mlx5_0:2,mlx5_bond_0:1,mlx5_bond_0:2");
  EXPECT_EQ(selected("^=mlx5_bond_0"), "mlx5_0:1,mlx5_0:2,mlx5_1:1,mlx5_1:2,mlx5_10:1,mlx5_10:2");
  EXPECT_EQ(selected("^mlx5_0:2"), "mlx5_0:1,mlx5_1:1,mlx5_1:2,mlx5_10:1,mlx5_10:2,mlx5_bond_0:1,mlx5_bond_0:2");
}

TEST(IbHca, NoMatchIsEmpty) { EXPECT_EQ(selected("=mlx5_2"), ""); }

TEST(IbHca, SpeedTable) {
  EXPECT_EQ(ibSpeedMbps(128, 2), 400000);  // NDR x4
  EXPECT_EQ(ibSpeedMbps(64, 2), 200000);   // HDR x4
  EXPECT_EQ(ibSpeedMbps(32, 1), 25000);    // EDR x1
  EXPECT_EQ(ibSpeedMbps(3, 2), 0);
  EXPECT_EQ(ibSpeedMbps(32, 3), 0);
}

TEST(IbHca, Describe) {
  IbPort port;
  port.device = "mlx5_0";
  port.linkLayer = IbLinkLayer::Ethernet;
  port.speedMbps = 100000;
  EXPECT_EQ(port.describe(), "mlx5_0:1 RoCE 100 Gb/s");
}

}  // namespace
}  // namespace braid
