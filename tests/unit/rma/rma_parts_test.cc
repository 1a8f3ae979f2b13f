// The pure and process-local parts of windows and one-sided operations: LSA teams, the
// record format of network operations and their RDMA immediate values, the signal board,
// shareable memory and its mappings, the window table the service thread writes through.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/memory/host_memory.h"
#include "core/rma/lsa_team.h"
#include "core/rma/rma_board.h"
#include "core/rma/rma_wire.h"
#include "core/rma/window.h"
#include "util/shared_region.h"

namespace braid {
namespace {

TEST(LsaTeam, HostsNumberedHostByHostGiveOneTeamPerHost) {
  std::vector<int> nodes = {0, 0, 0, 0, 1, 1, 1, 1};
  Team lsa = lsaTeam(nodes, 5);
  EXPECT_EQ(lsa.nRanks, 4);
  EXPECT_EQ(lsa.rank, 1);
  EXPECT_EQ(lsa.stride, 1);
  EXPECT_EQ(teamRankToWorld(lsa, 5, 0), 4);
  EXPECT_EQ(teamRankToWorld(lsa, 5, 3), 7);
  Team rail = railTeam(nodes, 5);
  EXPECT_EQ(rail.nRanks, 2);
  EXPECT_EQ(rail.rank, 1);
  EXPECT_EQ(rail.stride, 4);
  EXPECT_EQ(teamRankToWorld(rail, 5, 0), 1);
  Team world = worldTeam(8, 5);
  EXPECT_EQ(world.nRanks, 8);
  EXPECT_EQ(teamRankToWorld(world, 5, 2), 2);
}

TEST(LsaTeam, FollowsNcclsGreatestCommonDivisorRule) {
  // Uneven hosts (4 + 2 ranks): teams of 2, aligned blocks.
  Team uneven = lsaTeam({0, 0, 0, 0, 1, 1}, 3);
  EXPECT_EQ(uneven.nRanks, 2);
  EXPECT_EQ(uneven.rank, 1);
  // Ranks interleaved between hosts: nobody shares a team.
  EXPECT_EQ(lsaTeam({0, 1, 0, 1}, 2).nRanks, 1);
  // One host: everyone.
  Team one = lsaTeam({0, 0, 0}, 2);
  EXPECT_EQ(one.nRanks, 3);
  EXPECT_EQ(one.rank, 2);
}

TEST(RmaWire, RecordsRoundTrip) {
  RmaRecord put;
  put.kind = RmaRecordKind::Put;
  put.signal = true;
  put.source = 7;
  put.context = 1;
  put.signalIndex = 3;
  put.commHash = 0x1234567890abcdefull;
  put.window = 42;
  put.offset = 4096;
  put.bytes = (size_t{1} << 30) + 5;
  uint8_t bytes[kRmaRecordBytes];
  encodeRmaRecord(put, bytes);
  RmaRecord back;
  std::string why;
  ASSERT_TRUE(decodeRmaRecord(bytes, sizeof(bytes), &back, &why)) << why;
  EXPECT_EQ(back.kind, RmaRecordKind::Put);
  EXPECT_TRUE(back.signal);
  EXPECT_EQ(back.source, 7);
  EXPECT_EQ(back.context, 1u);
  EXPECT_EQ(back.signalIndex, 3u);
  EXPECT_EQ(back.commHash, put.commHash);
  EXPECT_EQ(back.window, 42u);
  EXPECT_EQ(back.offset, 4096u);
  EXPECT_EQ(back.bytes, put.bytes);
}

TEST(RmaWire, GarbageIsRefusedWithAReason) {
  RmaRecord record;
  record.kind = RmaRecordKind::Signal;
  record.source = 1;
  uint8_t good[kRmaRecordBytes];
  encodeRmaRecord(record, good);
  RmaRecord out;
  std::string why;
  EXPECT_FALSE(decodeRmaRecord(good, sizeof(good) - 1, &out, &why));
  EXPECT_NE(why.find("63 bytes"), std::string::npos) << why;
  uint8_t bad[kRmaRecordBytes];
  std::memcpy(bad, good, sizeof(bad));
  bad[0] ^= 0xff;
  EXPECT_FALSE(decodeRmaRecord(bad, sizeof(bad), &out, &why));
  EXPECT_NE(why.find("magic"), std::string::npos) << why;
  std::memcpy(bad, good, sizeof(bad));
  bad[4] = 9;  // kind
  EXPECT_FALSE(decodeRmaRecord(bad, sizeof(bad), &out, &why));
  EXPECT_NE(why.find("unknown kind 9"), std::string::npos) << why;
  std::memcpy(bad, good, sizeof(bad));
  bad[5] = 2;  // signal flag
  EXPECT_FALSE(decodeRmaRecord(bad, sizeof(bad), &out, &why));
  record.source = -3;
  encodeRmaRecord(record, bad);
  EXPECT_FALSE(decodeRmaRecord(bad, sizeof(bad), &out, &why));
  EXPECT_NE(why.find("rank -3"), std::string::npos) << why;
}

TEST(RmaImmediate, SignalsHellosAndGoodbyesRoundTrip) {
  std::string why;
  RmaImmediate signal;
  signal.kind = RmaImmediateKind::Signal;
  signal.context = (1u << kRmaImmediateContextBits) - 1;
  signal.signalIndex = (1u << kRmaImmediateSignalBits) - 1;
  uint32_t value = encodeRmaImmediate(signal);
  EXPECT_EQ(value, 0x7fffffffu);  // kind 1 in bits 31-30, every payload bit set
  RmaImmediate back;
  ASSERT_TRUE(decodeRmaImmediate(value, &back, &why)) << why;
  EXPECT_EQ(back.kind, RmaImmediateKind::Signal);
  EXPECT_EQ(back.context, signal.context);
  EXPECT_EQ(back.signalIndex, signal.signalIndex);
  signal.context = 3;
  signal.signalIndex = 5;
  EXPECT_EQ(encodeRmaImmediate(signal), 0x40000000u | 3u << 16 | 5u);
  ASSERT_TRUE(decodeRmaImmediate(encodeRmaImmediate(signal), &back, &why)) << why;
  EXPECT_EQ(back.context, 3u);
  EXPECT_EQ(back.signalIndex, 5u);

  RmaImmediate hello;
  hello.kind = RmaImmediateKind::Hello;
  hello.source = (1 << kRmaImmediateRankBits) - 1;
  ASSERT_TRUE(decodeRmaImmediate(encodeRmaImmediate(hello), &back, &why)) << why;
  EXPECT_EQ(back.kind, RmaImmediateKind::Hello);
  EXPECT_EQ(back.source, hello.source);

  for (RmaImmediateKind kind : {RmaImmediateKind::Data, RmaImmediateKind::Goodbye}) {
    RmaImmediate bare;
    bare.kind = kind;
    bare.context = 7;  // ignored: these kinds carry nothing
    ASSERT_TRUE(decodeRmaImmediate(encodeRmaImmediate(bare), &back, &why)) << why;
    EXPECT_EQ(back.kind, kind);
    EXPECT_EQ(back.context, 0u);
  }
  EXPECT_EQ(encodeRmaImmediate(RmaImmediate{}), 0u);
}

TEST(RmaImmediate, ValuesNoEncoderMakesAreRefused) {
  RmaImmediate out;
  std::string why;
  EXPECT_FALSE(decodeRmaImmediate(0x00000001u, &out, &why));  // Data with payload bits
  EXPECT_NE(why.find("00000001"), std::string::npos) << why;
  EXPECT_FALSE(decodeRmaImmediate(0xc0000100u, &out, &why));  // Goodbye with payload bits
  EXPECT_NE(why.find("c0000100"), std::string::npos) << why;
}

TEST(RmaImmediate, FitsOnlyWhatItsFieldsHold) {
  EXPECT_TRUE(rmaImmediateFits(1, 1, 2));
  EXPECT_TRUE(rmaImmediateFits(1 << kRmaImmediateContextBits, 1 << kRmaImmediateSignalBits, 1 << 20));
  EXPECT_FALSE(rmaImmediateFits((1 << kRmaImmediateContextBits) + 1, 1, 2));
  EXPECT_FALSE(rmaImmediateFits(1, (1 << kRmaImmediateSignalBits) + 1, 2));
  EXPECT_FALSE(rmaImmediateFits(1, 1, (1 << kRmaImmediateRankBits) + 1));
  EXPECT_FALSE(rmaImmediateFits(0, 1, 2));
}

TEST(RmaBoard, CountsSignalsAndAppliedOperationsPerSource) {
  const int nranks = 3, contexts = 2, signals = 2;
  std::vector<uint64_t> memory(RmaBoard::bytesFor(nranks, contexts, signals) / 8, 0);
  auto* base = reinterpret_cast<uint8_t*>(memory.data());
  size_t bytes = memory.size() * 8;
  RmaBoard owner, peer;
  ASSERT_TRUE(RmaBoard::attach(base, bytes, nranks, contexts, signals, true, &owner));
  ASSERT_TRUE(RmaBoard::attach(base, bytes, nranks, contexts, signals, false, &peer));
  RmaBoard wrong;
  EXPECT_FALSE(RmaBoard::attach(base, bytes, nranks + 1, contexts, signals, false, &wrong)) << "layout mismatch";
  EXPECT_FALSE(RmaBoard::attach(base, bytes - 8, nranks, contexts, signals, false, &wrong)) << "too small";
  uint32_t bell = owner.doorbell();
  peer.deliver(1, 0, 2);
  peer.deliver(1, 0, 2);
  peer.deliver(0, 1, 0);
  peer.markApplied(2);
  EXPECT_EQ(owner.received(1, 0, 2), 2u);
  EXPECT_EQ(owner.received(0, 1, 0), 1u);
  EXPECT_EQ(owner.received(0, 0, 0), 0u);
  EXPECT_EQ(owner.received(1, 1, 2), 0u);
  EXPECT_EQ(owner.applied(2), 1u);
  EXPECT_EQ(owner.applied(0), 0u);
  EXPECT_EQ(owner.doorbell(), bell + 4);
  owner.sleep(bell, 1000);  // the doorbell moved on: returns at once
}

TEST(SharedRegion, AnotherMappingSeesTheSameMemoryAndNothingIsLeft) {
  size_t regionsBefore = liveSharedRegions(), mappingsBefore = livePeerRegionMappings();
  {
    SharedRegion region;
    ASSERT_TRUE(SharedRegion::create("braid-test", 10000, &region).ok());
    EXPECT_EQ(region.size() % 4096, 0u);
    EXPECT_GE(region.size(), 10000u);
    EXPECT_EQ(region.id().pid, getpid());
    PeerRegionMapping mapping;
    Status mapped = PeerRegionMapping::map(region.id(), &mapping);
    ASSERT_TRUE(mapped.ok()) << mapped.message();
    EXPECT_NE(mapping.data(), region.data());
    std::strcpy(reinterpret_cast<char*>(mapping.data()) + 5000, "through the other mapping");
    EXPECT_STREQ(reinterpret_cast<char*>(region.data()) + 5000, "through the other mapping");
    EXPECT_EQ(liveSharedRegions(), regionsBefore + 1);
    EXPECT_EQ(livePeerRegionMappings(), mappingsBefore + 1);

    SharedRegionId wrongFile = region.id();
    ++wrongFile.inode;
    PeerRegionMapping refused;
    Status status = PeerRegionMapping::map(wrongFile, &refused);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("is not the owner's memory file"), std::string::npos) << status.message();
    SharedRegionId gone = region.id();
    gone.fd = 100000;
    status = PeerRegionMapping::map(gone, &refused);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("cannot open /proc/"), std::string::npos) << status.message();
    EXPECT_FALSE(refused.valid());
  }
  EXPECT_EQ(liveSharedRegions(), regionsBefore);
  EXPECT_EQ(livePeerRegionMappings(), mappingsBefore);
}

