// main() of the multi-process test binaries: a child runs its scenario, the parent runs
// GoogleTest.
#include <gtest/gtest.h>

#include "child_process.h"

int main(int argc, char** argv) {
  int exitCode = 0;
  if (braid::test::runAsChildIfRequested(argc, argv, &exitCode)) return exitCode;
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
