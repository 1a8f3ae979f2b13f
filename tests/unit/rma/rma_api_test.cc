// Windows, one-sided operations and the device API's host functions through the C API, in
// one process (one-rank communicators; the multi-process behaviour is in
// tests/multiproc/one_sided_test.cc): what works on one rank, and a clear error for every
// bad argument.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "api/device_api_types.h"
#include "last_error.h"
#include "nccl.h"

namespace {

using braid::test::lastError;

#define EXPECT_ERROR(call, code, words)                                                    \
  do {                                                                                     \
    EXPECT_EQ((call), (code)) << #call;                                                    \
    EXPECT_NE(lastError().find(words), std::string::npos) << #call << ": " << lastError(); \
  } while (0)

ncclComm_t makeOneRankComm() {
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << lastError();
  return comm;
}

class OneRank : public ::testing::Test {
 protected:
  void SetUp() override { comm_ = makeOneRankComm(); }
  void TearDown() override { EXPECT_EQ(ncclCommDestroy(comm_), ncclSuccess) << lastError(); }
  ncclComm_t comm_ = nullptr;
};

TEST_F(OneRank, PutToItselfOverNcclMemAllocAndPlainMemory) {
  void* shared = nullptr;
  ASSERT_EQ(ncclMemAlloc(&shared, 8192), ncclSuccess);
  std::vector<float> plain(1024);
  for (void* buffer : {shared, static_cast<void*>(plain.data())}) {
    ncclWindow_t window = nullptr;
    ASSERT_EQ(ncclCommWindowRegister(comm_, buffer, 4096, &window, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess)
        << lastError();
    void* user = nullptr;
    EXPECT_EQ(ncclWinGetUserPtr(comm_, window, &user), ncclSuccess);
    EXPECT_EQ(user, buffer);
    void* peer = nullptr;
    EXPECT_EQ(ncclGetPeerDevicePointer(window, 64, 0, &peer), ncclSuccess) << lastError();
    EXPECT_EQ(peer, static_cast<char*>(buffer) + 64) << "this rank's own part";
    EXPECT_EQ(ncclGetLsaDevicePointer(window, 64, 0, &peer), ncclSuccess) << lastError();
    EXPECT_EQ(peer, static_cast<char*>(buffer) + 64);

    float source[16];
    for (int i = 0; i < 16; ++i) source[i] = static_cast<float>(i) + 0.5f;
    EXPECT_EQ(ncclPutSignal(source, 16, ncclFloat, 0, window, 128, 0, 0, 0, comm_, nullptr), ncclSuccess)
        << lastError();
    EXPECT_EQ(ncclSignal(0, 0, 0, 0, comm_, nullptr), ncclSuccess) << lastError();
    ncclWaitSignalDesc_t desc = {2, 0, 0, 0};
    EXPECT_EQ(ncclWaitSignal(1, &desc, comm_, nullptr), ncclSuccess) << lastError();
    EXPECT_EQ(std::memcmp(static_cast<char*>(buffer) + 128, source, sizeof(source)), 0);
    // Waits consume: two more signals are needed for the same wait again.
    EXPECT_EQ(ncclSignal(0, 0, 0, 0, comm_, nullptr), ncclSuccess);
    ncclWaitSignalDesc_t one = {1, 0, 0, 0};
    EXPECT_EQ(ncclWaitSignal(1, &one, comm_, nullptr), ncclSuccess);
    EXPECT_EQ(ncclCommWindowDeregister(comm_, window), ncclSuccess) << lastError();
  }
  EXPECT_EQ(ncclMemFree(shared), ncclSuccess);
}

TEST_F(OneRank, GroupsFillWindowHandlesAtTheirEndAndRunWaitsAfterPuts) {
  std::vector<int> buffer(256, 0);
  ncclWindow_t window = nullptr;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclCommWindowRegister(comm_, buffer.data(), buffer.size() * sizeof(int), &window, 0), ncclSuccess);
  EXPECT_EQ(window, nullptr) << "filled at ncclGroupEnd";
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  ASSERT_NE(window, nullptr);
  int value = 77;
  ncclWaitSignalDesc_t desc = {1, 0, 0, 0};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclWaitSignal(1, &desc, comm_, nullptr), ncclSuccess);  // queued before its signal
  EXPECT_EQ(ncclPutSignal(&value, 1, ncclInt32, 0, window, 40, 0, 0, 0, comm_, nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  EXPECT_EQ(buffer[10], 77);
  EXPECT_EQ(ncclCommWindowDeregister(comm_, window), ncclSuccess);
}

// Two ranks of one process (ncclCommInitAll) driven by one thread: registrations and
// operations inside groups, waits queued before the puts they wait for.
TEST(TwoRanksOneThread, GroupsRunWindowsThenPutsThenWaits) {
  ncclComm_t comms[2] = {};
  ASSERT_EQ(ncclCommInitAll(comms, 2, nullptr), ncclSuccess) << lastError();
  void* buffers[2] = {};
  ncclWindow_t windows[2] = {};
  for (void*& buffer : buffers) ASSERT_EQ(ncclMemAlloc(&buffer, 4096), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(ncclCommWindowRegister(comms[r], buffers[r], 4096, &windows[r], 0), ncclSuccess) << lastError();
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  // Rank 0's pointer into rank 1's part is a second mapping of the same memory.
  void* peer = nullptr;
  ASSERT_EQ(ncclGetPeerDevicePointer(windows[0], 128, 1, &peer), ncclSuccess) << lastError();
  EXPECT_NE(peer, static_cast<char*>(buffers[1]) + 128);
  static_cast<int*>(peer)[0] = 4242;
  EXPECT_EQ(static_cast<int*>(buffers[1])[32], 4242);

  int values[2] = {11, 22};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) {
    ncclWaitSignalDesc_t fromOther = {1, 1 - r, 0, 0};
    EXPECT_EQ(ncclWaitSignal(1, &fromOther, comms[r], nullptr), ncclSuccess);
  }
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ncclPutSignal(&values[r], 1, ncclInt32, 1 - r, windows[r], 0, 0, 0, 0, comms[r], nullptr), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  EXPECT_EQ(static_cast<int*>(buffers[1])[0], 11);
  EXPECT_EQ(static_cast<int*>(buffers[0])[0], 22);

  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(ncclCommWindowDeregister(comms[r], windows[r]), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ncclCommDestroy(comms[r]), ncclSuccess);
    EXPECT_EQ(ncclMemFree(buffers[r]), ncclSuccess);
  }
}

TEST_F(OneRank, BadArgumentsOfWindowsGetNamedErrors) {
  std::vector<char> buffer(4096);
  ncclWindow_t window = nullptr;
  EXPECT_ERROR(ncclCommWindowRegister(nullptr, buffer.data(), 64, &window, 0), ncclInvalidArgument, "comm is NULL");
  EXPECT_ERROR(ncclCommWindowRegister(comm_, nullptr, 64, &window, 0), ncclInvalidArgument, "buff is NULL");
  EXPECT_ERROR(ncclCommWindowRegister(comm_, buffer.data(), 0, &window, 0), ncclInvalidArgument, "size is 0");
  EXPECT_ERROR(ncclCommWindowRegister(comm_, buffer.data(), 64, nullptr, 0), ncclInvalidArgument, "win (the");
  EXPECT_ERROR(ncclCommWindowRegister(comm_, buffer.data(), 64, &window, 0x40), ncclInvalidArgument, "winFlags 0x40");
  ASSERT_EQ(ncclCommWindowRegister(comm_, buffer.data(), 4096, &window,
                                   NCCL_WIN_STRICT_ORDERING | NCCL_WIN_GIN_ONLY | NCCL_WIN_CFT_COUNTED),
            ncclSuccess)
      << "every NCCL_WIN_* flag is accepted: " << lastError();

  void* out = nullptr;
  EXPECT_ERROR(ncclWinGetUserPtr(comm_, window, nullptr), ncclInvalidArgument, "outUserPtr is NULL");
  EXPECT_ERROR(ncclWinGetUserPtr(comm_, nullptr, &out), ncclInvalidArgument, "win is NULL");
  auto garbage = reinterpret_cast<ncclWindow_t>(buffer.data());
  EXPECT_ERROR(ncclWinGetUserPtr(comm_, garbage, &out), ncclInvalidArgument, "is not a registered window");
  ncclComm_t other = makeOneRankComm();
  EXPECT_ERROR(ncclWinGetUserPtr(other, window, &out), ncclInvalidArgument, "belongs to another communicator");
  EXPECT_ERROR(ncclCommWindowDeregister(other, window), ncclInvalidArgument, "belongs to another communicator");
  EXPECT_EQ(ncclCommDestroy(other), ncclSuccess);

  EXPECT_ERROR(ncclGetPeerDevicePointer(window, 0, 0, nullptr), ncclInvalidArgument, "outPtr is NULL");
  EXPECT_ERROR(ncclGetPeerDevicePointer(nullptr, 0, 0, &out), ncclInvalidArgument, "window is NULL");
  EXPECT_ERROR(ncclGetPeerDevicePointer(garbage, 0, 0, &out), ncclInvalidArgument, "is not a registered window");
  EXPECT_ERROR(ncclGetPeerDevicePointer(window, 0, 1, &out), ncclInvalidArgument, "peer=1 is outside [0, 1)");
  EXPECT_ERROR(ncclGetPeerDevicePointer(window, 4096, 0, &out), ncclInvalidArgument, "offset 4096 is outside");
  EXPECT_EQ(out, nullptr);
  EXPECT_ERROR(ncclGetLsaDevicePointer(window, 0, 1, &out), ncclInvalidArgument, "lsaRank 1 is outside");
  EXPECT_ERROR(ncclGetLsaMultimemDevicePointer(window, 0, &out), ncclInvalidUsage, "multimem");
  EXPECT_ERROR(ncclGetLsaMultimemDevicePointer(garbage, 0, &out), ncclInvalidArgument, "not a registered window");

  ASSERT_EQ(ncclCommWindowDeregister(comm_, window), ncclSuccess);
  EXPECT_ERROR(ncclCommWindowDeregister(comm_, window), ncclInvalidArgument, "is not a registered window");
  EXPECT_ERROR(ncclWinGetUserPtr(comm_, window, &out), ncclInvalidArgument, "is not a registered window");
  EXPECT_ERROR(ncclGetPeerDevicePointer(window, 0, 0, &out), ncclInvalidArgument, "is not a registered window");
  int value = 1;
  EXPECT_ERROR(ncclPutSignal(&value, 1, ncclInt32, 0, window, 0, 0, 0, 0, comm_, nullptr), ncclInvalidArgument,
               "is not a registered window");
}

TEST_F(OneRank, OneSidedOperationsNeedAWindowFirst) {
  ncclWaitSignalDesc_t desc = {1, 0, 0, 0};
  EXPECT_ERROR(ncclSignal(0, 0, 0, 0, comm_, nullptr), ncclInvalidUsage,
               "before the communicator's first ncclCommWindowRegister");
  EXPECT_ERROR(ncclWaitSignal(1, &desc, comm_, nullptr), ncclInvalidUsage, "first ncclCommWindowRegister");
}

TEST_F(OneRank, BadArgumentsOfOneSidedOperationsGetNamedErrors) {
  std::vector<char> buffer(4096);
  ncclWindow_t window = nullptr;
  ASSERT_EQ(ncclCommWindowRegister(comm_, buffer.data(), buffer.size(), &window, 0), ncclSuccess);
  char data[64] = {};
  EXPECT_ERROR(ncclPutSignal(data, 8, ncclInt8, 0, window, 0, 0, 0, 0, nullptr, nullptr), ncclInvalidArgument,
               "comm is NULL");
  EXPECT_ERROR(ncclPutSignal(data, 8, ncclInt8, 1, window, 0, 0, 0, 0, comm_, nullptr), ncclInvalidArgument,
               "peer=1 is outside [0, 1)");
  EXPECT_ERROR(ncclPutSignal(data, 8, ncclInt8, -1, window, 0, 0, 0, 0, comm_, nullptr), ncclInvalidArgument,
               "peer=-1");
  EXPECT_ERROR(ncclPutSignal(data, 8, ncclInt8, 0, nullptr, 0, 0, 0, 0, comm_, nullptr), ncclInvalidArgument,
               "peerWin is NULL");
  EXPECT_ERROR(ncclPutSignal(nullptr, 8, ncclInt8, 0, window, 0, 0, 0, 0, comm_, nullptr), ncclInvalidArgument,
               "localbuff is NULL");
  // ncclNumTypes: within the enum's range (C++ may not even load 99 from it), not a type.
  EXPECT_ERROR(ncclPutSignal(data, 8, ncclNumTypes, 0, window, 0, 0, 0, 0, comm_, nullptr), ncclInvalidArgument,
               "datatype=12");
  EXPECT_ERROR(ncclPutSignal(data, 8, ncclInt8, 0, window, 4090, 0, 0, 0, comm_, nullptr), ncclInvalidArgument,
               "leave rank 0's part of the window (4096 bytes)");
  EXPECT_ERROR(ncclPutSignal(data, 1, ncclInt8, 0, window, 5000, 0, 0, 0, comm_, nullptr), ncclInvalidArgument,
               "peerWinOffset 5000");
  EXPECT_ERROR(ncclPutSignal(data, size_t{1} << 62, ncclFloat64, 0, window, 0, 0, 0, 0, comm_, nullptr),
               ncclInvalidArgument, "overflows");
  EXPECT_ERROR(ncclPutSignal(data, 8, ncclInt8, 0, window, 0, 1, 0, 0, comm_, nullptr), ncclInvalidArgument,
               "signal index 1 is outside [0, 1)");
  EXPECT_ERROR(ncclPutSignal(data, 8, ncclInt8, 0, window, 0, 0, 1, 0, comm_, nullptr), ncclInvalidArgument,
               "context 1 is outside [0, 1)");
  EXPECT_ERROR(ncclPutSignal(data, 8, ncclInt8, 0, window, 0, 0, 0, 4, comm_, nullptr), ncclInvalidArgument,
               "flags=4 must be 0");
  EXPECT_EQ(ncclPutSignal(nullptr, 0, ncclInt8, 0, window, 4096, 0, 0, 0, comm_, nullptr), ncclSuccess)
      << "an empty put at the window's end only signals: " << lastError();

  EXPECT_ERROR(ncclSignal(1, 0, 0, 0, comm_, nullptr), ncclInvalidArgument, "peer=1");
  EXPECT_ERROR(ncclSignal(0, -1, 0, 0, comm_, nullptr), ncclInvalidArgument, "signal index -1");
  EXPECT_ERROR(ncclSignal(0, 0, 2, 0, comm_, nullptr), ncclInvalidArgument, "context 2");
  EXPECT_ERROR(ncclSignal(0, 0, 0, 1, comm_, nullptr), ncclInvalidArgument, "flags=1");

  ncclWaitSignalDesc_t desc = {1, 0, 0, 0};
  EXPECT_ERROR(ncclWaitSignal(0, &desc, comm_, nullptr), ncclInvalidArgument, "nDesc=0");
  EXPECT_ERROR(ncclWaitSignal(1, nullptr, comm_, nullptr), ncclInvalidArgument, "signalDescs is NULL");
  ncclWaitSignalDesc_t bad[2] = {{1, 0, 0, 0}, {0, 0, 0, 0}};
  EXPECT_ERROR(ncclWaitSignal(2, bad, comm_, nullptr), ncclInvalidArgument, "signalDescs[1].opCnt=0");
  bad[1] = {1, 3, 0, 0};
  EXPECT_ERROR(ncclWaitSignal(2, bad, comm_, nullptr), ncclInvalidArgument, "signalDescs[1].peer=3");
  bad[1] = {1, 0, 5, 0};
  EXPECT_ERROR(ncclWaitSignal(2, bad, comm_, nullptr), ncclInvalidArgument, "signal index 5");
  EXPECT_ERROR(ncclWaitSignal(1, &desc, nullptr, nullptr), ncclInvalidArgument, "comm is NULL");
  // The empty put above signalled once: that one is there to take.
  EXPECT_EQ(ncclWaitSignal(1, &desc, comm_, nullptr), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommWindowDeregister(comm_, window), ncclSuccess);
}

TEST_F(OneRank, DeviceCommunicatorsAreRefusedWithTheReason) {
  alignas(8) char requirements[512] = {};
  alignas(8) char devComm[4096] = {};
  auto* reqs = reinterpret_cast<ncclDevCommRequirements*>(requirements);
  auto* dev = reinterpret_cast<ncclDevComm*>(devComm);
  EXPECT_ERROR(ncclDevCommCreate(comm_, reqs, dev), ncclInvalidUsage, "NCCL's device API (nccl_device.h)");
  EXPECT_ERROR(ncclDevCommCreate(comm_, nullptr, dev), ncclInvalidArgument, "reqs is NULL");
  EXPECT_ERROR(ncclDevCommCreate(comm_, reqs, nullptr), ncclInvalidArgument, "outDevComm is NULL");
  EXPECT_ERROR(ncclDevCommCreate(nullptr, reqs, dev), ncclInvalidArgument, "comm is NULL");
  EXPECT_ERROR(ncclDevCommDestroy(comm_, dev), ncclInvalidUsage, "no device communicator can exist");
  EXPECT_ERROR(ncclDevCommDestroy(comm_, nullptr), ncclInvalidArgument, "devComm is NULL");
}

TEST_F(OneRank, PropertiesAndTeams) {
  ncclCommProperties props{};
  props.size = sizeof(props);
  props.magic = 0xcafebeef;
  props.version = 23203;
  props.nvmlDev = 5;
  ASSERT_EQ(ncclCommQueryProperties(comm_, &props), ncclSuccess) << lastError();
  EXPECT_EQ(props.rank, 0);
  EXPECT_EQ(props.nRanks, 1);
  EXPECT_EQ(props.cudaDev, -1);
  EXPECT_EQ(props.nvmlDev, -1);
  EXPECT_FALSE(props.deviceApiSupport);
  EXPECT_FALSE(props.multimemSupport);
  EXPECT_EQ(props.nLsaTeams, 1);
  EXPECT_TRUE(props.hostRmaSupport);
  EXPECT_NE(props.commHash, 0u);

  // A 2.29 caller's struct ends before commHash: nothing beyond its size is written.
  ncclCommProperties older{};
  older.size = offsetof(ncclCommProperties, railedGinType) + sizeof(int);
  older.magic = 0xcafebeef;
  ASSERT_EQ(ncclCommQueryProperties(comm_, &older), ncclSuccess);
  EXPECT_TRUE(older.hostRmaSupport);
  EXPECT_EQ(older.commHash, 0u);

  props.magic = 1;
  EXPECT_ERROR(ncclCommQueryProperties(comm_, &props), ncclInvalidArgument, "not NCCL_API_MAGIC");
  EXPECT_ERROR(ncclCommQueryProperties(comm_, nullptr), ncclInvalidArgument, "props is NULL");
  EXPECT_ERROR(ncclCommQueryProperties(nullptr, &props), ncclInvalidArgument, "comm is NULL");

  ncclTeam world = ncclTeamWorld(comm_);
  EXPECT_EQ(world.nRanks, 1);
  EXPECT_EQ(world.rank, 0);
  EXPECT_EQ(world.stride, 1);
  ncclTeam lsa = ncclTeamLsa(comm_);
  EXPECT_EQ(lsa.nRanks, 1);
  ncclTeam rail = ncclTeamRail(comm_);
  EXPECT_EQ(rail.nRanks, 1);
  EXPECT_EQ(rail.stride, 1);
  EXPECT_EQ(ncclTeamRankToWorld(comm_, world, 0), 0);
  EXPECT_EQ(ncclTeamRankToLsa(comm_, world, 0), 0);
  EXPECT_EQ(ncclTeamRankToWorld(comm_, world, 1), -1);
  EXPECT_NE(lastError().find("rank 1 is outside the team [0, 1)"), std::string::npos) << lastError();
  ncclTeam none = ncclTeamWorld(nullptr);
  EXPECT_EQ(none.nRanks, 0);
  EXPECT_NE(lastError().find("comm is NULL"), std::string::npos) << lastError();
  EXPECT_EQ(ncclTeamRankToLsa(nullptr, world, 0), -1);
}

}  // namespace
