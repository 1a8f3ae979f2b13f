// Encrypted communicators between real processes on one host (loopback, shared memory off
// so that the socket transport carries the collectives): a pre-shared key through
// ncclSetEncryption, certificates and a key file through BRAID_TLS_*, the launcher
// rendezvous; and peers without the right credentials refused on both sides with a named
// error within seconds, never a hang.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "braid/launch.h"
#include "multiproc_util.h"
#include "test_certificates.h"

namespace braid::test {
namespace {

constexpr double kTimeout = 60;
const std::string kKey = "multiproc-tls-test-pre-shared-key-0123456789";

// args: nranks, key ("" when the environment configures encryption, "-" for none).
// Joins through NCCL_COMM_ID (rank 0 serves the root with its own credentials), then
// all-reduces and broadcasts over the sockets and checks every element.
BRAID_CHILD_SCENARIO(tls_collectives) {
  int nranks = std::atoi(ctx.args[0].c_str());
  const std::string& key = ctx.args[1];
  if (!key.empty() && key != "-") {
    ncclEncryptionConfig_t encryption = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
    encryption.mode = NCCL_ENCRYPTION_MODE_PSK;
    encryption.psk = key.c_str();
    CHILD_OK(ncclSetEncryption(&encryption));
  }
  ncclUniqueId id;
  CHILD_OK(ncclGetUniqueId(&id));
  ncclComm_t comm = nullptr;
  ncclResult_t init = ncclCommInitRank(&comm, nranks, id, ctx.index);
  if (init != ncclSuccess) {
    std::printf("INIT FAILED (%s): %s\n", ncclGetErrorString(init), ncclGetLastError(nullptr));
    return 2;
  }
  size_t count = (1 << 20) + 5;
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>((static_cast<size_t>(ctx.index) + i) % 7);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), count, ncclFloat, ncclSum, comm, nullptr));
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int r = 0; r < nranks; ++r) want += static_cast<float>((static_cast<size_t>(r) + i) % 7);
    CHILD_CHECK(data[i] == want);
  }
  std::vector<int> value(4096, ctx.index == 0 ? 42 : 0);
  CHILD_OK(ncclBroadcast(value.data(), value.data(), value.size(), ncclInt32, 0, comm, nullptr));
  for (int v : value) CHILD_CHECK(v == 42);
  std::printf("encrypted collectives passed on rank %d\n", ctx.index);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

// Through braidCommInitFromEnv: the unique id comes from rank 0's TCP rendezvous, which is
// encrypted like the rest (BRAID_TLS_PSK_FILE: no code change).
BRAID_CHILD_SCENARIO(tls_from_launcher_env) {
  ncclComm_t comm = nullptr;
  braidLaunchInfo info{};
  CHILD_OK(braidCommInitFromEnv(&comm, nullptr, &info));
  std::vector<double> data(100000, 1.0 + info.rank);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), data.size(), ncclDouble, ncclSum, comm, nullptr));
  double want = info.nranks * (info.nranks + 1) / 2.0;
  for (double v : data) CHILD_CHECK(v == want);
  std::printf("launcher rendezvous and collectives passed on rank %d\n", info.rank);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

class TlsComm : public ::testing::Test {
 protected:
  // Every rank's environment: NCCL_COMM_ID on loopback, sockets instead of shared memory.
  std::map<std::string, std::string> baseEnv() const {
    return {{"NCCL_COMM_ID", "127.0.0.1:" + std::to_string(port_)},
            {"NCCL_SOCKET_IFNAME", "lo"},
            {"NCCL_SHM_DISABLE", "1"},
            {"NCCL_DEBUG", "INFO"},
            {"NCCL_DEBUG_SUBSYS", "ALL"}};
  }

