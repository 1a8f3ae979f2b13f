// One-sided operations as RDMA writes with immediate: two ranks that say they are on
// different hosts (NCCL_HOSTID), so that every put and signal between them goes through the
// network backend, forced to IB (NCCL_NET=IB). Each put is one write straight into the
// peer's window and each signal its immediate value; the tests check the data, the order
// (several puts then one zero-length signal), the errors (a put past the window's end, a
// window its owner could not register for remote writes, a peer that vanished) and that
// nothing hangs. They need an ACTIVE verbs port and skip, saying why, without one (label
// rdma: in the soft-RoCE VM, ctest -L rxe, they run for real).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "multiproc_util.h"
#include "transport/net/ib/ib_backend.h"

namespace braid::test {
namespace {

constexpr double kRmaTimeout = 240;  // soft-RoCE under emulation

int pattern(int round, int rank, size_t i) { return round * 100000 + rank * 1000 + static_cast<int>(i % 997); }

// args: id. Over a window of plain memory on each rank:
//  1. puts of 1, 4099 and 1 Mi ints at different offsets, each waited for and checked;
//  2. five puts over the same 4 MiB, each with other values, then one ncclSignal (a
//     zero-length write): once the six signals are in, the window holds the last put's
//     values everywhere (writes land in order, the signal after them);
//  3. a put of 0 elements (a zero-length write that signals);
//  4. a put past the end of the peer's part: ncclInvalidArgument, and the communicator goes on.
BRAID_CHILD_SCENARIO(ib_rma_writes) {
  ncclUniqueId id = argToId(ctx.args[0]);
  const int r = ctx.index, peer = 1 - r;
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, id, r));
  const size_t ints = size_t{1} << 20;
  std::vector<int> window(ints, -1), source(ints);
  ncclWindow_t win = nullptr;
  CHILD_OK(ncclCommWindowRegister(comm, window.data(), ints * sizeof(int), &win, NCCL_WIN_DEFAULT));
  ncclWaitSignalDesc_t one = {1, peer, 0, 0};
  auto handshake = [&]() {  // both ranks are done reading before the next step writes
    CHILD_OK(ncclSignal(peer, 0, 0, 0, comm, nullptr));
    CHILD_OK(ncclWaitSignal(1, &one, comm, nullptr));
    return 0;
  };

  int round = 0;
  for (size_t count : {size_t{1}, size_t{4099}, ints - 64}) {
    ++round;
    size_t offsetInts = static_cast<size_t>(round) * 16;
    for (size_t i = 0; i < count; ++i) source[i] = pattern(round, r, i);
    CHILD_OK(
        ncclPutSignal(source.data(), count, ncclInt32, peer, win, offsetInts * sizeof(int), 0, 0, 0, comm, nullptr));
    CHILD_OK(ncclWaitSignal(1, &one, comm, nullptr));
    for (size_t i = 0; i < count; ++i) CHILD_CHECK(window[offsetInts + i] == pattern(round, peer, i));
    CHILD_CHECK(window[offsetInts + count] == -1);  // nothing past the put's end
    CHILD_CHECK(handshake() == 0);
  }

  const int puts = 5;
  std::vector<std::vector<int>> sources(puts, std::vector<int>(ints));
  for (int k = 0; k < puts; ++k) {
    for (size_t i = 0; i < ints; ++i) sources[static_cast<size_t>(k)][i] = pattern(10 + k, r, i);
    CHILD_OK(
        ncclPutSignal(sources[static_cast<size_t>(k)].data(), ints, ncclInt32, peer, win, 0, 0, 0, 0, comm, nullptr));
  }
  CHILD_OK(ncclSignal(peer, 0, 0, 0, comm, nullptr));
  ncclWaitSignalDesc_t all = {puts + 1, peer, 0, 0};
  CHILD_OK(ncclWaitSignal(1, &all, comm, nullptr));
  size_t wrong = 0;
  for (size_t i = 0; i < ints; ++i) wrong += window[i] != pattern(10 + puts - 1, peer, i);
  if (wrong) std::printf("%zu ints differ from the last put's\n", wrong);
  CHILD_CHECK(wrong == 0);
  CHILD_CHECK(handshake() == 0);

