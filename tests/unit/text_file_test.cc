// readFirstLine: the one reader of one-value sysfs files (IB GID tables, NIC speeds).
#include "util/text_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace braid {
namespace {

class TextFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/braid_text_file_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { (void)std::system(("rm -rf " + dir_).c_str()); }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(TextFile, ReadsTheFirstLineTrimmed) {
  std::string line;
  EXPECT_TRUE(readFirstLine(write("rate", "  100 Gb/sec (4X EDR) \nsecond\n"), &line));
  EXPECT_EQ(line, "100 Gb/sec (4X EDR)");
  EXPECT_EQ(readFirstLine(write("speed", "25000\n")), "25000");
}

TEST_F(TextFile, WhatCannotBeReadIsFalseOrEmpty) {
  std::string line = "unchanged";
  EXPECT_FALSE(readFirstLine(dir_ + "/missing", &line));
  EXPECT_FALSE(readFirstLine(write("empty", ""), &line));
  EXPECT_FALSE(readFirstLine(dir_, &line));  // a directory (EISDIR)
  EXPECT_EQ(line, "unchanged");
  EXPECT_EQ(readFirstLine(dir_ + "/missing"), "");
}

}  // namespace
}  // namespace braid
