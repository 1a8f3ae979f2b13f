// Collectives between processes over the IB backend (NCCL_NET=IB, shared memory off so the
// two ranks of this host use the network), and backend selection: IB when asked for and
// usable, a clear error when asked for and not usable, sockets (with an INFO line) when
// not asked for. The IB-using tests (label rdma) need an ACTIVE verbs port and skip,
// saying why, without one; in the soft-RoCE VM (ctest -L rxe) they run for real.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "multiproc_util.h"
#include "transport/net/ib/ib_backend.h"

namespace braid::test {
namespace {

constexpr double kTimeout = 240;  // soft-RoCE under emulation

// args: id, largest count. Rank `index` of 2: all-reduce, all-gather and a send/recv
// exchange, checked, for 1, 4099 and the largest count of floats.
BRAID_CHILD_SCENARIO(ib_collectives) {
  ncclUniqueId id = argToId(ctx.args[0]);
  size_t largest = std::strtoull(ctx.args[1].c_str(), nullptr, 10);
  const int n = 2, r = ctx.index;
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, n, id, r));
  for (size_t count : {size_t{1}, size_t{4099}, largest}) {
    std::vector<float> data(count), gathered(count * n);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>((static_cast<size_t>(r) + i) % 5);
    std::vector<float> input = data;
    CHILD_OK(ncclAllReduce(data.data(), data.data(), count, ncclFloat, ncclSum, comm, nullptr));
    for (size_t i = 0; i < count; ++i) {
      float want = static_cast<float>(i % 5) + static_cast<float>((1 + i) % 5);
      CHILD_CHECK(data[i] == want);
    }
    CHILD_OK(ncclAllGather(input.data(), gathered.data(), count, ncclFloat, comm, nullptr));
    for (size_t i = 0; i < gathered.size(); ++i)
      CHILD_CHECK(gathered[i] == static_cast<float>((i / count + i % count) % 5));
    std::vector<float> from(count);
    CHILD_OK(ncclGroupStart());
    CHILD_OK(ncclSend(input.data(), count, ncclFloat, 1 - r, comm, nullptr));
    CHILD_OK(ncclRecv(from.data(), count, ncclFloat, 1 - r, comm, nullptr));
    CHILD_OK(ncclGroupEnd());
    for (size_t i = 0; i < count; ++i) CHILD_CHECK(from[i] == static_cast<float>((static_cast<size_t>(1 - r) + i) % 5));
  }
  std::printf("IB collectives passed on rank %d\n", r);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

// args: id, nranks, count. An all-reduce of `count` floats (every rank's input different),
// checked on every rank, then one of 1 float (the tail Hier hands to local rank 0).
BRAID_CHILD_SCENARIO(ib_allreduce_n) {
  ncclUniqueId id = argToId(ctx.args[0]);
  const int n = std::atoi(ctx.args[1].c_str()), r = ctx.index;
  const size_t largest = std::strtoull(ctx.args[2].c_str(), nullptr, 10);
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, n, id, r));
  for (size_t count : {largest, size_t{1}}) {
    std::vector<float> data(count);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>((static_cast<size_t>(r) * 3 + i) % 7);
    CHILD_OK(ncclAllReduce(data.data(), data.data(), count, ncclFloat, ncclSum, comm, nullptr));
    for (size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int k = 0; k < n; ++k) want += static_cast<float>((static_cast<size_t>(k) * 3 + i) % 7);
      CHILD_CHECK(data[i] == want);
    }
  }
  std::printf("IB all-reduce of %d ranks passed on rank %d\n", n, r);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

// args: id. One-sided operations between the two ranks over plain memory, so that every put
// and signal goes through the network backend (here IB) to the peer's service thread: puts
// of several sizes (the largest split over the QPs), each followed by a wait and a check.
BRAID_CHILD_SCENARIO(ib_one_sided) {
  ncclUniqueId id = argToId(ctx.args[0]);
  const int r = ctx.index, peer = 1 - r;
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, id, r));
  std::vector<int> window(1 << 20, 0), source(1 << 20);
  ncclWindow_t win = nullptr;
  CHILD_OK(ncclCommWindowRegister(comm, window.data(), window.size() * sizeof(int), &win, 0));
  int round = 0;
  for (size_t count : {size_t{0}, size_t{1}, size_t{4099}, window.size()}) {
    ++round;
    for (size_t i = 0; i < count; ++i) source[i] = round * 1000 + r * 100 + static_cast<int>(i % 97);
    CHILD_OK(ncclPutSignal(source.data(), count, ncclInt32, peer, win, 0, 0, 0, 0, comm, nullptr));
    ncclWaitSignalDesc_t fromPeer = {1, peer, 0, 0};
    CHILD_OK(ncclWaitSignal(1, &fromPeer, comm, nullptr));
    for (size_t i = 0; i < count; ++i) CHILD_CHECK(window[i] == round * 1000 + peer * 100 + static_cast<int>(i % 97));
    // The peer has checked its copy before the next round overwrites it.
    CHILD_OK(ncclSignal(peer, 0, 0, 0, comm, nullptr));
    CHILD_OK(ncclWaitSignal(1, &fromPeer, comm, nullptr));
  }
  CHILD_OK(ncclCommWindowDeregister(comm, win));
  CHILD_OK(ncclCommDestroy(comm));
  std::printf("IB one-sided operations passed on rank %d\n", r);
  return 0;
}