  CHILD_OK(ncclPutSignal(source.data(), 0, ncclInt32, peer, win, 0, 0, 0, 0, comm, nullptr));
  CHILD_OK(ncclWaitSignal(1, &one, comm, nullptr));

  CHILD_EXPECT_RESULT(
      ncclPutSignal(source.data(), 2, ncclInt32, peer, win, (ints - 1) * sizeof(int), 0, 0, 0, comm, nullptr),
      ncclInvalidArgument);
  std::string why = ncclGetLastError(comm);
  std::printf("past the end: %s\n", why.c_str());
  CHILD_CHECK(why.find("leave rank " + std::to_string(peer) + "'s part of the window") != std::string::npos);
  CHILD_CHECK(handshake() == 0);  // still usable

  CHILD_OK(ncclCommWindowDeregister(comm, win));
  CHILD_OK(ncclCommDestroy(comm));
  std::printf("one-sided RDMA writes passed on rank %d\n", r);
  return 0;
}

// args: id. Rank 1's window is read-only memory, which the device refuses to register for
// remote writes; rank 0's put into it fails at once with an error that says so (the
// communicator fails, as after any failed operation), and both ranks end without a hang.
BRAID_CHILD_SCENARIO(ib_rma_unwritable) {
  ncclUniqueId id = argToId(ctx.args[0]);
  const int r = ctx.index;
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, id, r));
  const size_t bytes = 1 << 16;
  void* memory = mmap(nullptr, bytes, r == 1 ? PROT_READ : PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHILD_CHECK(memory != MAP_FAILED);
  ncclWindow_t win = nullptr;
  CHILD_OK(ncclCommWindowRegister(comm, memory, bytes, &win, NCCL_WIN_DEFAULT));
  if (r == 0) {
    std::vector<int> source(16, 7);
    CHILD_EXPECT_RESULT(ncclPutSignal(source.data(), source.size(), ncclInt32, 1, win, 0, 0, 0, 0, comm, nullptr),
                        ncclSystemError);
    std::string why = ncclGetLastError(comm);
    std::printf("unwritable: %s\n", why.c_str());
    CHILD_CHECK(why.find("part of window #1 is not registered for remote writes") != std::string::npos);
  } else {
    // Rank 0's failure reaches this rank through the watchdog: the wait ends with an error.
    ncclWaitSignalDesc_t fromZero = {1, 0, 0, 0};
    ncclResult_t waited = ncclWaitSignal(1, &fromZero, comm, nullptr);
    std::printf("rank 1's wait: %d (%s)\n", static_cast<int>(waited), ncclGetLastError(comm));
    CHILD_CHECK(waited != ncclSuccess);
  }
  (void)ncclCommAbort(comm);
  munmap(memory, bytes);
  return 0;
}

// args: id. Rank 1 ends abruptly (no destroy) once its connection to rank 0 is up; rank 0
// keeps putting into it: a put must fail with a named error (the write's completion error
// when the QP gives up first, else the watchdog's word that rank 1 is gone), never hang.
BRAID_CHILD_SCENARIO(ib_rma_peer_gone) {
  ncclUniqueId id = argToId(ctx.args[0]);
  const int r = ctx.index;
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, id, r));
  std::vector<int> window(1 << 14, 0), source(1 << 14, 5);
  ncclWindow_t win = nullptr;
  CHILD_OK(ncclCommWindowRegister(comm, window.data(), window.size() * sizeof(int), &win, NCCL_WIN_DEFAULT));
  if (r == 1) {
    CHILD_OK(ncclSignal(0, 0, 0, 0, comm, nullptr));
    ncclWaitSignalDesc_t fromZero = {1, 0, 0, 0};
    CHILD_OK(ncclWaitSignal(1, &fromZero, comm, nullptr));
    std::fflush(stdout);
    _exit(0);
  }
  ncclWaitSignalDesc_t fromOne = {1, 1, 0, 0};
  CHILD_OK(ncclWaitSignal(1, &fromOne, comm, nullptr));
  ncclResult_t result = ncclSuccess;
  int puts = 0;
  for (; puts < 100000 && result == ncclSuccess; ++puts) {
    result = ncclPutSignal(source.data(), source.size(), ncclInt32, 1, win, 0, 0, 0, 0, comm, nullptr);
  }
  std::printf("after %d put(s): %d: %s\n", puts, static_cast<int>(result), ncclGetLastError(comm));
  CHILD_CHECK(result != ncclSuccess);
  CHILD_CHECK(std::string(ncclGetLastError(comm)).find("rank 1") != std::string::npos ||
              std::string(ncclGetLastError(comm)).find("NET/IB") != std::string::npos);
  (void)ncclCommAbort(comm);
  return 0;
}

