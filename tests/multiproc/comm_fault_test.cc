// Init when things go wrong: strangers talking to the root, ranks that never come, two
// processes claiming one rank, ranks disagreeing on the size. Each must end in a clear
// error (or, for strangers, in no disturbance at all) within a bounded time.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "bootstrap/unique_id.h"
#include "bootstrap/wire.h"
#include "multiproc_util.h"
#include "util/socket.h"

namespace braid::test {
namespace {

std::map<std::string, std::string> shortBootstrapTimeout(int) { return {{"BRAID_BOOTSTRAP_TIMEOUT", "3"}}; }

// args: id, nranks, [rank override]. Prints the result code and message of init.
BRAID_CHILD_SCENARIO(try_init) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int nranks = std::atoi(ctx.args[1].c_str());
  int rank = ctx.args.size() > 2 ? std::atoi(ctx.args[2 + ctx.index].c_str()) : ctx.index;
  if (ctx.args.size() > 2 && ctx.args[1] == "per-child") nranks = std::atoi(ctx.args[2 + ctx.index].c_str());
  if (ctx.args.size() > 2 && ctx.args[1] == "per-child") rank = ctx.index;
  ncclComm_t comm = nullptr;
  ncclResult_t result = ncclCommInitRank(&comm, nranks, id, rank);
  std::printf("RESULT %d\nMESSAGE %s\n", result, ncclGetLastError(nullptr));
  if (result == ncclSuccess) {
    ncclCommDestroy(comm);
    return 0;
  }
  return comm == nullptr ? 10 : 11;  // a failed blocking init must not hand out a communicator
}

TEST(CommFault, ForeignConnectionsToTheRootDoNotDisturbInit) {
  ncclUniqueId id = freshId();
  UniqueIdContents contents;
  ASSERT_TRUE(decodeUniqueId(id, &contents).ok());
  Deadline deadline = Deadline::afterSeconds(5);
  std::vector<Stream> strangers(4);
  for (Stream& stream : strangers) {
    ASSERT_TRUE(socketConnect(contents.root, deadline, nullptr, "root", *plainSecurity(), &stream).ok());
  }
  // 1: random bytes.
  const char garbage[] = "GET / HTTP/1.1\r\nHost: scanner\r\n\r\n0123456789abcdef0123456789";
  ASSERT_TRUE(socketSendAll(*strangers[0], garbage, sizeof(garbage), deadline, nullptr, "root").ok());
  // 2: Braid's magic with another communicator's secret (a stale job).
  Hello stale;
  stale.kind = static_cast<uint32_t>(ConnKind::RootJoin);
  stale.payloadBytes = 10;
  uint8_t header[Hello::kBytes];
  stale.encode(header);
  ASSERT_TRUE(socketSendAll(*strangers[1], header, sizeof(header), deadline, nullptr, "root").ok());
  // 3: connected and silent for the whole init; 4: connected and gone at once.
  strangers[3].reset();

  auto start = std::chrono::steady_clock::now();
  auto results = runScenario("try_init", 3, {idToArg(id), "3"}, kScenarioSeconds);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  expectAllSucceeded(results);
  // The silent stranger holds its connection for 10 s; the ranks must not wait for it.
  EXPECT_LT(seconds, 8.0);
}

TEST(CommFault, RankThatNeverArrivesIsNamedInTheError) {
  ncclUniqueId id = freshId();
  auto start = std::chrono::steady_clock::now();
  // nranks = 3 but only ranks 0 and 1 exist.
  auto results = runScenario("try_init", 2, {idToArg(id), "3"}, kScenarioSeconds, shortBootstrapTimeout);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& r : results) {
    EXPECT_EQ(r.exitCode, 10) << r.describe();
    EXPECT_NE(r.output.find("RESULT 6"), std::string::npos) << r.output;  // ncclRemoteError
    EXPECT_NE(r.output.find("rank(s) 2 of 3 never joined"), std::string::npos) << r.output;
  }
  EXPECT_LT(seconds, 15.0);
}