// args: id. An all-reduce that must fail with a clear error (NCCL_NET=IB, no usable IB).
BRAID_CHILD_SCENARIO(ib_forced_unusable) {
  ncclUniqueId id = argToId(ctx.args[0]);
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, id, ctx.index));
  float x = 1;
  CHILD_CHECK(ncclAllReduce(&x, &x, 1, ncclFloat, ncclSum, comm, nullptr) != ncclSuccess);
  std::printf("error: %s\n", ncclGetLastError(comm));
  (void)ncclCommAbort(comm);
  return 0;
}

// args: id. One all-reduce that may fail; either way the process must end (no hang).
BRAID_CHILD_SCENARIO(ib_try_allreduce) {
  ncclUniqueId id = argToId(ctx.args[0]);
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, id, ctx.index));
  std::vector<float> x(4099, 1.0f);
  ncclResult_t result = ncclAllReduce(x.data(), x.data(), x.size(), ncclFloat, ncclSum, comm, nullptr);
  if (result == ncclSuccess) {
    std::printf("allreduce succeeded\n");
    CHILD_OK(ncclCommDestroy(comm));
  } else {
    std::printf("allreduce failed: %s\n", ncclGetLastError(comm));
    (void)ncclCommAbort(comm);
  }
  return 0;
}

