// How long a host wait spins before it yields when BRAID_SPIN_NS is unset: 20 us where every
// thread that runs through an operation has a core of its own, nothing where they outnumber
// the cores. Across hosts each rank's network proxy thread counts too.
#include <gtest/gtest.h>

#include "core/datapath/data_path_settings.h"

namespace braid {
namespace {

TEST(DefaultSpin, NoneWhereRanksOutnumberTheCores) {
  EXPECT_EQ(defaultSpinNs(2, 4, false), 0);
  EXPECT_EQ(defaultSpinNs(2, 3, false), 0);
  EXPECT_EQ(defaultSpinNs(2, 2, false), 20000);
  EXPECT_EQ(defaultSpinNs(64, 8, false), 20000);
}

TEST(DefaultSpin, AcrossHostsEachRankNeedsACoreForItsProxyToo) {
  EXPECT_EQ(defaultSpinNs(2, 2, true), 0);  // one rank on each of two namespace hosts of 2 cores
  EXPECT_EQ(defaultSpinNs(2, 1, true), 20000);
  EXPECT_EQ(defaultSpinNs(16, 8, true), 20000);
  EXPECT_EQ(defaultSpinNs(15, 8, true), 0);
}

}  // namespace
}  // namespace braid
