// Connector's GPU-mode device views: the host views with every FIFO address translated
// and the end's own step counter and LL staging, everything else unchanged. (The
// translations themselves — host memory mapped for a device, IPC mappings — need a GPU;
// this is the part host mode can check.)
#include "transport/connector.h"

#include <gtest/gtest.h>

#include <vector>

namespace braid {
namespace {

class TestConnector : public Connector {
 public:
  TestConnector(const FifoSizes& sizes, std::vector<uint8_t>* block) : Connector(true, 3, "TEST", sizes) {
    block->assign(layoutBytes(sizes), 0);
    bindLayout(block->data(), sizes);
    recv_.proxied = true;
  }
  // Pretends the block is mapped at `offset` bytes from its host address.
  void bindWithOffset(ptrdiff_t offset, uint64_t* step, uint8_t* staging) {
    bindDeviceViews(
        [offset](auto* host) { return reinterpret_cast<decltype(host)>(reinterpret_cast<uint8_t*>(host) + offset); },
        step, staging);
  }
  static size_t stagingBytes(const FifoSizes& sizes) { return llStagingBytes(sizes); }
};

TEST(ConnectorDeviceViews, TranslateAddressesKeepGeometry) {
  FifoSizes sizes;
  sizes.simpleStepBytes = 64 << 10;
  sizes.llStepBytes = 16 << 10;
  std::vector<uint8_t> block;
  TestConnector connector(sizes, &block);
  EXPECT_FALSE(connector.hasDeviceViews());
  uint64_t deviceStep = 0;
  std::vector<uint8_t> deviceStaging(TestConnector::stagingBytes(sizes));
  const ptrdiff_t offset = 1 << 20;
  connector.bindWithOffset(offset, &deviceStep, deviceStaging.data());
  ASSERT_TRUE(connector.hasDeviceViews());

  const SendConn& hs = *connector.sendView();
  const SendConn& ds = connector.deviceSendView();
  EXPECT_EQ(reinterpret_cast<uint8_t*>(ds.shared), reinterpret_cast<uint8_t*>(hs.shared) + offset);
  EXPECT_EQ(ds.simple.base, hs.simple.base + offset);
  EXPECT_EQ(ds.ll.base, hs.ll.base + offset);
  EXPECT_EQ(ds.simple.strideBytes, hs.simple.strideBytes);
  EXPECT_EQ(ds.simple.stepBytes, hs.simple.stepBytes);
  EXPECT_EQ(ds.ll.strideBytes, hs.ll.strideBytes);
  EXPECT_EQ(ds.ll.stepBytes, hs.ll.stepBytes);
  EXPECT_EQ(ds.peer, 3);
  EXPECT_EQ(ds.step, &deviceStep);
  EXPECT_EQ(ds.llStaging, deviceStaging.data());
  EXPECT_NE(hs.step, &deviceStep);  // the host views keep their own

  const RecvConn& hr = *connector.recvView();
  const RecvConn& dr = connector.deviceRecvView();
  EXPECT_EQ(reinterpret_cast<uint8_t*>(dr.shared), reinterpret_cast<uint8_t*>(hr.shared) + offset);
  EXPECT_EQ(dr.simple.base, hr.simple.base + offset);
  EXPECT_EQ(dr.ll.base, hr.ll.base + offset);
  EXPECT_TRUE(dr.proxied);
  EXPECT_EQ(dr.step, &deviceStep);
  EXPECT_EQ(dr.llStaging, deviceStaging.data());
}

TEST(ConnectorDeviceViews, StagingMatchesHostMode) {
  FifoSizes sizes;
  EXPECT_EQ(TestConnector::stagingBytes(sizes), sizes.llStepBytes / 2 + 16);
}

}  // namespace
}  // namespace braid