std::map<std::string, std::string> baseEnv() {
  return {{"NCCL_SHM_DISABLE", "1"}, {"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "INIT,NET"}};
}

TEST(IbSelection, ForcedIbWithoutUsablePortIsAClearError) {
  auto env = baseEnv();
  env["NCCL_NET"] = "IB";
  env["NCCL_IB_HCA"] = "=braid_no_such_hca";
  auto results = runScenario("ib_forced_unusable", 2, {idToArg(freshId())}, 60, [&](int) { return env; });
  expectAllSucceeded(results);
  for (const ChildResult& result : results) {
    EXPECT_NE(result.output.find("NCCL_NET=IB, but IB cannot be used"), std::string::npos) << result.output;
  }
}

TEST(IbSelection, UnusableIbFallsBackToSocketsWithAReason) {
  auto env = baseEnv();
  env["NCCL_IB_HCA"] = "=braid_no_such_hca";
  auto results = runScenario("ib_collectives", 2, {idToArg(freshId()), "1048576"}, kTimeout, [&](int) { return env; });
  expectAllSucceeded(results);
  for (const ChildResult& result : results) {
    EXPECT_NE(result.output.find("NET/IB : not used ("), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("Using network Socket"), std::string::npos) << result.output;
  }
}

TEST(IbSelection, DisabledIbUsesSockets) {
  auto env = baseEnv();
  env["NCCL_IB_DISABLE"] = "1";
  auto results = runScenario("ib_collectives", 2, {idToArg(freshId()), "1048576"}, kTimeout, [&](int) { return env; });
  expectAllSucceeded(results);
  EXPECT_NE(results[0].output.find("not used (NCCL_IB_DISABLE=1)"), std::string::npos) << results[0].output;
}

class IbCollectives : public ::testing::Test {
 protected:
  void SetUp() override {
    const IbvApi* api = nullptr;
    std::string whyNot;
    ASSERT_TRUE(probeIbPorts("/sys", "", &api, &ports_, &whyNot).ok());
    if (ports_.empty()) {
      GTEST_SKIP() << "no usable verbs device here (" << whyNot
                   << "); run inside the soft-RoCE VM: ctest -L rxe, or scripts/rxe-vm/run-in-rxe-vm.sh ctest "
                      "--test-dir build -L rdma";
    }
  }
  std::vector<IbPort> ports_;
};

TEST_F(IbCollectives, TwoRanksOverIbWithAutomaticGid) {
  auto env = baseEnv();
  env["NCCL_NET"] = "IB";
  auto results = runScenario("ib_collectives", 2, {idToArg(freshId()), "1048576"}, kTimeout, [&](int) { return env; });
  expectAllSucceeded(results);
  for (const ChildResult& result : results) {
    EXPECT_NE(result.output.find("Using network IB"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("NET/IB : " + ports_[0].device + ":"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("GID table:"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("via NET/IB/0"), std::string::npos) << result.output;
    if (ports_[0].device.rfind("rxe", 0) == 0) {
      // Soft-RoCE on the VM's dummy netdev: link-local at 0, the IPv4 RoCE v2 entry at 1.
      EXPECT_NE(result.output.find("uses GID index 1 (::ffff:192.0.2.1, RoCE v2)"), std::string::npos) << result.output;
    }
  }
  std::printf("%s\n", results[0].output.c_str());
}

TEST_F(IbCollectives, OneSidedOperationsOverIb) {
  auto env = baseEnv();
  env["NCCL_NET"] = "IB";
  auto results = runScenario("ib_one_sided", 2, {idToArg(freshId())}, kTimeout, [&](int) { return env; });
  expectAllSucceeded(results);
  for (const ChildResult& result : results) {
    EXPECT_NE(result.output.find("one-sided network path ready (IB, RDMA writes with immediate)"), std::string::npos)
        << result.output;
    EXPECT_EQ(result.output.find("NCCL WARN"), std::string::npos) << result.output;
  }
}

TEST_F(IbCollectives, SeveralQueuePairsPerConnection) {
  auto env = baseEnv();
  env["NCCL_NET"] = "IB";
  env["NCCL_IB_QPS_PER_CONNECTION"] = "2";
  auto results = runScenario("ib_collectives", 2, {idToArg(freshId()), "65536"}, kTimeout, [&](int) { return env; });
  expectAllSucceeded(results);
  EXPECT_NE(results[0].output.find("with 2 QP(s)"), std::string::npos) << results[0].output;
}

// One rank forces the link-local GID (IPv6), the other chooses IPv4: the classic silent
// hang. Braid WARNs, naming both GIDs, and the operation ends (with or without an error).
TEST_F(IbCollectives, MismatchedGidFamiliesAreWarnedNotHung) {
  auto results = runScenario("ib_try_allreduce", 2, {idToArg(freshId())}, 150, [&](int rank) {
    auto env = baseEnv();
    env["NCCL_NET"] = "IB";
    env["NCCL_IB_TIMEOUT"] = "12";  // ~17 ms per try, so a broken path fails fast
    env["NCCL_IB_RETRY_CNT"] = "2";
    if (rank == 0) env["NCCL_IB_GID_INDEX"] = "0";
    return env;
  });
  expectAllSucceeded(results);
  std::string all = results[0].output + results[1].output;
  EXPECT_NE(all.find("RoCE peers with different versions or address families usually time out"), std::string::npos)
      << all;
  EXPECT_NE(results[0].output.find("NCCL_IB_GID_INDEX=0"), std::string::npos) << results[0].output;
  for (size_t rank = 0; rank < results.size(); ++rank) {
    const std::string& out = results[rank].output;
    size_t at = out.find("allreduce ");
    if (at != std::string::npos) std::printf("rank %zu: %s\n", rank, out.substr(at, out.find('\n', at) - at).c_str());
  }
}

// Two "hosts" (NCCL_HOSTID) of two ranks, two HCAs named in NCCL_IB_HCA, Hier forced: the
// cross-host ring of local rank j runs on the j-th HCA at both ends (ConnRequest::rail),
// so each rank of a host drives its own NIC; before, every cross ring took the first.
TEST_F(IbCollectives, HierCrossRingsOfAHostsRanksUseTheirOwnHca) {
  if (ports_.size() < 2) GTEST_SKIP() << "needs two verbs ports (the soft-RoCE VM makes rxe0 and rxe1)";
  const std::string hcas = "=" + ports_[0].device + "," + ports_[1].device;
  auto results = runScenario("ib_allreduce_n", 4, {idToArg(freshId()), "4", "262147"}, kTimeout, [&](int rank) {
    std::map<std::string, std::string> env{{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "INIT,NET"}};
    env["NCCL_NET"] = "IB";
    env["NCCL_IB_HCA"] = hcas;
    env["NCCL_ALGO"] = "Hier";
    env["NCCL_HOSTID"] = "rxe-host-" + std::to_string(rank / 2);
    return env;
  });
  expectAllSucceeded(results);
  for (size_t rank = 0; rank < results.size(); ++rank) {
    const std::string& out = results[rank].output;
    const std::string want = "/hier-cross : ";
    size_t at = out.find("Channel 00" + want);
    ASSERT_NE(at, std::string::npos) << out;
    std::string line = out.substr(at, out.find('\n', at) - at);
    const std::string device = "via NET/IB/" + std::to_string(rank % 2);
    EXPECT_NE(line.find(device), std::string::npos) << "rank " << rank << ": " << line;
    EXPECT_NE(out.find("IB all-reduce of 4 ranks passed"), std::string::npos) << out;
    EXPECT_NE(out.find("Hier's cross-host ring of local rank j starts at the j-th"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace braid::test
