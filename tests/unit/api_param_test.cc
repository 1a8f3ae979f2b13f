// NCCL 2.30's parameter API over Braid's registry: every variable Braid reads is a key, its
// value is what the library uses now (a changed environment shows at once), types are
// NCCL's strict ones, and every bad argument is a named error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "braid/params.h"
#include "nccl.h"
#include "util/log.h"

namespace {

std::string lastError() { return ncclGetLastError(nullptr); }

ncclParamHandle_t bind(const char* key) {
  ncclParamHandle_t h = nullptr;
  EXPECT_EQ(ncclParamBind(&h, key), ncclSuccess) << key << ": " << lastError();
  return h;
}

// Sets a variable for the test's length.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(ParamApi, BindLooksUpAndAlwaysGivesTheSameHandle) {
  ncclParamHandle_t first = bind("NCCL_IB_ROCE_VERSION_NUM");
  EXPECT_NE(first, nullptr);
  EXPECT_EQ(bind("NCCL_IB_ROCE_VERSION_NUM"), first);
  ncclParamHandle_t untouched = first;
  EXPECT_EQ(ncclParamBind(&untouched, "NCCL_NO_SUCH_THING"), ncclInvalidArgument);
  EXPECT_EQ(untouched, first);
  EXPECT_NE(lastError().find("\"NCCL_NO_SUCH_THING\" is not a parameter"), std::string::npos) << lastError();
  EXPECT_EQ(ncclParamBind(nullptr, "NCCL_ALGO"), ncclInvalidArgument);
  EXPECT_NE(lastError().find("ncclParamBind: out is NULL"), std::string::npos) << lastError();
  EXPECT_EQ(ncclParamBind(&untouched, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("ncclParamBind: key is NULL"), std::string::npos) << lastError();
}

// NVIDIA's documented example, and a value changed in the environment read at once.
TEST(ParamApi, TypedReadsAreLive) {
  ncclParamHandle_t roce = bind("NCCL_IB_ROCE_VERSION_NUM");
  int32_t version = 0;
  EXPECT_EQ(ncclParamGetI32(roce, &version), ncclSuccess) << lastError();
  EXPECT_EQ(version, 2);
  {
    ScopedEnv env("NCCL_IB_ROCE_VERSION_NUM", "1");
    EXPECT_EQ(ncclParamGetI32(roce, &version), ncclSuccess);
    EXPECT_EQ(version, 1);
  }
  int64_t buffsize = 0;
  EXPECT_EQ(ncclParamGetI64(bind("NCCL_BUFFSIZE"), &buffsize), ncclSuccess) << lastError();
  EXPECT_EQ(buffsize, 4 << 20);
  ScopedEnv env("NCCL_BUFFSIZE", "8M");
  EXPECT_EQ(ncclParamGetI64(bind("NCCL_BUFFSIZE"), &buffsize), ncclSuccess);
  EXPECT_EQ(buffsize, 8 << 20);
}

TEST(ParamApi, WrongTypesAreNamed) {
  int32_t i32 = 0;
  EXPECT_EQ(ncclParamGetI32(bind("NCCL_BUFFSIZE"), &i32), ncclInvalidArgument);
  EXPECT_NE(lastError().find("NCCL_BUFFSIZE is a int64_t parameter, not int32_t; read it with ncclParamGetI64"),
            std::string::npos)
      << lastError();
  const char* text = nullptr;
  EXPECT_EQ(ncclParamGetStr(bind("BRAID_TIMEOUT"), &text), ncclInvalidArgument);
  EXPECT_NE(lastError().find("read it with ncclParamGetI32"), std::string::npos) << lastError();
  int64_t i64 = 0;
  EXPECT_EQ(ncclParamGetI64(bind("NCCL_ALGO"), &i64), ncclInvalidArgument);
  EXPECT_NE(lastError().find("read it with ncclParamGetStr"), std::string::npos) << lastError();
  ncclParamHandle_t h = bind("NCCL_IB_SL");
  int8_t i8 = 0;
  int16_t i16 = 0;
  uint8_t u8 = 0;
  uint16_t u16 = 0;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  EXPECT_EQ(ncclParamGetI8(h, &i8), ncclInvalidArgument);
  EXPECT_NE(lastError().find("not int8_t"), std::string::npos) << lastError();
  EXPECT_EQ(ncclParamGetI16(h, &i16), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetU8(h, &u8), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetU16(h, &u16), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetU32(h, &u32), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetU64(h, &u64), ncclInvalidArgument);
  EXPECT_NE(lastError().find("NCCL_IB_SL is a int32_t parameter, not uint64_t"), std::string::npos) << lastError();
}

TEST(ParamApi, BadHandlesAndNullOutputs) {
  int32_t value = 0;
  EXPECT_EQ(ncclParamGetI32(nullptr, &value), ncclInvalidArgument);
  EXPECT_NE(lastError().find("handle is NULL"), std::string::npos) << lastError();
  int garbage = 0;
  auto bogus = reinterpret_cast<ncclParamHandle_t>(&garbage);
  EXPECT_EQ(ncclParamGetI32(bogus, &value), ncclInvalidArgument);
  EXPECT_NE(lastError().find("was not made by ncclParamBind"), std::string::npos) << lastError();
  EXPECT_EQ(ncclParamGetU8(bogus, reinterpret_cast<uint8_t*>(&value)), ncclInvalidArgument);
  ncclParamHandle_t h = bind("NCCL_IB_SL");
  EXPECT_EQ(ncclParamGetI32(h, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("out is NULL"), std::string::npos) << lastError();
  EXPECT_EQ(ncclParamGetStr(bind("NCCL_ALGO"), nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetStr(nullptr, nullptr), ncclInvalidArgument);
}

TEST(ParamApi, Strings) {
  ncclParamHandle_t algo = bind("NCCL_ALGO");
  const char* text = nullptr;
  EXPECT_EQ(ncclParamGetStr(algo, &text), ncclSuccess) << lastError();
  EXPECT_STREQ(text, "");
  ScopedEnv env("NCCL_ALGO", "ring");
  EXPECT_EQ(ncclParamGetStr(algo, &text), ncclSuccess);
  EXPECT_STREQ(text, "ring");
  EXPECT_EQ(ncclParamGetStr(bind("BRAID_DEVICE"), &text), ncclSuccess);
  EXPECT_STREQ(text, "cpu") << "ctest runs the unit tests with BRAID_DEVICE=cpu";
}

TEST(ParamApi, RawBytes) {
  int32_t i32 = 0;
  int len = -1;
  EXPECT_EQ(ncclParamGet(bind("NCCL_IB_ROCE_VERSION_NUM"), &i32, sizeof(i32), &len), ncclSuccess) << lastError();
  EXPECT_EQ(len, 4);
  EXPECT_EQ(i32, 2);
  int64_t i64 = 0;
  EXPECT_EQ(ncclParamGet(bind("NCCL_BUFFSIZE"), &i64, sizeof(i64), &len), ncclSuccess);
  EXPECT_EQ(len, 8);
  EXPECT_EQ(i64, 4 << 20);
  ScopedEnv env("NCCL_PROTO", "simple");
  char text[32];
  EXPECT_EQ(ncclParamGet(bind("NCCL_PROTO"), text, sizeof(text), &len), ncclSuccess);
  EXPECT_EQ(len, 7);
  EXPECT_STREQ(text, "simple");
  char tiny[2];
  len = 99;
  EXPECT_EQ(ncclParamGet(bind("NCCL_PROTO"), tiny, sizeof(tiny), &len), ncclInvalidArgument);
  EXPECT_EQ(len, 0);
  EXPECT_NE(lastError().find("NCCL_PROTO needs 7 bytes"), std::string::npos) << lastError();
  EXPECT_EQ(ncclParamGet(bind("NCCL_IB_SL"), &i32, 0, &len), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGet(bind("NCCL_IB_SL"), nullptr, 4, &len), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGet(bind("NCCL_IB_SL"), &i32, 4, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGet(nullptr, &i32, 4, &len), ncclInvalidArgument);
}

TEST(ParamApi, ByKey) {
  const char* value = nullptr;
  int len = -1;
  EXPECT_EQ(ncclParamGetParameter("NCCL_BUFFSIZE", &value, &len), ncclSuccess) << lastError();
  EXPECT_EQ(std::string(value, static_cast<size_t>(len)), "4194304");
  EXPECT_EQ(ncclParamGetParameter("NCCL_BUFSIZE", &value, &len), ncclInvalidArgument);
  EXPECT_NE(lastError().find("\"NCCL_BUFSIZE\" is not a parameter"), std::string::npos) << lastError();
  EXPECT_EQ(ncclParamGetParameter(nullptr, &value, &len), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetParameter("NCCL_ALGO", nullptr, &len), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetParameter("NCCL_ALGO", &value, nullptr), ncclInvalidArgument);
}

// The variables docs/environment.md documents, from its tables' first column (the PyTorch
// backend's own are read by the plugin, not by the library).
std::set<std::string> documentedVariables() {
  std::ifstream in(BRAID_DOCS_DIR "/environment.md");
  EXPECT_TRUE(in.good()) << BRAID_DOCS_DIR "/environment.md";
  std::set<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("## PyTorch", 0) == 0) break;
    if (line.rfind("| `", 0) != 0) continue;
    // Every `NAME` in the first cell (no std::regex: GCC 12 warns inside it under ASan).
    std::string first = line.substr(0, line.find('|', 1));
    for (size_t open = first.find('`'); open != std::string::npos; open = first.find('`', open + 1)) {
      size_t close = first.find('`', open + 1);
      if (close == std::string::npos) break;
      std::string name = first.substr(open + 1, close - open - 1);
      bool prefixed = name.rfind("NCCL_", 0) == 0 || name.rfind("BRAID_", 0) == 0;
      bool plain = name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
      if (prefixed && plain) names.insert(name);
      open = close;
    }
  }
  return names;
}

TEST(ParamApi, EveryKeyIsDocumentedAndEveryDocumentedVariableIsAKey) {
  const char** table = nullptr;
  int n = 0;
  ASSERT_EQ(ncclParamGetAllParameterKeys(&table, &n), ncclSuccess) << lastError();
  std::set<std::string> keys;
  for (int i = 0; i < n; ++i) {
    ASSERT_NE(table[i], nullptr);
    EXPECT_TRUE(keys.insert(table[i]).second) << "listed twice: " << table[i];
    const char* value = nullptr;
    int len = 0;
    EXPECT_EQ(ncclParamGetParameter(table[i], &value, &len), ncclSuccess) << table[i];
    ncclParamHandle_t h = nullptr;
    EXPECT_EQ(ncclParamBind(&h, table[i]), ncclSuccess) << table[i];
  }
  std::set<std::string> documented = documentedVariables();
  EXPECT_GT(documented.size(), 40u);
  for (const std::string& key : keys) EXPECT_TRUE(documented.count(key)) << key << " is not in docs/environment.md";
  for (const std::string& name : documented) EXPECT_TRUE(keys.count(name)) << name << " is documented but not a key";
  EXPECT_EQ(ncclParamGetAllParameterKeys(nullptr, &n), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetAllParameterKeys(&table, nullptr), ncclInvalidArgument);
}

TEST(ParamApi, DumpAllLogsEveryParameterWithItsOrigin) {
  std::string path = "/tmp/braid-paramdump-" + std::to_string(getpid()) + ".log";
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "ENV", 1);
  setenv("NCCL_DEBUG_FILE", path.c_str(), 1);
  setenv("NCCL_SOCKET_NTHREADS", "3", 1);
  braid::logReset();
  ncclParamDumpAll();
  unsetenv("NCCL_DEBUG");
  unsetenv("NCCL_DEBUG_SUBSYS");
  unsetenv("NCCL_DEBUG_FILE");
  unsetenv("NCCL_SOCKET_NTHREADS");
  braid::logReset();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  EXPECT_NE(text.str().find("NCCL_SOCKET_NTHREADS (int32_t) = \"3\" from environment; default \"0\""),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("NCCL_BUFFSIZE (int64_t) = \"4194304\" from default"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("NCCL_DEBUG (const char*) = \"INFO\" from environment"), std::string::npos) << text.str();
}

// braidParamSet: a value set by the program wins over the environment, shows in the
// parameter API with its origin, and is what the next communicator uses.
TEST(ParamApi, BraidParamSetChangesWhatTheNextCommunicatorUses) {
  ScopedEnv env("NCCL_ALGO", "ring");
  ASSERT_EQ(braidParamSet("NCCL_ALGO", "tree"), ncclSuccess) << lastError();
  const char* text = nullptr;
  EXPECT_EQ(ncclParamGetStr(bind("NCCL_ALGO"), &text), ncclSuccess);
  EXPECT_STREQ(text, "tree");

  std::string path = "/tmp/braid-paramset-" + std::to_string(getpid()) + ".log";
  setenv("NCCL_DEBUG", "TRACE", 1);
  setenv("NCCL_DEBUG_SUBSYS", "ENV,TUNING", 1);
  setenv("NCCL_DEBUG_FILE", path.c_str(), 1);
  braid::logReset();
  ncclParamDumpAll();
  ncclComm_t comms[2] = {};
  ASSERT_EQ(ncclCommInitAll(comms, 2, nullptr), ncclSuccess) << lastError();
  std::vector<float> a(4096, 1.0f), b(4096, 2.0f);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(a.data(), a.data(), a.size(), ncclFloat, ncclSum, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(b.data(), b.data(), b.size(), ncclFloat, ncclSum, comms[1], nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  EXPECT_EQ(a[100], 3.0f);
  for (ncclComm_t comm : comms) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  unsetenv("NCCL_DEBUG");
  unsetenv("NCCL_DEBUG_SUBSYS");
  unsetenv("NCCL_DEBUG_FILE");
  braid::logReset();
  std::ifstream in(path);
  std::stringstream log;
  log << in.rdbuf();
  std::remove(path.c_str());
  EXPECT_NE(log.str().find("NCCL_ALGO (const char*) = \"tree\" from braidParamSet"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("AllReduce of 16384 bytes: Tree/"), std::string::npos) << log.str();

  // NULL (or "") removes it: the environment counts again.
  ASSERT_EQ(braidParamSet("NCCL_ALGO", nullptr), ncclSuccess);
  EXPECT_EQ(ncclParamGetStr(bind("NCCL_ALGO"), &text), ncclSuccess);
  EXPECT_STREQ(text, "ring");
  ASSERT_EQ(braidParamSet("NCCL_SOCKET_NTHREADS", "2"), ncclSuccess);
  int32_t threads = 0;
  EXPECT_EQ(ncclParamGetI32(bind("NCCL_SOCKET_NTHREADS"), &threads), ncclSuccess);
  EXPECT_EQ(threads, 2);
  ASSERT_EQ(braidParamSet("NCCL_SOCKET_NTHREADS", ""), ncclSuccess);
  EXPECT_EQ(ncclParamGetI32(bind("NCCL_SOCKET_NTHREADS"), &threads), ncclSuccess);
  EXPECT_EQ(threads, 0);
}

TEST(ParamApi, BraidParamSetRefusesBadValuesAndKeys) {
  EXPECT_EQ(braidParamSet("NCCL_BUFFSIZE", "lots"), ncclInvalidArgument);
  EXPECT_NE(lastError().find("NCCL_BUFFSIZE=lots is not a size"), std::string::npos) << lastError();
  EXPECT_EQ(braidParamSet("NCCL_IB_SL", "99"), ncclInvalidArgument);
  EXPECT_NE(lastError().find("NCCL_IB_SL=99 is outside [0, 15]"), std::string::npos) << lastError();
  EXPECT_EQ(braidParamSet("NCCL_NOT_A_THING", "1"), ncclInvalidArgument);
  EXPECT_NE(lastError().find("\"NCCL_NOT_A_THING\" is not a parameter"), std::string::npos) << lastError();
  EXPECT_EQ(braidParamSet(nullptr, "1"), ncclInvalidArgument);
  EXPECT_EQ(braidParamSet("NCCL_CONF_FILE", "/tmp/x.conf"), ncclInvalidArgument);
  EXPECT_NE(lastError().find("environment alone"), std::string::npos) << lastError();
  int64_t buffsize = 0;
  EXPECT_EQ(ncclParamGetI64(bind("NCCL_BUFFSIZE"), &buffsize), ncclSuccess);
  EXPECT_EQ(buffsize, 4 << 20) << "a refused value changes nothing";
}

}  // namespace
