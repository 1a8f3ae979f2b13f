// braid-doctor's judgement on made-up ranks, without processes: the launcher
// contradictions, the network and reachability findings, the verdict's exit status, the
// wire forms rank 0 decodes, and the JSON writer's escaping.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "findings.h"
#include "json.h"
#include "launcher_report.h"
#include "network_report.h"
#include "pair_bench.h"
#include "rank_info.h"
#include "reachability.h"
#include "text_assertions.h"

namespace braid::doctor {
namespace {

using test::contains;

// `n` ranks, `perHost` per host, as braidrun would describe them.
std::vector<RankInfo> ranksOf(int n, int perHost) {
  std::vector<RankInfo> ranks(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    RankInfo& r = ranks[static_cast<size_t>(i)];
    r.rank = r.launcherRank = i;
    r.nranks = r.launcherSize = n;
    r.node = i / perHost;
    r.localRank = r.braidLocalRank = i % perHost;
    r.localSize = r.braidLocalSize = perHost;
    r.host = "node" + std::to_string(r.node);
    r.launcher = "slurm";
    r.rendezvous = "tcp://node0:12345";
    r.bootstrapIface = "eth0";
    r.bootstrapAddress = "10.0.0." + std::to_string(r.node + 1);
    r.interfaces = {{"eth0", r.bootstrapAddress, "physical", 25000, 0}};
  }
  return ranks;
}

std::string allText(const Findings& f) {
  std::string text;
  for (const std::string& line : verdictLines(f)) text += line + "\n";
  return text;
}

TEST(DoctorLauncher, ConsistentRanksPass) {
  Findings f;
  Section s = launcherSection(ranksOf(8, 4), &f);
  EXPECT_EQ(verdictExitCode(f), 0) << allText(f);
  EXPECT_EQ(s.key, "launcher");
}

TEST(DoctorLauncher, WorldSizeAndLocalRankContradictions) {
  std::vector<RankInfo> ranks = ranksOf(4, 2);
  ranks[3].localRank = 0;     // rank 3 claims rank 2's local rank
  ranks[1].launcherSize = 5;  // a WORLD_SIZE larger than the ranks that came
  ranks[0].localSize = 4;     // SLURM_STEP_TASKS_PER_NODE says 4 per node
  Findings f;
  launcherSection(ranks, &f);
  std::string text = allText(f);
  EXPECT_EQ(verdictExitCode(f), 2) << text;
  EXPECT_TRUE(contains(text, "ERROR [launcher] ranks 2,3 on host 1 (node1) all claim local rank 0")) << text;
  EXPECT_TRUE(contains(text, "rank 1: the launcher says 5 rank(s) (world size) but 4 arrived")) << text;
  EXPECT_TRUE(contains(text, "fix: make the world size match the processes started: WORLD_SIZE=4, or srun -n 4"))
      << text;
  EXPECT_TRUE(contains(text, "rank 0: the launcher says 4 rank(s) per host but 2 arrived on host 0 (node0)")) << text;
  EXPECT_TRUE(contains(text, "srun --ntasks-per-node=2")) << text;
}

TEST(DoctorLauncher, CudaVisibleDevicesOddities) {
  std::vector<RankInfo> ranks = ranksOf(4, 4);
  for (RankInfo& r : ranks) {
    r.cudaVisibleSet = true;
    r.cudaVisible = "0,1";  // 4 local ranks, 2 devices
  }
  Findings f;
  launcherSection(ranks, &f);
  std::string text = allText(f);
  EXPECT_TRUE(contains(text, "rank 2 is local rank 2 on host 0 (node0) but CUDA_VISIBLE_DEVICES=0,1 shows only 2"))
      << text;
  EXPECT_TRUE(contains(text, "srun --ntasks-per-node=2")) << text;

  ranks = ranksOf(2, 2);
  for (RankInfo& r : ranks) {
    r.cudaVisibleSet = true;
    r.cudaVisible = "3";  // each rank one device, the same one
  }
  ranks[0].cudaVisible = "3";
  Findings shared;
  launcherSection(ranks, &shared);
  text = allText(shared);
  EXPECT_TRUE(contains(text, "ranks 0,1 on host 0 all have CUDA_VISIBLE_DEVICES=3: they share one GPU")) << text;
  EXPECT_TRUE(contains(text, "--gpus-per-task=1")) << text;

  ranks = ranksOf(1, 1);
  ranks[0].cudaVisibleSet = true;
  ranks[0].cudaVisible = "0,gpu1";
  Findings bad;
  launcherSection(ranks, &bad);
  EXPECT_TRUE(contains(allText(bad), "entry 'gpu1' is not an index or GPU-/MIG- UUID")) << allText(bad);

  ranks[0].cudaVisible = "";
  Findings empty;
  launcherSection(ranks, &empty);
  EXPECT_TRUE(contains(allText(empty), "CUDA_VISIBLE_DEVICES is set but empty")) << allText(empty);
}

TEST(DoctorLauncher, VariablesThatDifferFromRankZeroAreListed) {
  std::vector<RankInfo> ranks = ranksOf(2, 1);
  ranks[0].env = {{"RANK", "0"}, {"NCCL_SOCKET_IFNAME", "eth0"}};
  ranks[1].env = {{"RANK", "1"}, {"NCCL_SOCKET_IFNAME", "ens1"}, {"NCCL_NET", "IB"}};
  Findings f;
  Section s = launcherSection(ranks, &f);
  std::string lines;
  for (const std::string& line : s.lines) lines += line + "\n";
  EXPECT_TRUE(contains(lines, "  differs: NCCL_NET=IB (rank 0: unset)")) << lines;
  EXPECT_TRUE(contains(lines, "  differs: NCCL_SOCKET_IFNAME=ens1 (rank 0: eth0)")) << lines;
  EXPECT_FALSE(contains(lines, "differs: RANK")) << lines;  // per-rank by design
  // Interface names may differ per host; the network backend may not.
  std::string text = allText(f);
  EXPECT_EQ(verdictExitCode(f), 1) << text;
  EXPECT_TRUE(contains(text, "WARN [launcher] rank 1 has NCCL_NET=IB (rank 0: unset)")) << text;
  EXPECT_FALSE(contains(text, "rank 1 has NCCL_SOCKET_IFNAME")) << text;
}

TEST(DoctorLauncher, DifferentLaunchersAreAnError) {
  std::vector<RankInfo> ranks = ranksOf(2, 1);
  ranks[1].launcher = "openmpi";
  Findings f;
  launcherSection(ranks, &f);
  EXPECT_TRUE(contains(allText(f), "ranks detected different launchers: openmpi, slurm")) << allText(f);
  EXPECT_TRUE(contains(allText(f), "BRAID_LAUNCHER=")) << allText(f);
}

TEST(DoctorNetwork, LoopbackAcrossHostsAndGidDisagreement) {
  std::vector<RankInfo> ranks = ranksOf(2, 1);
  ranks[1].bootstrapIface = "lo";
  ranks[1].bootstrapAddress = "127.0.0.1";
  IbPortInfo port;
  port.device = "mlx5_0";
  port.linkLayer = "Ethernet (RoCE)";
  port.speedMbps = 100000;
  port.gids = {{0, "fe80::1", "RoCE v1", "eth0"}, {3, "::ffff:10.0.0.1", "RoCE v2", "eth0"}};
  port.chosenIndex = 3;
  port.reason = "IPv4, RoCE v2";
  ranks[0].ibPorts = {port};
  port.chosenIndex = 0;
  ranks[1].ibPorts = {port};
  Findings f;
  Section s = networkSection(ranks, &f);
  std::string text = allText(f);
  EXPECT_TRUE(contains(text, "ERROR [network] host 1 (node1) uses loopback (127.0.0.1) for bootstrap")) << text;
  EXPECT_TRUE(contains(text, "fix: set NCCL_SOCKET_IFNAME")) << text;
  EXPECT_TRUE(contains(text, "hosts chose different RoCE GID indices/types")) << text;
  EXPECT_TRUE(contains(text, "NCCL_IB_GID_INDEX")) << text;
  std::string lines;
  for (const std::string& line : s.lines) lines += line + "\n";
  EXPECT_TRUE(contains(lines, "IB port mlx5_0:1 Ethernet (RoCE) 100 Gb/s, 2 GID(s):")) << lines;
  EXPECT_TRUE(contains(lines, "[3] ::ffff:10.0.0.1")) << lines;
  EXPECT_TRUE(contains(lines, "GID index 3: IPv4, RoCE v2 (override: NCCL_IB_GID_INDEX=<index>)")) << lines;
}

TEST(DoctorReachability, FailuresOnTheBootstrapInterfaceAreErrorsOthersWarnings) {
  std::vector<RankInfo> ranks = ranksOf(2, 1);
  std::vector<ProbeResult> results(3);
  results[0] = {0, 1, "eth0", "eth0", "10.0.0.2:4000", true, false, 0.2, ""};
  results[1] = {1, 0, "eth0", "eth0", "10.0.0.1:4001", false, false, 3000, "could not connect"};
  results[2] = {1, 0, "no route", "docker0", "172.17.0.1:4002", false, false, 1, "Network is unreachable"};
  Findings f;
  Section s = reachabilitySection(ranks, results, &f);
  std::string text = allText(f);
  EXPECT_EQ(verdictExitCode(f), 2) << text;
  EXPECT_TRUE(contains(text,
                       "ERROR [reachability] host 1 (node1) cannot connect to eth0 10.0.0.1:4001 on host 0 "
                       "(node0), the interface its bootstrap uses"))
      << text;
  EXPECT_TRUE(contains(text, "WARN [reachability] host 1 (node1) cannot connect to docker0 172.17.0.1:4002")) << text;
  EXPECT_TRUE(contains(text, "fix: exclude it: NCCL_SOCKET_IFNAME=^docker0")) << text;
  EXPECT_EQ(s.lines.front(), "3 connection(s) tried, 1 connected, 2 failed, 0 skipped (host-local addresses)");
}

TEST(DoctorReachability, SameAddressOnBothHostsIsCalledABridge) {
  std::vector<RankInfo> ranks = ranksOf(2, 1);
  ranks[1].interfaces.push_back({"docker0", "172.17.0.1", "docker", -1, 1});
  std::vector<ProbeResult> results(1);
  results[0] = {1, 0, "docker0", "docker0", "172.17.0.1:4002", false, false, 1, "answered by another process"};
  Findings f;
  reachabilitySection(ranks, results, &f);
  EXPECT_TRUE(contains(allText(f), "(172.17.0.1 is also docker0's own address on host 1: a host-local bridge?)"))
      << allText(f);
}

TEST(DoctorVerdict, WorstLevelDecides) {
  Findings f;
  EXPECT_EQ(verdictExitCode(f), 0);
  EXPECT_EQ(verdictLines(f), std::vector<std::string>{"Verdict: OK"});
  f.note("network", "no IB");
  EXPECT_EQ(verdictExitCode(f), 0);
  f.warn("bandwidth", "slow", "check the link");
  EXPECT_EQ(verdictExitCode(f), 1);
  f.error("allreduce", "wrong", "report it");
  EXPECT_EQ(verdictExitCode(f), 2);
  std::vector<std::string> lines = verdictLines(f);
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines[0], "Verdict: ERROR");
  EXPECT_EQ(lines[1], "ERROR [allreduce] wrong");  // errors first
  EXPECT_EQ(lines[2], "    fix: report it");
  EXPECT_EQ(lines[3], "WARN [bandwidth] slow");
  EXPECT_EQ(verdictJson(f).dump().substr(0, 29), "{\"status\":\"ERROR\",\"findings\":");
}

TEST(DoctorWire, RankInfoAndResultsRoundTrip) {
  RankInfo info = ranksOf(3, 2)[2];
  info.env = {{"SLURM_PROCID", "2"}};
  info.derived = {"rank 2 from SLURM_PROCID"};
  info.listeners = {{"eth0", "10.0.0.2:5000"}};
  IbPortInfo port;
  port.device = "rxe0";
  port.gids = {{1, "::ffff:192.0.2.1", "RoCE v2", "dummy0"}};
  info.ibPorts = {port};
  RankInfo back;
  ASSERT_TRUE(decodeRankInfo(encodeRankInfo(info), &back));
  EXPECT_EQ(back.rank, 2);
  EXPECT_EQ(back.host, "node1");
  EXPECT_EQ(back.env[0].value, "2");
  EXPECT_EQ(back.ibPorts[0].gids[0].gid, "::ffff:192.0.2.1");
  EXPECT_EQ(back.listeners[0].address, "10.0.0.2:5000");
  std::vector<uint8_t> bytes = encodeRankInfo(info);
  bytes.pop_back();
  EXPECT_FALSE(decodeRankInfo(bytes, &back));  // truncated
  EXPECT_FALSE(decodeRankInfo({1, 2, 3}, &back));

  std::vector<ProbeResult> probes(1);
  probes[0] = {1, 0, "eth0", "ib0", "10.1.0.1:7", false, false, 12.5, "refused"};
  std::vector<ProbeResult> probesBack;
  ASSERT_TRUE(decodeProbeResults(encodeProbeResults(probes), &probesBack));
  EXPECT_EQ(probesBack[0].toIface, "ib0");
  EXPECT_DOUBLE_EQ(probesBack[0].ms, 12.5);

  std::vector<PairResult> pairs = {{0, 1, 5.5, 11.25, ""}};
  std::vector<PairResult> pairsBack;
  ASSERT_TRUE(decodePairResults(encodePairResults(pairs), &pairsBack));
  EXPECT_DOUBLE_EQ(pairsBack[0].bandwidthGBs, 11.25);
}

TEST(DoctorBench, PairsAreAllUpToEightRanksThenNeighboursAndRankZero) {
  EXPECT_EQ(benchPairs(3), (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(benchPairs(8).size(), 28u);
  std::vector<std::pair<int, int>> many = benchPairs(16);
  EXPECT_EQ(many.size(), 15u + 14u);  // (0, j) for every j, (i, i+1) for i >= 1
}

TEST(DoctorBench, SlowNetworkPairIsAWarning) {
  std::vector<RankInfo> ranks = ranksOf(4, 1);
  std::vector<PairResult> pairs = {{0, 1, 5, 10, ""}, {0, 2, 5, 10, ""}, {0, 3, 5, 0.5, ""}};
  AllReduceResult ar;
  ar.bytes = 1024;
  Findings f;
  Section s = benchSection(ranks, pairs, ar, "IB", false, &f);
  std::string text = allText(f);
  EXPECT_EQ(verdictExitCode(f), 1) << text;
  EXPECT_TRUE(contains(text, "ranks 0 (node0) -> 3 (node3): 0.500 GB/s, under a tenth of the median")) << text;
  EXPECT_TRUE(contains(s.lines[0], "NET/IB bandwidth: ranks 0 -> 1")) << s.lines[0];
  ar.mismatches = 7;
  Findings wrong;
  benchSection(ranks, {}, ar, "IB", false, &wrong);
  EXPECT_TRUE(contains(allText(wrong), "ERROR [allreduce] all-reduce returned 7 wrong element(s)")) << allText(wrong);
}

TEST(DoctorJson, EscapesAndNumbers) {
  Json doc = Json::object()
                 .set("text", "a\"b\\c\nd\x01")
                 .set("n", 3)
                 .set("x", 0.5)
                 .set("ok", true)
                 .set("list", Json::strings({"p", "q"}))
                 .set("nan", 0.0 / 0.0);
  EXPECT_EQ(doc.dump(),
            "{\"text\":\"a\\\"b\\\\c\\nd\\u0001\",\"n\":3,\"x\":0.5,\"ok\":true,\"list\":[\"p\",\"q\"],"
            "\"nan\":null}");
}

}  // namespace
}  // namespace braid::doctor
