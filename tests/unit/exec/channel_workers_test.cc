// ChannelWorkers: channel 0 runs on the caller, the others on workers that share the caller's
// work. Whatever a channel throws becomes that channel's failure, and runChannels returns
// only when every channel is done (the workers hold a reference to the caller's work).
#include "exec/host/channel_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace braid {
namespace {

TEST(ChannelWorkers, ReturnsTheFirstFailingChannel) {
  ChannelWorkers executor(0);
  Status result =
      executor.runChannels(3, [](int c) { return c == 2 ? Status(ncclRemoteError, "channel 2 failed") : okStatus(); });
  EXPECT_EQ(result.code(), ncclRemoteError);
  EXPECT_EQ(result.message(), "channel 2 failed");
}

TEST(ChannelWorkers, ChannelZeroThrowingWaitsForTheOtherChannels) {
  ChannelWorkers executor(0);
  std::atomic<int> finished{0};
  Status result = executor.runChannels(4, [&](int c) -> Status {
    if (c == 0) throw std::runtime_error("channel 0 broke");
    // Still running after channel 0 has thrown: the executor must wait for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished.fetch_add(1);
    return okStatus();
  });
  EXPECT_EQ(result.code(), ncclInternalError);
  EXPECT_NE(result.message().find("channel 0 broke"), std::string::npos) << result.message();
  EXPECT_EQ(finished.load(), 3);
  // The workers are free for the next operation.
  EXPECT_TRUE(executor.runChannels(4, [](int) { return okStatus(); }).ok());
}

TEST(ChannelWorkers, AWorkerThrowingAnythingFailsItsChannel) {
  ChannelWorkers executor(0);
  Status result = executor.runChannels(2, [](int c) -> Status {
    if (c == 1) throw 42;  // not a std::exception
    return okStatus();
  });
  EXPECT_EQ(result.code(), ncclInternalError);
  result = executor.runChannels(2, [](int c) -> Status {
    if (c == 1) throw std::bad_alloc();
    return okStatus();
  });
  EXPECT_EQ(result.code(), ncclSystemError);
  EXPECT_NE(result.message().find("out of host memory"), std::string::npos) << result.message();
}

}  // namespace
}  // namespace braid