  std::vector<ChildResult> run(int n, const std::vector<std::string>& keys,
                               const std::vector<std::map<std::string, std::string>>& extraEnv, double timeout) {
    std::vector<ChildSpec> specs(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      ChildSpec& spec = specs[static_cast<size_t>(i)];
      spec.scenario = "tls_collectives";
      spec.args = {std::to_string(n), keys[static_cast<size_t>(i)]};
      spec.env = baseEnv();
      if (static_cast<size_t>(i) < extraEnv.size()) {
        for (const auto& [k, v] : extraEnv[static_cast<size_t>(i)]) spec.env[k] = v;
      }
      spec.unsetEnv = {"BRAID_TLS_CERT_FILE", "BRAID_TLS_KEY_FILE", "BRAID_TLS_CA_FILE", "BRAID_TLS_PSK_FILE"};
      for (const auto& [k, v] : spec.env) {
        spec.unsetEnv.erase(std::remove(spec.unsetEnv.begin(), spec.unsetEnv.end(), k), spec.unsetEnv.end());
      }
    }
    return runChildren(specs, timeout);
  }

  static std::map<std::string, std::string> certEnv(const CertificateFiles& files) {
    return {{"BRAID_TLS_CERT_FILE", files.cert}, {"BRAID_TLS_KEY_FILE", files.key}, {"BRAID_TLS_CA_FILE", files.ca}};
  }