TEST(CommFault, TwoProcessesClaimingOneRankAreRejected) {
  ncclUniqueId id = freshId();
  auto results = runScenario("try_init", 3, {idToArg(id), "3", "0", "1", "1"}, kScenarioSeconds, shortBootstrapTimeout);
  int told = 0;
  for (const auto& r : results) {
    EXPECT_NE(r.exitCode, 0) << r.describe();
    if (r.output.find("two processes claim rank 1") != std::string::npos) ++told;
  }
  EXPECT_GE(told, 2) << results[1].output << results[2].output;
}

// args: id, nranks, then per child: rank and start delay in ms. Prints the result, the
// message and how long init took.
BRAID_CHILD_SCENARIO(delayed_init) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int nranks = std::atoi(ctx.args[1].c_str());
  int rank = std::atoi(ctx.args[2 + 2 * ctx.index].c_str());
  std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ctx.args[3 + 2 * ctx.index].c_str())));
  auto start = std::chrono::steady_clock::now();
  ncclComm_t comm = nullptr;
  ncclResult_t result = ncclCommInitRank(&comm, nranks, id, rank);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("RESULT %d\nSECONDS %.2f\nMESSAGE %s\n", result, seconds, ncclGetLastError(nullptr));
  if (result == ncclSuccess) ncclCommDestroy(comm);
  return result == ncclSuccess ? 0 : 10;
}

TEST(CommFault, RankArrivingAfterTheRootGaveUpHearsWhy) {
  // Both claimants of rank 1 arrive first and the root rejects them; rank 0 comes 1.5 s
  // later, when the communicator has already failed. It must hear the same reason at once,
  // not retry a closed port until its 20 s timeout.
  ncclUniqueId id = freshId();
  auto results =
      runScenario("delayed_init", 3, {idToArg(id), "3", "1", "0", "1", "0", "0", "1500"}, kScenarioSeconds, [](int) {
        return std::map<std::string, std::string>{{"BRAID_BOOTSTRAP_TIMEOUT", "20"}};
      });
  for (const auto& r : results) {
    EXPECT_EQ(r.exitCode, 10) << r.describe();
    EXPECT_NE(r.output.find("RESULT 5"), std::string::npos) << r.output;  // ncclInvalidUsage
    EXPECT_NE(r.output.find("two processes claim rank 1"), std::string::npos) << r.output;
  }
  EXPECT_LT(results[2].seconds, 5.0) << results[2].output;
}

TEST(CommFault, RanksDisagreeingOnTheSizeAreRejected) {
  ncclUniqueId id = freshId();
  auto results =
      runScenario("try_init", 2, {idToArg(id), "per-child", "2", "3"}, kScenarioSeconds, shortBootstrapTimeout);
  for (const auto& r : results) {
    EXPECT_EQ(r.exitCode, 10) << r.describe();
    EXPECT_NE(r.output.find("disagree on the communicator size"), std::string::npos) << r.output;
  }
}

TEST(CommFault, RootThatIsGoneIsReportedWithinTheTimeout) {
  // An id whose root listens nowhere: a port that was free a moment ago.
  UniqueIdContents contents;
  ASSERT_TRUE(SocketAddress::parse("127.0.0.1:1", 0, &contents.root).ok());
  contents.secret[0] = 1;
  ncclUniqueId id;
  encodeUniqueId(contents, &id);
  auto results = runScenario("try_init", 1, {idToArg(id), "2"}, kScenarioSeconds, shortBootstrapTimeout);
  EXPECT_EQ(results[0].exitCode, 10) << results[0].describe();
  EXPECT_NE(results[0].output.find("could not reach the bootstrap root"), std::string::npos) << results[0].output;
  EXPECT_LT(results[0].seconds, 15.0);
}

}  // namespace
}  // namespace braid::test
