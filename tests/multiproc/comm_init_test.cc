// Communicators formed by real processes through a unique id: sizes 1..8, non-blocking
// init, grouped init of several ranks per process, ncclCommInitAll, several ids, and
// NCCL_COMM_ID.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "multiproc_util.h"

namespace braid::test {
namespace {

// args: id, nranks. Each child is rank `index`.
BRAID_CHILD_SCENARIO(init_rank) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int nranks = std::atoi(ctx.args[1].c_str());
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, nranks, id, ctx.index));
  int count = -1, rank = -1, device = 99;
  CHILD_OK(ncclCommCount(comm, &count));
  CHILD_OK(ncclCommUserRank(comm, &rank));
  CHILD_OK(ncclCommCuDevice(comm, &device));
  CHILD_CHECK(count == nranks && rank == ctx.index && device == -1);
  ncclResult_t async = ncclInternalError;
  CHILD_OK(ncclCommGetAsyncError(comm, &async));
  CHILD_CHECK(async == ncclSuccess);
  std::printf("hello from rank %d/%d\n", rank, count);
  CHILD_OK(ncclCommFinalize(comm));
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

class InitSizes : public ::testing::TestWithParam<int> {};

TEST_P(InitSizes, ProcessesFormACommunicator) {
  int n = GetParam();
  auto results = runScenario("init_rank", n, {idToArg(freshId()), std::to_string(n)}, kScenarioSeconds);
  expectAllSucceeded(results);
  for (int i = 0; i < n; ++i) {
    EXPECT_NE(results[i].output.find("hello from rank " + std::to_string(i) + "/" + std::to_string(n)),
              std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, InitSizes, ::testing::Values(1, 2, 3, 8));

BRAID_CHILD_SCENARIO(init_nonblocking) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int nranks = std::atoi(ctx.args[1].c_str());
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t started = ncclCommInitRankConfig(&comm, nranks, id, ctx.index, &config);
  CHILD_CHECK(started == ncclSuccess || started == ncclInProgress);
  CHILD_CHECK(comm != nullptr);
  ncclResult_t state = ncclInProgress;
  int polls = 0;
  while (state == ncclInProgress) {
    CHILD_OK(ncclCommGetAsyncError(comm, &state));
    ++polls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHILD_CHECK(state == ncclSuccess);
  int rank = -1;
  CHILD_OK(ncclCommUserRank(comm, &rank));
  CHILD_CHECK(rank == ctx.index);
  std::printf("nonblocking init done after %d polls (returned %d)\n", polls, started);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

TEST(CommInit, NonBlockingInitReportsProgressThroughAsyncError) {
  auto results = runScenario("init_nonblocking", 3, {idToArg(freshId()), "3"}, kScenarioSeconds);
  expectAllSucceeded(results);
  // The first rank to arrive must have seen ncclInProgress at least once.
  bool sawProgress = false;
  for (const auto& r : results) sawProgress |= r.output.find("returned 7") != std::string::npos;
  EXPECT_TRUE(sawProgress);
}

// Two ranks per process, initialised from one thread inside a group (nccl-tests -g 2).
// args: id, nranks, ranks per process.
BRAID_CHILD_SCENARIO(init_group) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int nranks = std::atoi(ctx.args[1].c_str());
  int perProcess = std::atoi(ctx.args[2].c_str());
  std::vector<ncclComm_t> comms(perProcess, nullptr);
  CHILD_OK(ncclGroupStart());
  for (int i = 0; i < perProcess; ++i) CHILD_OK(ncclCommInitRank(&comms[i], nranks, id, ctx.index * perProcess + i));
  CHILD_OK(ncclGroupEnd());
  for (int i = 0; i < perProcess; ++i) {
    int rank = -1;
    CHILD_OK(ncclCommUserRank(comms[i], &rank));
    CHILD_CHECK(rank == ctx.index * perProcess + i);
    CHILD_OK(ncclCommDestroy(comms[i]));
  }
  return 0;
}

TEST(CommInit, GroupedInitOfSeveralRanksPerProcess) {
  expectAllSucceeded(runScenario("init_group", 2, {idToArg(freshId()), "4", "2"}, kScenarioSeconds));
}

BRAID_CHILD_SCENARIO(init_all) {
  int ndev = std::atoi(ctx.args[0].c_str());
  std::vector<ncclComm_t> comms(ndev, nullptr);
  std::vector<int> devlist;
  for (int i = 0; i < ndev; ++i) devlist.push_back(i);
  CHILD_OK(ncclCommInitAll(comms.data(), ndev, devlist.data()));
  for (int i = 0; i < ndev; ++i) {
    int rank = -1, count = -1;
    CHILD_OK(ncclCommUserRank(comms[i], &rank));
    CHILD_OK(ncclCommCount(comms[i], &count));
    CHILD_CHECK(rank == i && count == ndev);
  }
  for (ncclComm_t c : comms) CHILD_OK(ncclCommDestroy(c));
  // A repeated device is rejected before anything starts.
  devlist[1] = devlist[0];
  CHILD_EXPECT_RESULT(ncclCommInitAll(comms.data(), ndev, devlist.data()), ncclInvalidArgument);
  CHILD_CHECK(std::string(ncclGetLastError(nullptr)).find("appears twice") != std::string::npos);
  return 0;
}

TEST(CommInit, InitAllCreatesACliqueInOneProcess) {
  expectAllSucceeded(runScenario("init_all", 1, {"4"}, kScenarioSeconds));
}

// args: nIds, then the ids; nranks = number of children.
BRAID_CHILD_SCENARIO(init_scalable) {
  int nIds = std::atoi(ctx.args[0].c_str());
  int nranks = std::atoi(ctx.args[1].c_str());
  std::vector<ncclUniqueId> ids;
  for (int i = 0; i < nIds; ++i) ids.push_back(argToId(ctx.args[2 + i]));
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRankScalable(&comm, nranks, ctx.index, nIds, ids.data(), nullptr));
  int count = -1;
  CHILD_OK(ncclCommCount(comm, &count));
  CHILD_CHECK(count == nranks);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

TEST(CommInit, SeveralUniqueIdsShareTheWork) {
  std::vector<std::string> args = {"3", "7"};
  for (int i = 0; i < 3; ++i) args.push_back(idToArg(freshId()));
  expectAllSucceeded(runScenario("init_scalable", 7, args, kScenarioSeconds));
}

// With NCCL_COMM_ID every rank makes the same id itself; rank 0 serves the root.
BRAID_CHILD_SCENARIO(init_comm_id) {
  int nranks = std::atoi(ctx.args[0].c_str());
  ncclUniqueId id{};
  CHILD_OK(ncclGetUniqueId(&id));
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, nranks, id, ctx.index));
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

TEST(CommInit, FixedRootFromNcclCommId) {
  std::string commId = "127.0.0.1:" + std::to_string(freePort());
  auto results = runScenario("init_comm_id", 3, {"3"}, kScenarioSeconds, [&](int) {
    return std::map<std::string, std::string>{{"NCCL_COMM_ID", commId}};
  });
  expectAllSucceeded(results);
}

}  // namespace
}  // namespace braid::test
