// The nccl*Config collectives (NCCL 2.31) on four host-mode ranks of one process, driven
// from one thread by groups: a forced algorithm and protocol is what runs (the TUNING log
// says so) and gives the same result as the planner's choice; bad choices are errors that
// name them. Also ncclTimeout: what a BRAID_TIMEOUT expiry returns, by the caller's header.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "util/log.h"

namespace {

constexpr int kRanks = 4;

std::string lastError() { return ncclGetLastError(nullptr); }

class ConfigCollectives : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(ncclCommInitAll(comms_, kRanks, nullptr), ncclSuccess) << lastError(); }
  void TearDown() override {
    for (ncclComm_t comm : comms_) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  }

  // An AllReduce of `count` ints on every rank with `config` (may be null).
  std::vector<std::vector<int32_t>> allReduce(size_t count, const ncclCollConfig_t* config) {
    std::vector<std::vector<int32_t>> in(kRanks), out(kRanks);
    for (int r = 0; r < kRanks; ++r) {
      in[r].resize(count);
      out[r].assign(count, -1);
      for (size_t i = 0; i < count; ++i) in[r][i] = static_cast<int32_t>((i * 7 + static_cast<size_t>(r) * 13) % 1000);
    }
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(ncclAllReduceConfig(in[r].data(), out[r].data(), count, ncclInt32, ncclSum, comms_[r], nullptr, config),
                ncclSuccess)
          << lastError();
    }
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
    return out;
  }

  ncclComm_t comms_[kRanks] = {};
};

// Captures the TUNING trace of what runs while alive.
class TuningLog {
 public:
  TuningLog() : path_("/tmp/braid-collconfig-" + std::to_string(getpid()) + ".log") {
    setenv("NCCL_DEBUG", "TRACE", 1);
    setenv("NCCL_DEBUG_SUBSYS", "TUNING", 1);
    setenv("NCCL_DEBUG_FILE", path_.c_str(), 1);
    braid::logReset();
  }
  ~TuningLog() {
    unsetenv("NCCL_DEBUG");
    unsetenv("NCCL_DEBUG_SUBSYS");
    unsetenv("NCCL_DEBUG_FILE");
    braid::logReset();
    std::remove(path_.c_str());
  }
  std::string text() const {
    std::ifstream in(path_);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  }

 private:
  std::string path_;
};

TEST_F(ConfigCollectives, ForcedAlgorithmsAndProtocolsRunAndAgree) {
  constexpr size_t kCount = 40000;  // 160 KB: several channels, several LL and Simple steps
  std::vector<std::vector<int32_t>> reference = allReduce(kCount, nullptr);
  for (size_t i = 0; i < kCount; i += 997) {
    int32_t want = 0;
    for (int r = 0; r < kRanks; ++r) want += static_cast<int32_t>((i * 7 + static_cast<size_t>(r) * 13) % 1000);
    ASSERT_EQ(reference[0][i], want) << i;
  }
  struct Forced {
    const char* selection;
    const char* runs;  // what the TUNING trace names
  };
  const Forced forced[] = {{"ring_simple", "Ring/Simple"},
                           {"ring_ll+^ring_ll128", "Ring/LL"},
                           {"tree_simple", "Tree/Simple"},
                           {"TREE_LL", "Tree/LL"}};
  for (const Forced& f : forced) {
    ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
    config.algSelection = f.selection;
    TuningLog log;
    std::vector<std::vector<int32_t>> out = allReduce(kCount, &config);
    for (int r = 0; r < kRanks; ++r) EXPECT_EQ(out[r], reference[0]) << f.selection << " rank " << r;
    std::string trace = log.text();
    EXPECT_NE(trace.find(std::string("AllReduce of 160000 bytes: ") + f.runs), std::string::npos)
        << f.selection << ":\n"
        << trace;
  }
}

TEST_F(ConfigCollectives, ChannelBoundsOfTheCall) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.algSelection = "ring_simple";
  config.minCTAs = 2;
  config.maxCTAs = 2;
  TuningLog log;
  std::vector<std::vector<int32_t>> out = allReduce(1000, &config);
  EXPECT_NE(log.text().find("Ring/Simple on 2 channel(s)"), std::string::npos) << log.text();
  std::vector<std::vector<int32_t>> reference = allReduce(1000, nullptr);
  EXPECT_EQ(out[3], reference[3]);
}