  static bool has(const ChildResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

  static std::string readFile(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  uint16_t port_ = freePort();
  TestCertificates pki_;
};

TEST_F(TlsComm, APreSharedKeyEncryptsBootstrapAndCollectives) {
  auto results = run(2, {kKey, kKey}, {}, kTimeout);
  expectAllSucceeded(results);
  for (const ChildResult& r : results) {
    EXPECT_TRUE(has(r, "connections use TLS 1.3 (pre-shared key)")) << r.output;
    EXPECT_TRUE(has(r, "per connection, TLS 1.3 (pre-shared key)")) << r.output;  // the socket transport's
    EXPECT_TRUE(has(r, "via NET/Socket")) << r.output;
    EXPECT_TRUE(has(r, "encrypted collectives passed")) << r.output;
    EXPECT_FALSE(has(r, kKey.substr(0, 20))) << "the key appears in the log";
  }
}

TEST_F(TlsComm, CertificatesFromTheEnvironmentAuthenticateBothWays) {
  auto results =
      run(2, {"", ""}, {certEnv(pki_.issue("job-ca", "rank0")), certEnv(pki_.issue("job-ca", "rank1"))}, kTimeout);
  expectAllSucceeded(results);
  for (const ChildResult& r : results) {
    EXPECT_TRUE(has(r, "connections use TLS 1.3 (certificates)")) << r.output;
    EXPECT_TRUE(has(r, "via NET/Socket")) << r.output;
  }
}

// Rank 1 cannot get in: both ranks fail with an error that names the TLS refusal, rank 1
// at once, rank 0 when the bootstrap timeout ends its wait.
void expectRefusedOnBothSides(const std::vector<ChildResult>& results, const std::string& rank1Says,
                              const std::string& rank0Says) {
  ASSERT_EQ(results.size(), 2u);
  for (const ChildResult& r : results) {
    EXPECT_FALSE(r.timedOut) << r.output;
    EXPECT_EQ(r.exitCode, 2) << r.describe();  // init failed with an error, not a crash
  }
  EXPECT_NE(results[1].output.find("INIT FAILED (remote process exited or there was a network error)"),
            std::string::npos)
      << results[1].output;
  EXPECT_NE(results[1].output.find(rank1Says), std::string::npos) << results[1].output;
  EXPECT_LT(results[1].seconds, 3.0);
  EXPECT_NE(results[0].output.find("never joined"), std::string::npos) << results[0].output;
  EXPECT_NE(results[0].output.find(rank0Says), std::string::npos) << results[0].output;
  EXPECT_LT(results[0].seconds, 10.0);
}

TEST_F(TlsComm, APeerWithACertificateFromAnotherCaIsRefusedOnBothSides) {
  CertificateFiles good = pki_.issue("job-ca", "rank0");
  // A certificate from another CA. The intruder trusts both CAs (so its own certificate
  // passes its own check, and it accepts rank 0's): only rank 0 can say no, and the
  // intruder must still hear it.
  CertificateFiles intruder = pki_.issue("other-ca", "intruder");
  intruder.ca = pki_.writeFile("both-cas.pem", readFile(good.ca) + readFile(intruder.ca));
  auto env0 = certEnv(good);
  auto env1 = certEnv(intruder);
  env0["BRAID_BOOTSTRAP_TIMEOUT"] = env1["BRAID_BOOTSTRAP_TIMEOUT"] = "3";
  auto results = run(2, {"", ""}, {env0, env1}, 30);
  expectRefusedOnBothSides(results, "TLS handshake failed: the peer refused our credentials",
                           "TLS handshake failed: the peer's certificate was refused");
}

TEST_F(TlsComm, APeerWithAnotherKeyIsRefusedOnBothSides) {
  std::map<std::string, std::string> shortWait = {{"BRAID_BOOTSTRAP_TIMEOUT", "3"}};
  auto results = run(2, {kKey, kKey + "-not-the-same"}, {shortWait, shortWait}, 30);
  expectRefusedOnBothSides(results, "pre-shared key", "the peer's pre-shared key differs from ours");
}

TEST_F(TlsComm, APeerWithoutEncryptionIsRefused) {
  std::map<std::string, std::string> shortWait = {{"BRAID_BOOTSTRAP_TIMEOUT", "3"}};
  auto results = run(2, {kKey, "-"}, {shortWait, shortWait}, 30);
  ASSERT_EQ(results.size(), 2u);
  for (const ChildResult& r : results) EXPECT_EQ(r.exitCode, 2) << r.describe();
  // Rank 0 names it; rank 1 (speaking plain text) only sees its connection closed.
  EXPECT_NE(results[0].output.find("the peer sent plain text, not a TLS handshake"), std::string::npos)
      << results[0].output;
  EXPECT_NE(results[1].output.find("INIT FAILED"), std::string::npos) << results[1].output;
  for (const ChildResult& r : results) EXPECT_LT(r.seconds, 10.0);
}

TEST_F(TlsComm, TheLauncherRendezvousIsEncryptedToo) {
  std::string keyFile = pki_.writeFile("job.key", kKey + "\n");
  ::chmod(keyFile.c_str(), 0600);
  int n = 2;
  std::vector<ChildSpec> specs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ChildSpec& spec = specs[static_cast<size_t>(i)];
    spec.scenario = "tls_from_launcher_env";
    spec.env = {{"RANK", std::to_string(i)},     {"WORLD_SIZE", std::to_string(n)},
                {"MASTER_ADDR", "127.0.0.1"},    {"MASTER_PORT", std::to_string(port_)},
                {"BRAID_TLS_PSK_FILE", keyFile}, {"NCCL_SOCKET_IFNAME", "lo"},
                {"NCCL_SHM_DISABLE", "1"},       {"NCCL_DEBUG", "INFO"},
                {"NCCL_DEBUG_SUBSYS", "ALL"}};
    spec.unsetEnv = {"NCCL_COMM_ID",       "BRAID_RENDEZVOUS", "SLURM_PROCID",        "OMPI_COMM_WORLD_RANK",
                     "PMI_RANK",           "BRAIDRUN_JOB_ID",  "TORCHELASTIC_RUN_ID", "BRAID_TLS_CERT_FILE",
                     "BRAID_TLS_KEY_FILE", "BRAID_TLS_CA_FILE"};
  }
  auto results = runChildren(specs, kTimeout);
  expectAllSucceeded(results);
  for (const ChildResult& r : results) {
    EXPECT_NE(r.output.find("TLS 1.3 (pre-shared key) from BRAID_TLS_PSK_FILE"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find(kKey.substr(0, 20)), std::string::npos) << "the key appears in the log";
  }
}

}  // namespace
}  // namespace braid::test
