// ncclSetEncryption (NCCL 2.32) in one process: every bad argument is NCCL's error code with
// a message that says what is wrong (and never shows the key); a key is taken where Braid
// was built with TLS and refused by name where it was not; Braid's BRAID_TLS_* variables
// conflict with a key from the API instead of being silently overridden.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <string>

#include "last_error.h"
#include "nccl.h"

namespace {

const char* kKey = "an-encryption-test-key-of-enough-bytes-0123";

using braid::test::lastError;
bool lastErrorHas(const std::string& part) { return lastError().find(part) != std::string::npos; }

// Every test leaves the process as it found it: no key, no BRAID_TLS_* variable.
class EncryptionApi : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"BRAID_TLS_CERT_FILE", "BRAID_TLS_KEY_FILE", "BRAID_TLS_CA_FILE", "BRAID_TLS_PSK_FILE"}) {
      unsetenv(name);
    }
    ncclEncryptionConfig_t none = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
    EXPECT_EQ(ncclSetEncryption(&none), ncclSuccess) << lastError();
  }
};

TEST_F(EncryptionApi, TheInitializerIsNcclsLayout) {
  ncclEncryptionConfig_t config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  EXPECT_EQ(config.size, sizeof(ncclEncryptionConfig_t));
  EXPECT_EQ(config.magic, 0xcafebeefu);
  EXPECT_EQ(config.mode, NCCL_ENCRYPTION_MODE_NONE);
  EXPECT_EQ(config.psk, nullptr);
  EXPECT_EQ(offsetof(ncclEncryptionConfig_t, mode), 16u);
  EXPECT_EQ(offsetof(ncclEncryptionConfig_t, psk), 24u);
  EXPECT_EQ(sizeof(ncclEncryptionConfig_t), 32u);
  EXPECT_EQ(NCCL_ENCRYPTION_MODE_PSK, 1);
}

TEST_F(EncryptionApi, BadArgumentsAreNamed) {
  ncclEncryptionConfig_t config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  config.magic = 0;
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorHas("not initialized with NCCL_ENCRYPTION_CONFIG_INITIALIZER")) << lastError();

  config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  config.size = 4;
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorHas("config->size is 4")) << lastError();

  config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  config.mode = 7;
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorHas("mode 7 is not")) << lastError();

  config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  config.mode = NCCL_ENCRYPTION_MODE_PSK;
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorHas("needs config->psk")) << lastError();

  std::string shortKey(31, 'x');
  config.psk = shortKey.c_str();
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorHas("has 31 bytes")) << lastError();
  EXPECT_TRUE(lastErrorHas("at least 32")) << lastError();
  EXPECT_FALSE(lastErrorHas(shortKey)) << "the key must never be shown";

  // A caller whose struct ends before psk (an older layout) has no key to give.
  config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  config.mode = NCCL_ENCRYPTION_MODE_PSK;
  config.psk = kKey;
  config.size = offsetof(ncclEncryptionConfig_t, psk);
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorHas("needs config->psk")) << lastError();
}

TEST_F(EncryptionApi, NullMeansNoEncryptionAsInNccl) {
  EXPECT_EQ(ncclSetEncryption(nullptr), ncclSuccess) << lastError();
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess) << lastError();
}

TEST_F(EncryptionApi, AKeyIsTakenOrRefusedByNameWithoutTls) {
  ncclEncryptionConfig_t config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  config.mode = NCCL_ENCRYPTION_MODE_PSK;
  config.psk = kKey;
  ncclUniqueId id;
#if BRAID_HAVE_TLS
  EXPECT_EQ(ncclSetEncryption(&config), ncclSuccess) << lastError();
  // A one-rank communicator over the encrypted bootstrap.
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess) << lastError();
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
#else
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidUsage);
  EXPECT_TRUE(lastErrorHas("built without TLS support")) << lastError();
  // Never plain text instead: every call that would connect fails the same way.
  EXPECT_EQ(ncclGetUniqueId(&id), ncclInvalidUsage);
  EXPECT_TRUE(lastErrorHas("built without TLS support")) << lastError();
#endif
  ncclEncryptionConfig_t none = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  EXPECT_EQ(ncclSetEncryption(&none), ncclSuccess);
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess) << lastError();
}

TEST_F(EncryptionApi, AKeyAndBraidsVariablesConflict) {
  setenv("BRAID_TLS_CERT_FILE", "/nonexistent/cert.pem", 1);
  ncclEncryptionConfig_t config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  config.mode = NCCL_ENCRYPTION_MODE_PSK;
  config.psk = kKey;
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidUsage);
  EXPECT_TRUE(lastErrorHas("choose one way to authenticate")) << lastError();
}

TEST_F(EncryptionApi, IncompleteCertificateVariablesAreAnError) {
  setenv("BRAID_TLS_CERT_FILE", "/nonexistent/cert.pem", 1);
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclInvalidUsage);
  EXPECT_TRUE(lastErrorHas("missing: BRAID_TLS_KEY_FILE BRAID_TLS_CA_FILE")) << lastError();
}

TEST_F(EncryptionApi, AKeyFileThatCannotBeReadIsNamed) {
  setenv("BRAID_TLS_PSK_FILE", "/nonexistent/braid.key", 1);
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorHas("BRAID_TLS_PSK_FILE=/nonexistent/braid.key cannot be read")) << lastError();
}

}  // namespace
