// Which device of a multi-device network backend (NCCL_IB_HCA=mlx5_0,mlx5_1) a connection
// uses: channels take the devices in turn, and Hier's cross-host rings start at the local
// rank's own, so that the host's ranks spread over its NICs instead of all driving the first.
#include <gtest/gtest.h>

#include <vector>

#include "transport/net/net_transport.h"

namespace braid {
namespace {

ConnRequest request(ConnPurpose purpose, int channel, int rail) {
  ConnRequest r;
  r.purpose = purpose;
  r.channel = channel;
  r.rail = rail;
  return r;
}

TEST(NetDevice, ChannelsTakeTheDevicesInTurn) {
  for (int c = 0; c < 6; ++c) EXPECT_EQ(netDeviceFor(request(ConnPurpose::Ring, c, 0), 4), c % 4) << "channel " << c;
}

TEST(NetDevice, OneDeviceOrNoneIsAlwaysTheFirst) {
  for (int devices : {0, 1}) {
    EXPECT_EQ(netDeviceFor(request(ConnPurpose::Ring, 3, 0), devices), 0);
    EXPECT_EQ(netDeviceFor(request(ConnPurpose::HierCross, 1, 5), devices), 0);
  }
}

TEST(NetDevice, HierCrossRingsOfTheHostsRanksUseDifferentDevices) {
  // 4 local ranks, 2 HCAs, 1 channel: local ranks 0 and 2 on the first, 1 and 3 on the second.
  const int devices = 2;
  std::vector<int> used;
  for (int local = 0; local < 4; ++local)
    used.push_back(netDeviceFor(request(ConnPurpose::HierCross, 0, local), devices));
  EXPECT_EQ(used, (std::vector<int>{0, 1, 0, 1}));
  // With as many devices as local ranks, each has its own on every channel, and a second
  // channel moves every rank to the next device (the channels still alternate).
  for (int local = 0; local < 4; ++local) {
    EXPECT_EQ(netDeviceFor(request(ConnPurpose::HierCross, 0, local), 4), local);
    EXPECT_EQ(netDeviceFor(request(ConnPurpose::HierCross, 1, local), 4), (local + 1) % 4);
  }
}

TEST(NetDevice, EachLocalRankGetsItsOwnDeviceWhetherOrNotItsListIsRotated) {
  // Physical devices 0..3 of a host. Named in NCCL_IB_HCA, every rank's list is in the
  // given order; ranked by the topology, local rank j's list starts at the j-th.
  const int devices = 4;
  for (int local = 0; local < devices; ++local) {
    std::vector<int> given, rotated;
    for (int k = 0; k < devices; ++k) {
      given.push_back(k);
      rotated.push_back((local + k) % devices);
    }
    for (int channel = 0; channel < 3; ++channel) {
      const int want = (local + channel) % devices;
      ConnRequest named = request(ConnPurpose::HierCross, channel, hierCrossRail(false, local));
      ConnRequest ranked = request(ConnPurpose::HierCross, channel, hierCrossRail(true, local));
      EXPECT_EQ(given[static_cast<size_t>(netDeviceFor(named, devices))], want) << "local " << local;
      EXPECT_EQ(rotated[static_cast<size_t>(netDeviceFor(ranked, devices))], want) << "local " << local;
    }
  }
}

TEST(NetDevice, BothEndsOfACrossConnectionAgree) {
  // The sender's request and the receiver's carry the same channel and rail (the local
  // index both ends share), whatever their peers: the device is the same at both ends.
  ConnRequest send = request(ConnPurpose::HierCross, 2, 3);
  send.isSend = true;
  send.peer = 7;
  ConnRequest recv = request(ConnPurpose::HierCross, 2, 3);
  recv.peer = 11;
  for (int devices = 1; devices <= 8; ++devices) EXPECT_EQ(netDeviceFor(send, devices), netDeviceFor(recv, devices));
}

}  // namespace
}  // namespace braid