TEST_F(ConfigCollectives, EveryCollectiveTakesAConfig) {
  constexpr size_t kCount = 96;
  ncclCollConfig_t ring = NCCL_COLLCONFIG_INITIALIZER;
  ring.algSelection = "ring_ll";
  ncclCollConfig_t plain = NCCL_COLLCONFIG_INITIALIZER;
  std::vector<std::vector<float>> send(kRanks, std::vector<float>(kCount * kRanks)),
      recv(kRanks, std::vector<float>(kCount * kRanks));
  for (int r = 0; r < kRanks; ++r) {
    for (size_t i = 0; i < send[r].size(); ++i) send[r][i] = static_cast<float>(r * 1000 + static_cast<int>(i));
  }
  auto run = [&](auto&& call) {
    for (auto& v : recv) v.assign(v.size(), -1.0f);
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < kRanks; ++r) EXPECT_EQ(call(r), ncclSuccess) << lastError();
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  };
  run([&](int r) {
    return ncclBroadcastConfig(send[r].data(), recv[r].data(), kCount, ncclFloat, 2, comms_[r], nullptr, &ring);
  });
  EXPECT_EQ(recv[0][5], 2005.0f);
  run([&](int r) {
    return ncclReduceConfig(send[r].data(), recv[r].data(), kCount, ncclFloat, ncclMax, 1, comms_[r], nullptr, &ring);
  });
  EXPECT_EQ(recv[1][5], 3005.0f);
  run([&](int r) {
    return ncclAllGatherConfig(send[r].data(), recv[r].data(), kCount, ncclFloat, comms_[r], nullptr, &ring);
  });
  EXPECT_EQ(recv[0][kCount * 3 + 1], 3001.0f);
  run([&](int r) {
    return ncclReduceScatterConfig(send[r].data(), recv[r].data(), kCount, ncclFloat, ncclSum, comms_[r], nullptr,
                                   &ring);
  });
  EXPECT_EQ(recv[2][0], static_cast<float>(6000 + 4 * 2 * kCount));
  run([&](int r) {
    return ncclAlltoAllConfig(send[r].data(), recv[r].data(), kCount, ncclFloat, comms_[r], nullptr, &plain);
  });
  EXPECT_EQ(recv[1][kCount * 3], static_cast<float>(3000 + kCount));
  run([&](int r) {
    return ncclGatherConfig(send[r].data(), recv[r].data(), kCount, ncclFloat, 0, comms_[r], nullptr, &plain);
  });
  EXPECT_EQ(recv[0][kCount * 2], 2000.0f);
  run([&](int r) {
    return ncclScatterConfig(send[r].data(), recv[r].data(), kCount, ncclFloat, 3, comms_[r], nullptr, nullptr);
  });
  EXPECT_EQ(recv[1][0], static_cast<float>(3000 + kCount));
}

