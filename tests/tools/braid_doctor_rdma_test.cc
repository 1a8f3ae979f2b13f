// braid-doctor on a host with a verbs device: the IB section names the device, its GID
// table and the chosen index, and with shared memory off the pair runs over NET/IB.
// Labelled rdma: it runs inside the soft-RoCE VM (ctest -L rxe) and skips elsewhere.
#include <dirent.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run_command.h"
#include "text_assertions.h"

namespace braid::test {
namespace {

using test::contains;

// The first device under /sys/class/infiniband, or "".
std::string firstVerbsDevice() {
  DIR* dir = opendir("/sys/class/infiniband");
  if (!dir) return "";
  std::string found;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') {
      found = e->d_name;
      break;
    }
  }
  closedir(dir);
  return found;
}

TEST(BraidDoctorRdma, ReportsTheDeviceGidTableChosenIndexAndIbBandwidth) {
  std::string device = firstVerbsDevice();
  if (device.empty()) {
    GTEST_SKIP() << "no verbs device here; run inside the soft-RoCE VM: ctest -L rxe, or "
                    "scripts/rxe-vm/run-in-rxe-vm.sh ctest --test-dir build -L rdma";
  }
  // Shared memory off: the two ranks of this host talk through the network backend, and
  // NCCL_NET=IB makes that IB or a clear failure.
  CommandResult r = runCommand({"env", "NCCL_SHM_DISABLE=1", "NCCL_NET=IB", BRAIDRUN_PATH, "-n", "2", BRAID_DOCTOR_PATH,
                                "--allreduce-bytes", "1048576"},
                               240);
  ASSERT_FALSE(r.timedOut) << r.describe();
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  const std::vector<std::string> parts = {"[0] hello from rank 0/2",
                                          "[1] hello from rank 1/2",
                                          "IB port " + device + ":1 ",
                                          " GID(s):",
                                          "<- chosen",
                                          "GID index ",
                                          "(override: NCCL_IB_GID_INDEX=<index>)",
                                          "NET/IB bandwidth: ranks 0 -> 1",
                                          "results correct",
                                          "Verdict: OK"};
  for (const std::string& part : parts) {
    EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.describe();
  }
  if (device.rfind("rxe", 0) == 0) {
    // Soft-RoCE over an Ethernet netdev: the RoCE v2 IPv4 entry is the automatic choice.
    EXPECT_TRUE(contains(r.out, "Ethernet (RoCE)")) << r.out;
    EXPECT_TRUE(contains(r.out, "RoCE v2")) << r.out;
  }
}

}  // namespace
}  // namespace braid::test
