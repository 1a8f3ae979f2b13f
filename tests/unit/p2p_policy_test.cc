// GPU mode's choice between CUDA IPC (P2P) and shared memory: NCCL_P2P_LEVEL's grammar,
// bus ids, paths between GPUs of real machines' topologies, and the decision with its
// reasons.
#include "core/datapath/p2p_policy.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/datapath/data_path_settings.h"
#include "topology/topology_fixture.h"

namespace braid {
namespace {

TEST(P2pLevel, NamesAnyCase) {
  PathType level = PathType::DIS;
  struct Case {
    const char* text;
    PathType expected;
  } cases[] = {{"LOC", PathType::LOC}, {"NVL", PathType::NVL}, {"NVB", PathType::NVB}, {"C2C", PathType::C2C},
               {"PIX", PathType::PIX}, {"PXB", PathType::PXB}, {"P2C", PathType::P2C}, {"PXN", PathType::PXN},
               {"PHB", PathType::PHB}, {"SYS", PathType::SYS}, {"phb", PathType::PHB}, {"Nvl", PathType::NVL}};
  for (const Case& c : cases) {
    ASSERT_TRUE(parseP2pLevel(c.text, &level)) << c.text;
    EXPECT_EQ(level, c.expected) << c.text;
  }
}

TEST(P2pLevel, LegacyIntegers) {
  // NCCL's levelsOldToNew: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS, 5 SYS; larger is SYS.
  const PathType expected[] = {PathType::LOC, PathType::PIX, PathType::PXB,
                               PathType::PHB, PathType::SYS, PathType::SYS};
  for (int i = 0; i <= 5; ++i) {
    PathType level = PathType::DIS;
    ASSERT_TRUE(parseP2pLevel(std::to_string(i), &level)) << i;
    EXPECT_EQ(level, expected[i]) << i;
  }
  PathType level = PathType::DIS;
  ASSERT_TRUE(parseP2pLevel("17", &level));
  EXPECT_EQ(level, PathType::SYS);
}

TEST(P2pLevel, RejectsWhatIsNoLevel) {
  PathType level = PathType::PXB;
  for (const char* text : {"", "NET", "DIS", "NODE?", "-1", "2x", "PXB ", "fast"}) {
    EXPECT_FALSE(parseP2pLevel(text, &level)) << "'" << text << "'";
  }
  EXPECT_EQ(level, PathType::PXB);  // untouched
}

TEST(P2pBusId, Normalized) {
  EXPECT_EQ(normalizeBusId("0000:07:00.0"), "0000:07:00.0");
  EXPECT_EQ(normalizeBusId("0000:0A:00.0"), "0000:0a:00.0");
  EXPECT_EQ(normalizeBusId("00000000:0A:00.0"), "0000:0a:00.0");  // NVML's eight-digit domain
  EXPECT_EQ(normalizeBusId("0a:00.0"), "0000:0a:00.0");
  EXPECT_EQ(normalizeBusId("host"), "host");
}

TEST(P2pTopology, DefaultLevel) {
  // Intel: PXB. AMD with more than two GPUs in use: PXB; with at most two: SYS.
  TopoGraph intel = test::loadFixture("pcie_4gpu_1nic.xml");
  TopoGraph amd = test::loadFixture("dgx_a100.xml");
  EXPECT_EQ(defaultP2pLevel(intel, 2), PathType::PXB);
  EXPECT_EQ(defaultP2pLevel(amd, 8), PathType::PXB);
  EXPECT_EQ(defaultP2pLevel(amd, 3), PathType::PXB);
  EXPECT_EQ(defaultP2pLevel(amd, 2), PathType::SYS);
  EXPECT_EQ(defaultP2pLevel(TopoGraph(), 2), PathType::PXB);
}

TEST(P2pTopology, PathsByBusId) {
  TopoGraph pcie = test::loadFixture("pcie_4gpu_1nic.xml");
  TopoPaths pciePaths(pcie);
  PathType type = PathType::DIS;
  ASSERT_TRUE(gpuPathByBusId(pcie, pciePaths, "0000:04:00.0", "0000:05:00.0", &type));
  EXPECT_EQ(type, PathType::PIX);  // one switch
  ASSERT_TRUE(gpuPathByBusId(pcie, pciePaths, "00000000:04:00.0", "0000:84:00.0", &type));
  EXPECT_EQ(type, test::gpuPath(pcie, pciePaths, 0, 2));
  EXPECT_GT(type, PathType::PXB);  // through the CPU
  ASSERT_TRUE(gpuPathByBusId(pcie, pciePaths, "0000:04:00.0", "0000:04:00.0", &type));
  EXPECT_EQ(type, PathType::LOC);
  EXPECT_FALSE(gpuPathByBusId(pcie, pciePaths, "0000:04:00.0", "0000:99:00.0", &type));
  EXPECT_FALSE(gpuPathByBusId(pcie, pciePaths, "host", "host", &type));

  TopoGraph dgx = test::loadFixture("dgx_a100.xml");
  TopoPaths dgxPaths(dgx);
  ASSERT_TRUE(gpuPathByBusId(dgx, dgxPaths, "0000:07:00.0", "0000:0F:00.0", &type));
  EXPECT_EQ(type, PathType::NVL);
}

P2pInputs known(PathType path) {
  P2pInputs in;
  in.pathKnown = true;
  in.path = path;
  return in;
}

TEST(P2pDecide, WithinDefaultLevel) {
  for (PathType path : {PathType::LOC, PathType::NVL, PathType::NVB, PathType::PIX, PathType::PXB}) {
    P2pDecision d = decideP2p(known(path));
    EXPECT_TRUE(d.useP2p) << pathTypeName(path) << ": " << d.reason;
  }
  P2pDecision d = decideP2p(known(PathType::NVL));
  EXPECT_EQ(d.reason, "path NVL within the default P2P level PXB");
}

// BRAID_SHARED_GPU=1 (several ranks on one GPU, a test set-up): such a pair uses shared
// memory whatever the level allows, since CUDA IPC of one device's memory to itself is not
// what NCCL's P2P transport does.
TEST(P2pDecide, TwoRanksOfOneGpuNeverUseP2p) {
  P2pInputs in = known(PathType::LOC);
  in.userLevel = static_cast<int>(PathType::SYS);
  in.sameGpu = true;
  P2pDecision d = decideP2p(in);
  EXPECT_FALSE(d.useP2p);
  EXPECT_EQ(d.reason, "both ranks use the same GPU (BRAID_SHARED_GPU=1)");
}

TEST(P2pDecide, BeyondTheLevel) {
  P2pDecision d = decideP2p(known(PathType::PHB));
  EXPECT_FALSE(d.useP2p);
  EXPECT_EQ(d.reason, "path PHB exceeds the default P2P level PXB");

  P2pInputs in = known(PathType::PIX);
  in.userLevel = static_cast<int>(PathType::NVL);
  d = decideP2p(in);
  EXPECT_FALSE(d.useP2p);
  EXPECT_EQ(d.reason, "path PIX exceeds NCCL_P2P_LEVEL=NVL");

  in = known(PathType::SYS);
  in.userLevel = static_cast<int>(PathType::SYS);
  EXPECT_TRUE(decideP2p(in).useP2p);

  in = known(PathType::SYS);
  in.defaultLevel = PathType::SYS;  // AMD, two GPUs
  EXPECT_TRUE(decideP2p(in).useP2p);
}

TEST(P2pDecide, DisableWinsExceptOnOneGpu) {
  P2pInputs in = known(PathType::NVL);
  in.p2pDisable = true;
  in.userLevel = static_cast<int>(PathType::SYS);
  P2pDecision d = decideP2p(in);
  EXPECT_FALSE(d.useP2p);
  EXPECT_EQ(d.reason, "P2P disabled by NCCL_P2P_DISABLE=1");
  // NCCL's NCCL_P2P_DISABLE=1 is level LOC: two ranks of one GPU still qualify.
  in = known(PathType::LOC);
  in.p2pDisable = true;
  EXPECT_TRUE(decideP2p(in).useP2p);
}

TEST(P2pDecide, UnknownPathCountsAsSys) {
  P2pInputs in;
  in.topologyNote = "the topology (live machine) does not show both GPUs";
  P2pDecision d = decideP2p(in);
  EXPECT_FALSE(d.useP2p);
  EXPECT_EQ(d.reason,
            "path unknown (the topology (live machine) does not show both GPUs; counted as SYS) exceeds the default "
            "P2P level PXB");
  in.userLevel = static_cast<int>(PathType::SYS);
  EXPECT_TRUE(decideP2p(in).useP2p);
}

TEST(P2pDecide, CudaAndIpcCanVeto) {
  P2pInputs in = known(PathType::NVL);
  in.cudaPeer = CudaPeerAccess::No;
  in.cudaDetail = "CUDA reports no peer access between devices 0 and 1";
  P2pDecision d = decideP2p(in);
  EXPECT_FALSE(d.useP2p);
  EXPECT_EQ(d.reason, in.cudaDetail);

  in = known(PathType::NVL);
  in.cudaPeer = CudaPeerAccess::Unknown;  // the other GPU is not visible here: the path decides
  EXPECT_TRUE(decideP2p(in).useP2p);
  in.cudaPeer = CudaPeerAccess::Yes;
  EXPECT_TRUE(decideP2p(in).useP2p);

  in.ipcSupported = false;
  in.ipcDetail = "CUDA IPC is not available here (cudaIpcGetMemHandle failed)";
  d = decideP2p(in);
  EXPECT_FALSE(d.useP2p);
  EXPECT_EQ(d.reason, in.ipcDetail);
}

TEST(P2pDecide, LevelIsCheckedBeforeCuda) {
  // A path beyond the level says so, whatever CUDA would answer.
  P2pInputs in = known(PathType::SYS);
  in.cudaPeer = CudaPeerAccess::No;
  EXPECT_EQ(decideP2p(in).reason, "path SYS exceeds the default P2P level PXB");
}

TEST(P2pSettings, ReadFromTheEnvironment) {
  CommConfig config;
  ::setenv("NCCL_P2P_DISABLE", "1", 1);
  ::setenv("NCCL_P2P_LEVEL", "phb", 1);
  DataPathSettings s = readDataPathSettings(config, 1);
  EXPECT_TRUE(s.p2pDisable);
  EXPECT_EQ(s.p2pLevel, static_cast<int>(PathType::PHB));
  ::setenv("NCCL_P2P_LEVEL", "1", 1);  // legacy: PIX
  EXPECT_EQ(readDataPathSettings(config, 1).p2pLevel, static_cast<int>(PathType::PIX));
  ::setenv("NCCL_P2P_LEVEL", "fastest", 1);  // not a level: WARN once, the default
  EXPECT_EQ(readDataPathSettings(config, 1).p2pLevel, -1);
  ::unsetenv("NCCL_P2P_DISABLE");
  ::unsetenv("NCCL_P2P_LEVEL");
  s = readDataPathSettings(config, 1);
  EXPECT_FALSE(s.p2pDisable);
  EXPECT_EQ(s.p2pLevel, -1);
}

TEST(GpuSettings, GpuModeUsesEightChannelsWithinTheLimits) {
  CommConfig config;
  EXPECT_EQ(readDataPathSettings(config, 1, true).defaultChannels, 8);
  ::setenv("NCCL_MAX_NCHANNELS", "4", 1);
  EXPECT_EQ(readDataPathSettings(config, 1, true).defaultChannels, 4);
  ::unsetenv("NCCL_MAX_NCHANNELS");
  EXPECT_LE(readDataPathSettings(config, 1, false).defaultChannels, 4);  // host mode: threads, by cores
}

}  // namespace
}  // namespace braid