TEST_F(ConfigCollectives, BadChoicesAreErrorsThatNameThem) {
  float a[8] = {}, b[8 * kRanks] = {};
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.algSelection = "tree";
  EXPECT_EQ(ncclAllGatherConfig(a, b, 8, ncclFloat, comms_[0], nullptr, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("ncclAllGatherConfig: config->algSelection \"tree\""), std::string::npos) << lastError();
  config.algSelection = "pat";
  EXPECT_EQ(ncclReduceScatterConfig(b, a, 8, ncclFloat, ncclSum, comms_[1], nullptr, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("PAT_SIMPLE"), std::string::npos) << lastError();
  config.algSelection = "ring";
  EXPECT_EQ(ncclAlltoAllConfig(b, b, 8, ncclFloat, comms_[0], nullptr, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("point-to-point"), std::string::npos) << lastError();
  config.algSelection = "rign";
  EXPECT_EQ(ncclAllReduceConfig(a, a, 8, ncclFloat, ncclSum, comms_[0], nullptr, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("\"rign\" names no algorithm"), std::string::npos) << lastError();
  config = NCCL_COLLCONFIG_INITIALIZER;
  config.magic = 0;
  EXPECT_EQ(ncclGatherConfig(a, b, 8, ncclFloat, 0, comms_[0], nullptr, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("NCCL_COLLCONFIG_INITIALIZER"), std::string::npos) << lastError();
  config = NCCL_COLLCONFIG_INITIALIZER;
  config.launchCompletionEvent = reinterpret_cast<cudaEvent_t>(0x10);
  EXPECT_EQ(ncclBroadcastConfig(a, a, 8, ncclFloat, 0, comms_[0], nullptr, &config), ncclInvalidUsage);
  EXPECT_NE(lastError().find("host-mode communicator launches no kernel"), std::string::npos) << lastError();
  config = NCCL_COLLCONFIG_INITIALIZER;
  EXPECT_EQ(ncclScatterConfig(b, a, 8, ncclFloat, 0, nullptr, nullptr, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("ncclScatterConfig: comm is NULL"), std::string::npos) << lastError();
  EXPECT_EQ(ncclReduceConfig(a, a, 8, ncclFloat, ncclSum, 9, comms_[0], nullptr, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("root=9"), std::string::npos) << lastError();

  // In a group, a refused call fails the group and nothing runs.
  config.algSelection = "collnet";
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(ncclAllReduceConfig(a, a, 8, ncclFloat, ncclSum, comms_[r], nullptr, &config), ncclInvalidArgument);
  }
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidArgument);

  // With forceAlgSelection=0 the same call runs with Braid's choice.
  config.forceAlgSelection = 0;
  std::vector<std::vector<int32_t>> out = allReduce(64, &config);
  EXPECT_EQ(out[0], allReduce(64, nullptr)[0]);
}

// BRAID_TIMEOUT expiries: ncclTimeout when the communicator's config comes from a 2.30 or
// later header (Braid's included), ncclRemoteError for an older one.
ncclResult_t timedOutAllReduce(unsigned configVersion) {
  setenv("BRAID_TIMEOUT", "1", 1);
  setenv("BRAID_BOOTSTRAP_TIMEOUT", "10", 1);  // a regression fails in seconds, not minutes
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comms[2] = {};
  auto init = [&](int rank) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.version = configVersion;
    EXPECT_EQ(ncclCommInitRankConfig(&comms[rank], 2, id, rank, &config), ncclSuccess) << lastError();
  };
  std::thread other(init, 1);
  init(0);
  other.join();
  unsetenv("BRAID_TIMEOUT");
  unsetenv("BRAID_BOOTSTRAP_TIMEOUT");
  float x[2][4] = {};  // each rank its own buffer
  // Both ranks run one all-reduce (which connects them), then rank 1 does not join the
  // next: rank 0 waits one second, then gives up.
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ncclAllReduce(x[r], x[r], 4, ncclFloat, ncclSum, comms[r], nullptr), ncclSuccess);
  }
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  ncclResult_t result = ncclAllReduce(x[0], x[0], 4, ncclFloat, ncclSum, comms[0], nullptr);
  std::string message = ncclGetLastError(comms[0]);
  EXPECT_NE(message.find("did not complete within BRAID_TIMEOUT=1 s"), std::string::npos) << message;
  ncclResult_t async = ncclSuccess;
  EXPECT_EQ(ncclCommGetAsyncError(comms[0], &async), ncclSuccess);
  EXPECT_EQ(async, result);
  for (ncclComm_t comm : comms) EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
  return result;
}

TEST(TimeoutResult, NewHeadersGetNcclTimeout) {
  EXPECT_EQ(timedOutAllReduce(BRAID_NCCL_LAYOUT_CODE), ncclTimeout);
  EXPECT_STREQ(ncclGetErrorString(ncclTimeout), "operation timed out (run with NCCL_DEBUG=WARN for details)");
}

TEST(TimeoutResult, OlderHeadersGetRemoteError) {
  EXPECT_EQ(timedOutAllReduce(NCCL_VERSION(2, 28, 9)), ncclRemoteError);
}

}  // namespace
