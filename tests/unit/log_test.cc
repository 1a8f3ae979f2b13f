// Parsing of NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE.
#include <gtest/gtest.h>

#include "util/log.h"

namespace braid {
namespace {

TEST(LogLevel, ParsesNcclNamesCaseInsensitively) {
  bool valid = false;
  EXPECT_EQ(parseLogLevel("INFO", &valid), LogLevel::Info);
  EXPECT_TRUE(valid);
  EXPECT_EQ(parseLogLevel("warn", &valid), LogLevel::Warn);
  EXPECT_EQ(parseLogLevel("Trace", &valid), LogLevel::Trace);
  EXPECT_EQ(parseLogLevel("VERSION", &valid), LogLevel::Version);
  EXPECT_EQ(parseLogLevel("ABORT", &valid), LogLevel::Abort);
  EXPECT_TRUE(valid);
  parseLogLevel("LOUD", &valid);
  EXPECT_FALSE(valid);
}

TEST(LogSubsys, ListsAndInversion) {
  std::string unknown;
  EXPECT_EQ(parseLogSubsys("INIT,NET", &unknown), kLogInit | kLogNet);
  EXPECT_TRUE(unknown.empty());
  uint64_t inverted = parseLogSubsys("^INIT", &unknown);
  EXPECT_EQ(inverted & kLogInit, 0u);
  EXPECT_NE(inverted & kLogNet, 0u);
  EXPECT_EQ(parseLogSubsys("ALL", &unknown), kLogAll);
  parseLogSubsys("INIT,BOGUS,NOPE", &unknown);
  EXPECT_EQ(unknown, "BOGUS,NOPE");
}

TEST(LogFile, ExpandsHostAndPid) {
  EXPECT_EQ(expandLogFilePattern("/tmp/nccl.%h.%p.log", "node7", 1234), "/tmp/nccl.node7.1234.log");
  EXPECT_EQ(expandLogFilePattern("plain", "h", 1), "plain");
  EXPECT_EQ(expandLogFilePattern("100%%-%x%", "h", 1), "100%-%x%");
}

}  // namespace
}  // namespace braid
