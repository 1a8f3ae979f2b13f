// CommHealth: the only writer of a communicator's async error, abort flag, last error and
// remote failure. Several threads fail it at once (run under TSan too): exactly one
// failure wins, and the text recorded is the winner's.
#include "core/health/comm_health.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace braid {
namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 100;

// Runs body(i) on kThreads threads released together.
template <typename Body>
void race(Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      body(i);
    });
  }
  for (std::thread& t : threads) t.join();
}

const ncclResult_t kCodes[] = {ncclSystemError, ncclInternalError, ncclRemoteError, ncclInvalidUsage};

TEST(CommHealth, TheFirstOfSeveralRacingFailuresWins) {
  for (int round = 0; round < kRounds; ++round) {
    CommHealth health;
    health.beginInit();
    std::atomic<int> winners{0};
    std::atomic<int> winner{-1};
    race([&](int i) {
      Status failure(kCodes[i % 4], "failure " + std::to_string(i));
      if (health.recordFailure(failure)) {
        winners.fetch_add(1);
        winner.store(i);
      }
      health.abort();
      health.finishInit();  // an init finishing meanwhile must not hide the failure
    });
    ASSERT_EQ(winners.load(), 1);
    int w = winner.load();
    EXPECT_EQ(health.asyncError(), kCodes[w % 4]);
    EXPECT_EQ(health.lastError(), "failure " + std::to_string(w));
    EXPECT_TRUE(health.failed());
    EXPECT_TRUE(health.aborted());
  }
}

TEST(CommHealth, RemoteAndLocalFailuresRacing) {
  for (int round = 0; round < kRounds; ++round) {
    CommHealth health;
    std::atomic<int> remoteWinners{0};
    std::atomic<int> remoteWinner{-1};
    race([&](int i) {
      if (i % 2 == 0) {
        if (health.recordRemoteFailure("rank " + std::to_string(i) + " is gone")) {
          remoteWinners.fetch_add(1);
          remoteWinner.store(i);
        }
      } else {
        (void)health.recordFailure(Status(ncclSystemError, "local " + std::to_string(i)));
        health.recordCallError("call " + std::to_string(i));
      }
    });
    ASSERT_EQ(remoteWinners.load(), 1);
    EXPECT_EQ(health.remoteFailure(), "rank " + std::to_string(remoteWinner.load()) + " is gone");
    EXPECT_TRUE(health.asyncError() == ncclRemoteError || health.asyncError() == ncclSystemError);
    EXPECT_TRUE(health.aborted());  // a lost rank always raises the flag
    // The last error is one of the texts written, never a torn mix.
    std::string last = health.lastError();
    EXPECT_TRUE(last.rfind("rank ", 0) == 0 || last.rfind("local ", 0) == 0 || last.rfind("call ", 0) == 0) << last;
  }
}

TEST(CommHealth, InitStatesNeverHideAFailure) {
  CommHealth health;
  EXPECT_EQ(health.asyncError(), ncclSuccess);
  health.beginInit();
  EXPECT_TRUE(health.initializing());
  EXPECT_TRUE(health.recordFailure(Status(ncclRemoteError, "rank 1 is gone")));
  health.finishInit();
  EXPECT_EQ(health.asyncError(), ncclRemoteError);
  health.beginInit();
  EXPECT_EQ(health.asyncError(), ncclRemoteError);
  EXPECT_FALSE(health.recordFailure(Status(ncclSystemError, "later")));
  EXPECT_FALSE(health.recordFailure(okStatus()));
  EXPECT_EQ(health.lastError(), "rank 1 is gone");
  EXPECT_FALSE(health.aborted());  // recording a failure alone stops nothing
  health.recordCallError("ncclAllReduce: the communicator has failed earlier");
  EXPECT_EQ(health.lastError(), "ncclAllReduce: the communicator has failed earlier");
  EXPECT_EQ(health.asyncError(), ncclRemoteError);
}

TEST(CommHealth, ASecondLostRankChangesNothing) {
  CommHealth health;
  EXPECT_TRUE(health.recordRemoteFailure("rank 2 is gone"));
  EXPECT_FALSE(health.recordRemoteFailure("rank 3 is gone"));
  EXPECT_EQ(health.remoteFailure(), "rank 2 is gone");
  EXPECT_EQ(health.lastError(), "rank 2 is gone");
  EXPECT_EQ(health.asyncError(), ncclRemoteError);
}

}  // namespace
}  // namespace braid