std::map<std::string, std::string> rmaEnv(int rank) {
  return {{"NCCL_NET", "IB"},
          {"NCCL_SHM_DISABLE", "1"},
          {"NCCL_HOSTID", "braid-ib-rma-host-" + std::to_string(rank)},
          {"NCCL_DEBUG", "INFO"},
          {"NCCL_DEBUG_SUBSYS", "INIT,NET,REG"},
          {"BRAID_TIMEOUT", "120"}};  // a guard: no wait here should need it
}

class IbOneSided : public ::testing::Test {
 protected:
  void SetUp() override {
    const IbvApi* api = nullptr;
    std::vector<IbPort> ports;
    std::string whyNot;
    ASSERT_TRUE(probeIbPorts("/sys", "", &api, &ports, &whyNot).ok());
    if (ports.empty()) {
      GTEST_SKIP() << "no usable verbs device here (" << whyNot
                   << "); run inside the soft-RoCE VM: ctest -L rxe, or scripts/rxe-vm/run-in-rxe-vm.sh ctest "
                      "--test-dir build -L rdma";
    }
  }
};

TEST_F(IbOneSided, PutsAndSignalsAreRdmaWritesWithImmediate) {
  auto results = runScenario("ib_rma_writes", 2, {idToArg(freshId())}, kRmaTimeout, rmaEnv);
  expectAllSucceeded(results);
  for (const ChildResult& result : results) {
    EXPECT_NE(result.output.find("one-sided network path ready (IB, RDMA writes with immediate)"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("as RDMA writes with immediate"), std::string::npos) << result.output;
    // One WARN only: the refused put past the end.
    size_t first = result.output.find("NCCL WARN");
    ASSERT_NE(first, std::string::npos) << result.output;
    EXPECT_NE(result.output.find("leave rank", first), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("NCCL WARN", first + 1), std::string::npos) << result.output;
  }
}

TEST_F(IbOneSided, AWindowNotRegisteredForRemoteWritesIsANamedError) {
  auto results = runScenario("ib_rma_unwritable", 2, {idToArg(freshId())}, kRmaTimeout, rmaEnv);
  expectAllSucceeded(results);
  EXPECT_NE(results[1].output.find("this rank's part is not registered for remote writes"), std::string::npos)
      << results[1].output;
  // What each rank saw, for the log.
  for (const char* line : {"unwritable: ", "rank 1's wait: "}) {
    for (const ChildResult& result : results) {
      size_t at = result.output.find(line);
      if (at != std::string::npos)
        std::printf("%s\n", result.output.substr(at, result.output.find('\n', at) - at).c_str());
    }
  }
}

TEST_F(IbOneSided, PutsToAPeerThatVanishedFailWithANamedError) {
  auto results = runScenario("ib_rma_peer_gone", 2, {idToArg(freshId())}, kRmaTimeout, [](int rank) {
    auto env = rmaEnv(rank);
    env["NCCL_IB_TIMEOUT"] = "12";  // ~17 ms per try: the QP gives up within a second
    env["NCCL_IB_RETRY_CNT"] = "2";
    return env;
  });
  expectAllSucceeded(results);
  size_t at = results[0].output.find("after ");
  ASSERT_NE(at, std::string::npos) << results[0].output;
  std::printf("%s\n", results[0].output.substr(at, results[0].output.find('\n', at) - at).c_str());
}

}  // namespace
}  // namespace braid::test
