// Encryption between two "hosts": network namespaces joined by a veth pair (198.51.100.0/24,
// netns_hosts.h), each with its own NCCL_HOSTID, one rank on each. The unique id travels
// through a shared file, the key through BRAID_TLS_PSK_FILE (no code change); bootstrap,
// watchdog and the socket transport between the hosts are TLS. A host with another key is
// refused on both sides within seconds. Skipped where namespaces cannot be made.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "braid/launch.h"
#include "multiproc_util.h"
#include "netns_hosts.h"
#include "test_certificates.h"

namespace braid::test {
namespace {

const std::string kHostsKey = "netns-tls-test-pre-shared-key-0123456789abc";

BRAID_CHILD_SCENARIO(tls_across_hosts) {
  ncclComm_t comm = nullptr;
  braidLaunchInfo info{};
  ncclResult_t init = braidCommInitFromEnv(&comm, nullptr, &info);
  if (init != ncclSuccess) {
    std::printf("INIT FAILED (%s): %s\n", ncclGetErrorString(init), ncclGetLastError(nullptr));
    return 2;
  }
  int n = info.nranks, r = info.rank;
  size_t count = (1 << 20) + 3;
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>((static_cast<size_t>(r) + i) % 5);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), count, ncclFloat, ncclSum, comm, nullptr));
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int q = 0; q < n; ++q) want += static_cast<float>((static_cast<size_t>(q) + i) % 5);
    CHILD_CHECK(data[i] == want);
  }
  std::vector<int> mine(65536, r), theirs(65536, -1);
  CHILD_OK(ncclGroupStart());
  CHILD_OK(ncclSend(mine.data(), mine.size(), ncclInt32, (r + 1) % n, comm, nullptr));
  CHILD_OK(ncclRecv(theirs.data(), theirs.size(), ncclInt32, (r + n - 1) % n, comm, nullptr));
  CHILD_OK(ncclGroupEnd());
  for (int v : theirs) CHILD_CHECK(v == (r + n - 1) % n);
  std::printf("encrypted collectives across hosts passed on rank %d\n", r);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

class TwoHostsTls : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hosts_.create()) {
      GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2): host-crossing tests skipped";
    }
  }

  std::string keyFile(const std::string& name, const std::string& key) {
    std::string path = pki_.writeFile(name, key);
    ::chmod(path.c_str(), 0600);
    return path;
  }

  // One rank on each host; host B's rank uses `keyB`.
  std::vector<ChildResult> run(const std::string& keyA, const std::string& keyB, const std::string& timeout) {
    std::string rendezvous = "file:///tmp/braid-tls-netns-rendezvous-" + std::to_string(getpid());
    std::vector<ChildSpec> specs(2);
    for (int i = 0; i < 2; ++i) {
      bool onA = i == 0;
      specs[i].scenario = "tls_across_hosts";
      specs[i].wrapper = hosts_.wrapper(onA);
      specs[i].env = {{"RANK", std::to_string(i)},
                      {"WORLD_SIZE", "2"},
                      {"BRAID_RENDEZVOUS", rendezvous},
                      {"BRAID_JOB_TOKEN", "tls-netns-" + std::to_string(getpid())},
                      {"NCCL_HOSTID", onA ? "host-a" : "host-b"},
                      {"BRAID_TLS_PSK_FILE", keyFile(onA ? "a.key" : "b.key", onA ? keyA : keyB)},
                      {"NCCL_DEBUG", "INFO"},
                      {"NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,NET"},
                      {"BRAID_BOOTSTRAP_TIMEOUT", timeout}};
      specs[i].unsetEnv = {"MASTER_ADDR",     "MASTER_PORT",          "NCCL_SOCKET_IFNAME", "NCCL_COMM_ID",
                           "SLURM_PROCID",    "OMPI_COMM_WORLD_RANK", "PMI_RANK",           "TORCHELASTIC_RUN_ID",
                           "BRAIDRUN_JOB_ID", "BRAID_TLS_CERT_FILE",  "BRAID_TLS_KEY_FILE", "BRAID_TLS_CA_FILE"};
    }
    return runChildren(specs, 60);
  }

  NetnsHosts hosts_;
  TestCertificates pki_;  // its temporary directory holds the key files
};

TEST_F(TwoHostsTls, EncryptedCollectivesCrossTheLink) {
  auto results = run(kHostsKey, kHostsKey, "20");
  expectAllSucceeded(results);
  for (const ChildResult& r : results) {
    EXPECT_NE(r.output.find("connections use TLS 1.3 (pre-shared key)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("nNodes 2"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("via NET/Socket"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("encrypted collectives across hosts passed"), std::string::npos) << r.output;
  }
}

TEST_F(TwoHostsTls, AHostWithAnotherKeyIsRefusedOnBothSides) {
  auto results = run(kHostsKey, kHostsKey + "-other", "3");
  ASSERT_EQ(results.size(), 2u);
  for (const ChildResult& r : results) {
    EXPECT_EQ(r.exitCode, 2) << r.describe();
    EXPECT_LT(r.seconds, 10.0) << r.output;
  }
  EXPECT_NE(results[1].output.find("pre-shared key"), std::string::npos) << results[1].output;
  EXPECT_NE(results[0].output.find("the peer's pre-shared key differs from ours"), std::string::npos)
      << results[0].output;
}

}  // namespace
}  // namespace braid::test
