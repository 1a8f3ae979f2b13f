// The parameter facility: integer and size parsing, configuration files, precedence.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "util/env.h"
#include "util/param.h"

namespace braid {
namespace {

TEST(ParseInt, AcceptsDecimalHexAndSign) {
  int64_t v = 0;
  EXPECT_TRUE(parseInt64("42", &v));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(parseInt64(" -7 ", &v));
  EXPECT_EQ(v, -7);
  EXPECT_TRUE(parseInt64("0x10", &v));
  EXPECT_EQ(v, 16);
}

TEST(ParseInt, RejectsGarbage) {
  int64_t v = 0;
  for (const char* bad : {"", "abc", "12abc", "1.5", "0x", "99999999999999999999999"}) {
    EXPECT_FALSE(parseInt64(bad, &v)) << bad;
  }
}

TEST(ParseSize, AcceptsBinarySuffixes) {
  int64_t v = 0;
  EXPECT_TRUE(parseSize("4194304", &v));
  EXPECT_EQ(v, 4194304);
  EXPECT_TRUE(parseSize("4M", &v));
  EXPECT_EQ(v, 4 << 20);
  EXPECT_TRUE(parseSize("512k", &v));
  EXPECT_EQ(v, 512 << 10);
  EXPECT_TRUE(parseSize("1G", &v));
  EXPECT_EQ(v, int64_t{1} << 30);
  EXPECT_FALSE(parseSize("4MiB", &v));
  EXPECT_FALSE(parseSize("M", &v));
  EXPECT_FALSE(parseSize("-1M", &v));
}

TEST(ConfFile, ParsesNameValueLinesAndReportsBadOnes) {
  std::vector<int> bad;
  auto entries = parseConfFile(
      "# comment\nNCCL_DEBUG=INFO\n\n  export NCCL_SOCKET_IFNAME = \"eth0\"  # trailing\nnot a setting\n=x\n", &bad);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "NCCL_DEBUG");
  EXPECT_EQ(entries[0].value, "INFO");
  EXPECT_EQ(entries[1].name, "NCCL_SOCKET_IFNAME");
  EXPECT_EQ(entries[1].value, "eth0");
  EXPECT_EQ(bad, (std::vector<int>{5, 6}));
}

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/braid-conf-XXXXXX";
    int fd = mkstemp(name);
    close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(EnvSource, EnvironmentBeatsFilesAndFirstFileWins) {
  TempFile first("BRAID_TEST_A=from-first\nBRAID_TEST_B=from-first\n");
  TempFile second("BRAID_TEST_B=from-second\nBRAID_TEST_C=from-second\n");
  setenv("BRAID_TEST_A", "from-env", 1);
  EnvSource source({first.path(), second.path()}, true);
  EXPECT_EQ(source.get("BRAID_TEST_A").value(), "from-env");
  EXPECT_EQ(source.origin("BRAID_TEST_A"), "environment");
  EXPECT_EQ(source.get("BRAID_TEST_B").value(), "from-first");
  EXPECT_EQ(source.origin("BRAID_TEST_B"), first.path());
  EXPECT_EQ(source.get("BRAID_TEST_C").value(), "from-second");
  EXPECT_FALSE(source.get("BRAID_TEST_D").has_value());
  unsetenv("BRAID_TEST_A");
}

TEST(EnvSource, EmptyValueCountsAsUnset) {
  setenv("BRAID_TEST_EMPTY", "", 1);
  EnvSource source({}, true);
  EXPECT_FALSE(source.get("BRAID_TEST_EMPTY").has_value());
  unsetenv("BRAID_TEST_EMPTY");
}

TEST(IntParam, MalformedOrOutOfRangeFallsBackToDefault) {
  static const IntParam param("BRAID_TEST_INT", 7, 1, 100, "test");
  static const IntParam size("BRAID_TEST_SIZE", 1024, 0, int64_t{1} << 40, "test", ParamKind::Size);
  TempFile conf("BRAID_TEST_INT=abc\nBRAID_TEST_SIZE=2M\n");
  EnvSource fromFile({conf.path()}, false);
  EXPECT_EQ(param.get(fromFile), 7);
  EXPECT_FALSE(param.getIfSet(fromFile).has_value());
  EXPECT_EQ(size.get(fromFile), 2 << 20);

  TempFile outOfRange("BRAID_TEST_INT=1000\n");
  EnvSource tooBig({outOfRange.path()}, false);
  EXPECT_EQ(param.get(tooBig), 7);

  TempFile good("BRAID_TEST_INT=12\n");
  EnvSource fine({good.path()}, false);
  EXPECT_EQ(param.get(fine), 12);
}

TEST(ParamRegistry, ListsDeclaredParameters) {
  static const StringParam declared("BRAID_TEST_LISTED", "x", "listed");
  bool found = false;
  for (const ParamBase* p : ParamBase::all()) found |= std::string(p->name()) == "BRAID_TEST_LISTED";
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace braid
