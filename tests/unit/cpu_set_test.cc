// CpuSet: the masks NCCL files and hwloc exports write, and the kernel's affinity.
#include <gtest/gtest.h>

#include <thread>

#include "util/cpu_set.h"

namespace braid {
namespace {

CpuSet parsed(const std::string& text) {
  CpuSet set;
  EXPECT_TRUE(CpuSet::parseMask(text, &set)) << text;
  return set;
}

TEST(CpuSet, NcclMasks) {
  EXPECT_EQ(parsed("0000ffff").toList(), "0-15");
  EXPECT_EQ(parsed("ffff0000").toList(), "16-31");
  // Groups of 32 bits, most significant first (the DGX-A100 fixture's socket 0).
  EXPECT_EQ(parsed("0000ffff,ffffffff,0000ffff,ffffffff").toList(), "0-47,64-111");
  EXPECT_EQ(parsed("ffffffff,00000000").toList(), "32-63");
  // Short groups are 32 bits too.
  EXPECT_EQ(parsed("1,0").toList(), "32");
}

TEST(CpuSet, HwlocMasks) {
  EXPECT_EQ(parsed("0x0000000c").toList(), "2-3");
  EXPECT_EQ(parsed("0x00000003,0x00000001").toList(), "0,32-33");
  // A single group may be wider than 32 bits.
  EXPECT_EQ(parsed("0x100000000").toList(), "32");
}

TEST(CpuSet, RejectsWhatIsNotAMask) {
  CpuSet set;
  for (const char* bad : {"0x", "zz", "12,", ",1", "0-3", "123456789,0"}) {
    EXPECT_FALSE(CpuSet::parseMask(bad, &set)) << bad;
  }
  EXPECT_TRUE(CpuSet::parseMask("", &set));
  EXPECT_TRUE(set.empty());
  EXPECT_TRUE(parsed("00000000").empty());
}

TEST(CpuSet, Lists) {
  CpuSet set;
  ASSERT_TRUE(CpuSet::parseList("0-3,8,10-11", &set));
  EXPECT_EQ(set.toList(), "0-3,8,10-11");
  ASSERT_TRUE(CpuSet::parseList("5", &set));
  EXPECT_EQ(set.toList(), "5");
  for (const char* bad : {"", "-1", "3-1", "1,", "a", "1-", "0-99999999"}) {
    EXPECT_FALSE(CpuSet::parseList(bad, &set)) << bad;
  }
}

TEST(CpuSet, SetOperations) {
  CpuSet a = parsed("0f"), b = parsed("3c");
  EXPECT_EQ(a.intersect(b).toList(), "2-3");
  EXPECT_TRUE(a.intersects(b));
  EXPECT_FALSE(a.intersects(parsed("f0")));
  EXPECT_TRUE(parsed("06").within(a));
  EXPECT_FALSE(b.within(a));
  EXPECT_EQ(a.count(), 4);
  CpuSet big;
  big.add(1000);
  big.add(3);
  EXPECT_EQ(big.toList(), "3,1000");
  EXPECT_TRUE(big.contains(1000));
  EXPECT_FALSE(big.contains(999));
  EXPECT_EQ(big.intersect(a).toList(), "3");
}

TEST(CpuSet, BindsAThreadWithinTheProcess) {
  CpuSet process = CpuSet::ofCallingThread();
  ASSERT_FALSE(process.empty());
  CpuSet one;
  one.add(process.cpus().front());
  CpuSet seen;
  std::thread t([&] {
    EXPECT_TRUE(one.bindCallingThread());
    seen = CpuSet::ofCallingThread();
  });
  t.join();
  EXPECT_EQ(seen, one);
  // The binding is the thread's own: the caller keeps its CPUs.
  EXPECT_EQ(CpuSet::ofCallingThread(), process);
}

}  // namespace
}  // namespace braid