TEST(HostMemory, AllocationsAreShareableAndFoundByRange) {
  HostMemStats before = hostMemStats();
  void* p = nullptr;
  ASSERT_TRUE(hostMemAlloc(3 * 4096 + 1, &p).ok());
  HostMemStats during = hostMemStats();
  EXPECT_EQ(during.allocations, before.allocations + 1);
  EXPECT_EQ(during.bytes, before.bytes + 4 * 4096);
  EXPECT_EQ(during.shareable, before.shareable + 1);
  SharedRegionId region;
  size_t offset = 0;
  auto* bytes = static_cast<uint8_t*>(p);
  ASSERT_TRUE(findShareableHostMemory(bytes + 100, 4096, &region, &offset));
  EXPECT_EQ(offset, 100u);
  EXPECT_EQ(region.bytes, 4u * 4096);
  EXPECT_TRUE(findShareableHostMemory(bytes, 4 * 4096, &region, &offset));
  EXPECT_FALSE(findShareableHostMemory(bytes + 1, 4 * 4096, &region, &offset)) << "leaves the allocation";
  EXPECT_FALSE(findShareableHostMemory(bytes + 4 * 4096, 1, &region, &offset)) << "past its end";
  int onStack = 0;
  EXPECT_FALSE(findShareableHostMemory(&onStack, sizeof(onStack), &region, &offset));
  ASSERT_TRUE(hostMemFree(p).ok());
  EXPECT_FALSE(findShareableHostMemory(bytes, 1, &region, &offset)) << "freed";
  HostMemStats after = hostMemStats();
  EXPECT_EQ(after.allocations, before.allocations);
  EXPECT_EQ(after.bytes, before.bytes);
}

TEST(WindowTable, DestinationsStayInsideTheirWindow) {
  std::vector<uint8_t> memory(1000);
  WindowTable table;
  table.add(3, memory.data(), memory.size());
  uint8_t* at = nullptr;
  std::string why;
  ASSERT_TRUE(table.destination(3, 10, 990, &at, &why)) << why;
  EXPECT_EQ(at, memory.data() + 10);
  EXPECT_TRUE(table.destination(3, 1000, 0, &at, &why)) << "an empty put at the end";
  EXPECT_FALSE(table.destination(3, 10, 991, &at, &why));
  EXPECT_NE(why.find("leaves window #3 of 1000 bytes"), std::string::npos) << why;
  EXPECT_FALSE(table.destination(3, ~uint64_t{0}, 2, &at, &why)) << "offset overflow";
  EXPECT_FALSE(table.destination(4, 0, 1, &at, &why));
  EXPECT_NE(why.find("window #4 is not registered here"), std::string::npos) << why;
  table.remove(3);
  EXPECT_FALSE(table.destination(3, 0, 1, &at, &why));
}

}  // namespace
}  // namespace braid
