#include "bootstrap/launch/launcher_env.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace braid {
namespace {

using Vars = std::map<std::string, std::string>;
constexpr int kParentPid = 4321;

// "A=1 B=x" -> {A: 1, B: x}, the way an environment dump reads. "A=" sets A to "", which
// detectLaunch must treat as unset.
Vars parse(const std::string& text) {
  Vars vars;
  std::istringstream in(text);
  for (std::string item; in >> item;) vars[item.substr(0, item.find('='))] = item.substr(item.find('=') + 1);
  return vars;
}

// Adds or replaces variables; "A=" unsets A, as far as detectLaunch can tell.
Vars with(Vars vars, const Vars& changes) {
  for (const auto& [name, value] : changes) vars[name] = value;
  return vars;
}
Vars with(const Vars& vars, const std::string& changes) { return with(vars, parse(changes)); }

EnvLookup lookupIn(const Vars& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

LaunchInfo detect(const Vars& vars) {
  LaunchInfo info;
  Status status = detectLaunch(lookupIn(vars), kParentPid, &info);
  EXPECT_TRUE(status.ok()) << status.message();
  return info;
}

// Expects ncclInvalidArgument with every fragment in the message, and `out` untouched.
void expectError(const Vars& vars, std::initializer_list<std::string> fragments) {
  LaunchInfo info;
  info.rank = 77;
  Status status = detectLaunch(lookupIn(vars), kParentPid, &info);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), ncclInvalidArgument);
  for (const std::string& fragment : fragments) {
    EXPECT_NE(status.message().find(fragment), std::string::npos)
        << "no \"" << fragment << "\" in: " << status.message();
  }
  EXPECT_EQ(info.rank, 77);
  EXPECT_TRUE(info.notes.empty());
}

void expectLayout(const LaunchInfo& info, LauncherKind launcher, int rank, int nranks, int localRank, int localSize) {
  EXPECT_EQ(info.launcher, launcher);
  EXPECT_EQ(info.rank, rank);
  EXPECT_EQ(info.nranks, nranks);
  EXPECT_EQ(info.localRank, localRank);
  EXPECT_EQ(info.localSize, localSize);
}

bool hasNote(const LaunchInfo& info, const std::string& fragment) {
  for (const std::string& note : info.notes) {
    if (note.find(fragment) != std::string::npos) return true;
  }
  return false;
}

// torchrun --nnodes=2 --nproc-per-node=8: the second process of the second node.
Vars torchrun() {
  return parse(
      "RANK=9 LOCAL_RANK=1 WORLD_SIZE=16 LOCAL_WORLD_SIZE=8 GROUP_RANK=1 GROUP_WORLD_SIZE=2 ROLE_RANK=9 "
      "ROLE_WORLD_SIZE=16 ROLE_NAME=default MASTER_ADDR=node01 MASTER_PORT=29500 OMP_NUM_THREADS=1 "
      "TORCHELASTIC_RUN_ID=c0ffee-42 TORCHELASTIC_RESTART_COUNT=0 TORCHELASTIC_MAX_RESTARTS=0 "
      "TORCHELASTIC_USE_AGENT_STORE=True TORCHELASTIC_ERROR_FILE=/tmp/torchelastic/error.json");
}
// braidrun sets the torchrun variables too.
Vars braidrun() {
  return parse(
      "BRAIDRUN_JOB_ID=b7e1 RANK=2 WORLD_SIZE=4 LOCAL_RANK=2 LOCAL_WORLD_SIZE=4 MASTER_ADDR=10.1.2.3 "
      "MASTER_PORT=41000");
}
// srun -N2 --ntasks-per-node=4 in job 4242: task 5, the second on the second node.
Vars srun() {
  return parse(
      "SLURM_PROCID=5 SLURM_NTASKS=8 SLURM_NPROCS=8 SLURM_LOCALID=1 SLURM_NODEID=1 SLURM_JOB_ID=4242 SLURM_JOBID=4242 "
      "SLURM_STEP_ID=0 SLURM_STEPID=0 SLURM_JOB_NODELIST=node[01-02] SLURM_NODELIST=node[01-02] "
      "SLURM_STEP_NODELIST=node[01-02] SLURM_STEP_NUM_NODES=2 SLURM_STEP_NUM_TASKS=8 SLURM_STEP_TASKS_PER_NODE=4(x2) "
      "SLURM_TASKS_PER_NODE=4(x2) SLURM_NNODES=2 SLURM_JOB_NUM_NODES=2 SLURMD_NODENAME=node02 SLURM_CPUS_ON_NODE=32");
}
// What a program started by an sbatch script, not by srun, sees of its allocation.
Vars sbatch() {
  return parse(
      "SLURM_JOB_ID=777 SLURM_JOBID=777 SLURM_JOB_NODELIST=gpu[1-2] SLURM_NODELIST=gpu[1-2] SLURM_NTASKS=2 "
      "SLURM_NPROCS=2 SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_TASKS_PER_NODE=1(x2) SLURM_NNODES=2");
}
// Open MPI 4 mpirun -np 4 on one host: the third process.
Vars mpirun() {
  return parse(
      "OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=2 OMPI_COMM_WORLD_LOCAL_SIZE=4 "
      "OMPI_COMM_WORLD_NODE_RANK=2 OMPI_UNIVERSE_SIZE=4 OMPI_MCA_ess_base_jobid=3621650433 OMPI_MCA_ess_base_vpid=2 "
      "PMIX_RANK=2 PMIX_NAMESPACE=3621650433 OMPI_MCA_orte_num_nodes=1");
}
// MPICH (Hydra) mpiexec -n 2 on one host: the second process.
Vars mpiexec() {
  return parse("PMI_RANK=1 PMI_SIZE=2 PMI_FD=6 MPI_LOCALRANKID=1 MPI_LOCALNRANKS=2 PMI_KVSNAME=kvs_9876_0");
}

uint16_t slurmPort(uint64_t job, uint64_t step) { return static_cast<uint16_t>(10000 + (job * 64 + step) % 20000); }

TEST(LauncherEnv, KindNamesAndDescribe) {
  const std::vector<std::string> names = {
      launcherKindName(LauncherKind::Braidrun), launcherKindName(LauncherKind::Torchrun),
      launcherKindName(LauncherKind::Slurm),    launcherKindName(LauncherKind::OpenMpi),
      launcherKindName(LauncherKind::Mpich),    launcherKindName(LauncherKind::Generic)};
  EXPECT_EQ(names, (std::vector<std::string>{"braidrun", "torchrun", "slurm", "openmpi", "mpich", "env"}));
  RendezvousPoint point{.host = "node01", .port = 29501};
  EXPECT_EQ(point.describe(), "tcp://node01:29501");
  point.host = "fe80::1";
  EXPECT_EQ(point.describe(), "tcp://[fe80::1]:29501");
  EXPECT_EQ((RendezvousPoint{.kind = RendezvousPoint::Kind::File, .path = "/tmp/x"}).describe(), "file:///tmp/x");
}

TEST(DetectLaunch, Torchrun) {
  LaunchInfo info = detect(torchrun());
  expectLayout(info, LauncherKind::Torchrun, 9, 16, 1, 8);
  EXPECT_EQ(info.rendezvous.kind, RendezvousPoint::Kind::Tcp);
  EXPECT_EQ(info.rendezvous.describe(), "tcp://node01:29501");  // the agent's store has MASTER_PORT
  EXPECT_EQ(info.jobToken, "torchrun-c0ffee-42");
  EXPECT_EQ(info.notes, (std::vector<std::string>{
                            "launcher torchrun detected from RANK, WORLD_SIZE, TORCHELASTIC_RUN_ID",
                            "rank 9 from RANK",
                            "nranks 16 from WORLD_SIZE",
                            "localRank 1 from LOCAL_RANK, localSize 8 from LOCAL_WORLD_SIZE",
                            "rendezvous tcp://node01:29501 from MASTER_ADDR and MASTER_PORT plus 1, because the "
                            "torchrun agent's own store listens on MASTER_PORT",
                            "jobToken torchrun-c0ffee-42 from TORCHELASTIC_RUN_ID",
                        }));
}

TEST(DetectLaunch, TorchrunPorts) {
  EXPECT_EQ(detect(with(torchrun(), "MASTER_PORT=65534")).rendezvous.port, 65535);
  expectError(with(torchrun(), "MASTER_PORT=65535"), {"MASTER_PORT=65535", "MASTER_PORT+1", "lower MASTER_PORT"});
  LaunchInfo info = detect(with(torchrun(), "MASTER_PORT="));  // empty reads as unset
  EXPECT_EQ(info.rendezvous.port, 29501);
  EXPECT_TRUE(hasNote(info, "port 29500, PyTorch's default (MASTER_PORT not set) plus 1"));
  EXPECT_EQ(detect(with(torchrun(), "MASTER_ADDR=[fd00::7]")).rendezvous.describe(), "tcp://[fd00::7]:29501");
}

TEST(DetectLaunch, BraidrunServesOnMasterPortAndWinsOverTorchrun) {
  LaunchInfo info = detect(with(braidrun(), "TORCHELASTIC_RUN_ID=x"));
  expectLayout(info, LauncherKind::Braidrun, 2, 4, 2, 4);
  EXPECT_EQ(info.rendezvous.describe(), "tcp://10.1.2.3:41000");
  EXPECT_EQ(info.jobToken, "braidrun-b7e1");
  EXPECT_EQ(info.notes[0], "launcher braidrun detected from BRAIDRUN_JOB_ID");
  EXPECT_EQ(detect(with(braidrun(), "MASTER_PORT=65535")).rendezvous.port, 65535);
}

TEST(DetectLaunch, GenericRankAndWorldSize) {
  LaunchInfo info = detect(parse("RANK=0 WORLD_SIZE=1 MASTER_ADDR=localhost"));
  expectLayout(info, LauncherKind::Generic, 0, 1, -1, 0);
  EXPECT_EQ(info.rendezvous.describe(), "tcp://localhost:29500");
  EXPECT_EQ(info.jobToken, "");
  EXPECT_TRUE(hasNote(info, "localRank unknown (no LOCAL_RANK), localSize unknown (no LOCAL_WORLD_SIZE)"));
  EXPECT_TRUE(hasNote(info, "from MASTER_ADDR and port 29500, PyTorch's default (MASTER_PORT not set)"));
  EXPECT_TRUE(hasNote(info, "jobToken unknown"));
}

TEST(DetectLaunch, Srun) {
  LaunchInfo info = detect(srun());
  expectLayout(info, LauncherKind::Slurm, 5, 8, 1, 4);
  EXPECT_EQ(info.rendezvous.describe(), "tcp://node01:21488");  // 10000 + (4242 * 64 + 0) mod 20000
  EXPECT_EQ(info.jobToken, "slurm-4242.0");
  EXPECT_EQ(info.notes[1], "rank 5 from SLURM_PROCID");
  EXPECT_EQ(info.notes[2], "nranks 8 from SLURM_NTASKS");
  EXPECT_EQ(info.notes[3],
            "localRank 1 from SLURM_LOCALID, localSize 4 from SLURM_STEP_TASKS_PER_NODE[SLURM_NODEID=1]");
  EXPECT_EQ(info.notes[4],
            "rendezvous tcp://node01:21488 from the first host of SLURM_STEP_NODELIST and SLURM_JOB_ID 4242 and step 0 "
            "(SLURM_STEP_ID or 0): port = 10000 + ((job * 64 + step) mod 20000)");
  EXPECT_EQ(info.notes[5], "jobToken slurm-4242.0 from SLURM_JOB_ID and SLURM_STEP_ID (0 if unset)");
}

TEST(DetectLaunch, SlurmPort) {
  EXPECT_EQ(detect(with(srun(), "SLURM_STEP_ID=3")).rendezvous.port, slurmPort(4242, 3));
  EXPECT_EQ(detect(with(srun(), "SLURM_JOB_ID=4294967290")).rendezvous.port, slurmPort(4294967290, 0));
  EXPECT_EQ(detect(with(srun(), "SLURM_JOB_ID=312 SLURM_STEP_ID=19999")).rendezvous.port, slurmPort(312, 19999));
  LaunchInfo batch = detect(with(srun(), "SLURM_STEP_ID=batch"));
  EXPECT_EQ(batch.rendezvous.port, slurmPort(4242, 0));
  EXPECT_EQ(batch.jobToken, "slurm-4242.batch");
  LaunchInfo noStep = detect(with(srun(), "SLURM_STEP_ID="));
  EXPECT_EQ(noStep.rendezvous.port, slurmPort(4242, 0));
  EXPECT_EQ(noStep.jobToken, "slurm-4242.0");
}

TEST(DetectLaunch, SlurmFallbacksAndUnknownLocalSize) {
  Vars old =
      with(srun(), "SLURM_NTASKS= SLURM_JOB_ID= SLURM_STEP_NODELIST= SLURM_JOB_NODELIST= SLURM_STEP_TASKS_PER_NODE=");
  LaunchInfo info = detect(with(old, "SLURM_NODELIST=login1,cn[7-8] SLURM_TASKS_PER_NODE=3(x2),2 SLURM_NODEID=2"));
  EXPECT_EQ(info.nranks, 8);
  EXPECT_EQ(info.localSize, 2);
  EXPECT_EQ(info.rendezvous.host, "login1");
  EXPECT_EQ(info.jobToken, "slurm-4242.0");
  EXPECT_TRUE(hasNote(info, "nranks 8 from SLURM_NPROCS"));
  EXPECT_TRUE(hasNote(info, "localSize 2 from SLURM_TASKS_PER_NODE[SLURM_NODEID=2]"));
  EXPECT_TRUE(hasNote(info, "the first host of SLURM_NODELIST and SLURM_JOBID 4242"));
  EXPECT_EQ(detect(with(srun(), "SLURM_STEP_NODELIST= SLURM_JOB_NODELIST=x[3-4]")).rendezvous.host, "x3");

  LaunchInfo outside = detect(with(srun(), "SLURM_NODEID=2"));  // the list has 2 nodes
  expectLayout(outside, LauncherKind::Slurm, 5, 8, 1, 0);
  EXPECT_TRUE(hasNote(outside, "localSize unknown (no SLURM_STEP_TASKS_PER_NODE[SLURM_NODEID=2])"));
  EXPECT_EQ(detect(with(srun(), "SLURM_STEP_TASKS_PER_NODE= SLURM_TASKS_PER_NODE=")).localSize, 0);
  EXPECT_EQ(detect(with(srun(), "SLURM_NODEID=")).localSize, 0);

  EXPECT_EQ(detect(with(srun(), "MASTER_ADDR=head MASTER_PORT=1234")).rendezvous.describe(), "tcp://head:1234");
  EXPECT_EQ(detect(with(srun(), "MASTER_ADDR=head")).rendezvous.describe(), "tcp://head:21488");
  // MASTER_PORT makes the job id unnecessary; the token is then unknown.
  info = detect(with(srun(), "SLURM_JOB_ID= SLURM_JOBID= MASTER_PORT=1234"));
  EXPECT_EQ(info.rendezvous.describe(), "tcp://node01:1234");
  EXPECT_EQ(info.jobToken, "");
}

TEST(DetectLaunch, MpirunOnOneHostUsesAFile) {
  LaunchInfo info = detect(mpirun());
  expectLayout(info, LauncherKind::OpenMpi, 2, 4, 2, 4);
  EXPECT_EQ(info.rendezvous.describe(), "file:///tmp/braid-rendezvous-3621650433");
  EXPECT_EQ(info.jobToken, "ompi-3621650433");
  EXPECT_TRUE(hasNote(info, "named after OMPI_MCA_ess_base_jobid"));
  // Open MPI 5 (PRRTE) names the job only in PMIX_NAMESPACE, in characters unfit for a file name.
  info = detect(with(mpirun(), Vars{{"OMPI_MCA_ess_base_jobid", ""}, {"PMIX_NAMESPACE", "prterun-n 01-99@1/x"}}));
  EXPECT_EQ(info.rendezvous.path, "/tmp/braid-rendezvous-prterun-n_01-99_1_x");
  EXPECT_EQ(info.jobToken, "ompi-prterun-n 01-99@1/x");
  info = detect(with(mpirun(), "OMPI_MCA_ess_base_jobid= PMIX_NAMESPACE="));
  EXPECT_EQ(info.rendezvous.path, "/tmp/braid-rendezvous-ppid4321");
  EXPECT_EQ(info.jobToken, "");
}

TEST(DetectLaunch, MpiexecOnOneHostUsesAFile) {
  LaunchInfo info = detect(mpiexec());
  expectLayout(info, LauncherKind::Mpich, 1, 2, 1, 2);
  EXPECT_EQ(info.rendezvous.describe(), "file:///tmp/braid-rendezvous-kvs_9876_0");
  EXPECT_EQ(info.jobToken, "mpich-kvs_9876_0");
  info = detect(with(mpiexec(), "PMI_KVSNAME="));
  EXPECT_EQ(info.rendezvous.path, "/tmp/braid-rendezvous-ppid4321");
  EXPECT_EQ(info.jobToken, "");
}

TEST(DetectLaunch, MpiAcrossHostsNeedsMasterAddr) {
  const char* advice = "mpirun -x MASTER_ADDR=$(hostname) -x MASTER_PORT=29500";
  Vars multiHost = with(mpirun(), "OMPI_COMM_WORLD_SIZE=8");
  expectError(multiHost, {"mpirun/mpiexec do not say where rank 0 runs", advice, "BRAID_RENDEZVOUS=file:///"});
  expectError(with(mpirun(), "OMPI_COMM_WORLD_LOCAL_SIZE= OMPI_COMM_WORLD_LOCAL_RANK="), {advice});
  expectError(with(mpiexec(), "PMI_SIZE=4"), {advice});
  EXPECT_EQ(detect(with(multiHost, "MASTER_ADDR=node01")).rendezvous.describe(), "tcp://node01:29500");
  EXPECT_EQ(detect(with(multiHost, "MASTER_ADDR=n1 MASTER_PORT=29600")).rendezvous.describe(), "tcp://n1:29600");
  EXPECT_EQ(detect(with(mpiexec(), "MASTER_ADDR=n1 PMI_SIZE=4")).rendezvous.describe(), "tcp://n1:29500");
}

TEST(DetectLaunch, LaunchersInsideASlurmAllocationWin) {
  EXPECT_EQ(detect(with(sbatch(), torchrun())).launcher, LauncherKind::Torchrun);
  EXPECT_EQ(detect(with(sbatch(), braidrun())).launcher, LauncherKind::Braidrun);
  EXPECT_EQ(detect(with(sbatch(), mpirun())).launcher, LauncherKind::OpenMpi);
  EXPECT_EQ(detect(with(sbatch(), mpiexec())).launcher, LauncherKind::Mpich);
  EXPECT_EQ(detect(with(sbatch(), "RANK=0 WORLD_SIZE=2 MASTER_ADDR=gpu1")).launcher, LauncherKind::Generic);
  LaunchInfo plain = detect(with(sbatch(), "RANK=3"));  // RANK alone is no launcher
  EXPECT_EQ(plain.launcher, LauncherKind::Slurm);
  EXPECT_EQ(plain.rendezvous.describe(), "tcp://gpu1:" + std::to_string(slurmPort(777, 0)));
  EXPECT_EQ(plain.jobToken, "slurm-777.0");
}

TEST(DetectLaunch, BraidLauncherForcesTheKind) {
  LaunchInfo info = detect(with(with(srun(), torchrun()), "BRAID_LAUNCHER=SLURM"));
  EXPECT_EQ(info.launcher, LauncherKind::Slurm);
  EXPECT_EQ(info.notes[0], "launcher slurm forced by BRAID_LAUNCHER");
  info = detect(with(torchrun(), "BRAID_LAUNCHER=env"));
  EXPECT_EQ(info.launcher, LauncherKind::Generic);
  EXPECT_EQ(info.rendezvous.port, 29500);  // no agent store outside torchrun
  info = detect(with(torchrun(), "TORCHELASTIC_RUN_ID= MASTER_PORT= BRAID_LAUNCHER=TorchRun"));
  EXPECT_EQ(info.launcher, LauncherKind::Torchrun);
  EXPECT_EQ(info.rendezvous.port, 29501);
  EXPECT_EQ(info.jobToken, "");
  EXPECT_EQ(detect(with(mpirun(), "BRAID_LAUNCHER=openmpi")).launcher, LauncherKind::OpenMpi);
  EXPECT_EQ(detect(with(mpiexec(), "BRAID_LAUNCHER=MPICH")).launcher, LauncherKind::Mpich);
  EXPECT_EQ(detect(with(braidrun(), "BRAID_LAUNCHER=braidrun")).launcher, LauncherKind::Braidrun);
  expectError(with(torchrun(), "BRAID_LAUNCHER=pbs"),
              {"BRAID_LAUNCHER=\"pbs\" is unknown", "braidrun, torchrun, slurm, openmpi, mpich or env"});
  expectError(with(torchrun(), "BRAID_LAUNCHER=slurm"), {"the launcher is slurm but SLURM_PROCID is not set"});
}

TEST(DetectLaunch, NoLauncher) {
  const char* expected = "no launcher environment found: expected torchrun/braidrun (RANK, WORLD_SIZE, MASTER_ADDR)";
  expectError({}, {expected, "or set BRAID_LAUNCHER"});
  expectError(parse("RANK=0 WORLD_SIZE= HOME=/root"), {expected, "only one of RANK and WORLD_SIZE"});
  expectError(parse("WORLD_SIZE=2"), {expected});
}

TEST(DetectLaunch, RankLayoutErrors) {
  for (const char* bad : {"3x", " 3", "0x3", "+3", "3.0", "99999999999"}) {
    expectError(with(torchrun(), Vars{{"RANK", bad}}), {"RANK=\"" + std::string(bad) + "\" is not a decimal integer"});
  }
  expectError(with(torchrun(), "RANK=16"), {"RANK=16 is not below WORLD_SIZE=16"});
  expectError(with(torchrun(), "RANK=-1"), {"RANK=-1 is negative"});
  expectError(with(torchrun(), "RANK=0 WORLD_SIZE=0"), {"WORLD_SIZE=0: the number of ranks must be at least 1"});
  expectError(with(torchrun(), "LOCAL_RANK=8"), {"LOCAL_RANK=8 is not below LOCAL_WORLD_SIZE=8"});
  expectError(with(torchrun(), "LOCAL_RANK=-2"), {"LOCAL_RANK=-2 is negative"});
  expectError(with(torchrun(), "LOCAL_WORLD_SIZE=0"), {"LOCAL_RANK=1 is not below LOCAL_WORLD_SIZE=0"});
  expectError(with(torchrun(), "LOCAL_WORLD_SIZE=17"), {"LOCAL_WORLD_SIZE=17 exceeds WORLD_SIZE=16"});
  expectError(with(torchrun(), "LOCAL_RANK="), {"LOCAL_WORLD_SIZE=8 is set but LOCAL_RANK is not"});
  expectError(with(torchrun(), "LOCAL_WORLD_SIZE= LOCAL_RANK=16"), {"LOCAL_RANK=16 is not below WORLD"});
  expectError(with(torchrun(), "LOCAL_WORLD_SIZE=eight"), {"LOCAL_WORLD_SIZE=\"eight\""});
  expectError(with(braidrun(), "RANK="), {"the launcher is braidrun but RANK is not set"});
  expectError(with(braidrun(), "WORLD_SIZE="), {"RANK=2 is set but WORLD_SIZE is not"});
  expectError(with(srun(), "SLURM_NTASKS= SLURM_NPROCS="), {"SLURM_PROCID=5 is set but SLURM_NTASKS"});
  expectError(with(srun(), "SLURM_LOCALID=4"), {"SLURM_LOCALID=4 is not below SLURM_STEP_TASKS_PER_NODE"});
  expectError(with(srun(), "SLURM_NODEID=one"), {"SLURM_NODEID=\"one\""});
  expectError(with(srun(), "SLURM_STEP_TASKS_PER_NODE=4(x2"), {"SLURM_STEP_TASKS_PER_NODE: ", "\"4(x2\""});
  expectError(with(mpirun(), "OMPI_COMM_WORLD_SIZE="), {"OMPI_COMM_WORLD_RANK=2 is set but OMPI_COMM_WORLD_SIZE"});
  expectError(with(mpiexec(), "PMI_SIZE="), {"PMI_RANK=1 is set but PMI_SIZE is not"});
  expectError(with(mpiexec(), "MPI_LOCALNRANKS=3"), {"MPI_LOCALNRANKS=3 exceeds PMI_SIZE=2"});
}

TEST(DetectLaunch, RendezvousErrors) {
  expectError(with(torchrun(), "MASTER_ADDR="), {"MASTER_ADDR is not set", "torchrun and braidrun set it", "hand"});
  for (const char* bad : {"0", "65536", "http", "-1", "29500 "}) {
    expectError(with(braidrun(), Vars{{"MASTER_PORT", bad}}), {"MASTER_PORT=\"" + std::string(bad) + "\"", "1..65535"});
  }
  expectError(with(srun(), "SLURM_STEP_NODELIST= SLURM_JOB_NODELIST= SLURM_NODELIST="),
              {"none of SLURM_STEP_NODELIST, SLURM_JOB_NODELIST, SLURM_NODELIST is set", "MASTER_ADDR"});
  expectError(with(srun(), "SLURM_STEP_NODELIST=node[01-02"), {"SLURM_STEP_NODELIST: ", "\"node[01-02\""});
  expectError(with(srun(), "SLURM_JOB_ID= SLURM_JOBID="), {"SLURM_JOB_ID (or SLURM_JOBID) is not set"});
  expectError(with(srun(), "SLURM_JOB_ID=42_7"), {"not a number: 42_7", "set MASTER_PORT"});
}

TEST(DetectLaunch, BraidRendezvousOverridesTheLauncher) {
  Vars multiHost = with(mpirun(), "OMPI_COMM_WORLD_SIZE=8");
  LaunchInfo info = detect(with(multiHost, "BRAID_RENDEZVOUS=tcp://node01:5000"));
  EXPECT_EQ(info.rendezvous.describe(), "tcp://node01:5000");
  EXPECT_TRUE(hasNote(info, "rendezvous tcp://node01:5000 from BRAID_RENDEZVOUS"));
  info = detect(with(multiHost, Vars{{"BRAID_RENDEZVOUS", "file:///shared/jobs/run 7"}}));
  EXPECT_EQ(info.rendezvous.kind, RendezvousPoint::Kind::File);
  EXPECT_EQ(info.rendezvous.path, "/shared/jobs/run 7");
  info = detect(with(srun(), "SLURM_JOB_ID= SLURM_JOBID= BRAID_RENDEZVOUS=TCP://10.0.0.1:80"));
  EXPECT_EQ(info.rendezvous.describe(), "tcp://10.0.0.1:80");
  info = detect(with(torchrun(), "BRAID_RENDEZVOUS=tcp://[fe80::1]:65535"));  // no +1: the point is given
  EXPECT_EQ(info.rendezvous.host, "fe80::1");
  EXPECT_EQ(info.rendezvous.port, 65535);
}

TEST(DetectLaunch, BadBraidRendezvous) {
  for (const char* bad : {"node01:5000", "tcp://node01", "tcp://node01:0", "tcp://node01:65536", "tcp://:5000",
                          "tcp://fe80::1:5000", "tcp://[fe80::1:5000", "tcp://[fe80::1]", "tcp://a/b:5",
                          "tcp://node01:5x", "file://relative/path", "file:///", "file://", "http://node01:80"}) {
    expectError(with(torchrun(), Vars{{"BRAID_RENDEZVOUS", bad}}),
                {"BRAID_RENDEZVOUS=\"" + std::string(bad) + "\"", "tcp://HOST:PORT", "file:///ABSOLUTE/PATH"});
  }
}

TEST(DetectLaunch, BraidRendezvousPort) {
  LaunchInfo info = detect(with(torchrun(), "BRAID_RENDEZVOUS_PORT=40000"));
  EXPECT_EQ(info.rendezvous.describe(), "tcp://node01:40000");
  EXPECT_TRUE(hasNote(info, "; port from BRAID_RENDEZVOUS_PORT"));
  EXPECT_EQ(detect(with(srun(), "BRAID_RENDEZVOUS_PORT=1")).rendezvous.port, 1);
  info = detect(with(srun(), "BRAID_RENDEZVOUS=tcp://h:9 BRAID_RENDEZVOUS_PORT=10"));
  EXPECT_EQ(info.rendezvous.describe(), "tcp://h:10");
  info = detect(with(mpirun(), "BRAID_RENDEZVOUS_PORT=40000"));
  EXPECT_EQ(info.rendezvous.kind, RendezvousPoint::Kind::File);
  EXPECT_TRUE(hasNote(info, "BRAID_RENDEZVOUS_PORT ignored"));
  for (const char* bad : {"0", "70000", "port"}) {
    expectError(with(torchrun(), Vars{{"BRAID_RENDEZVOUS_PORT", bad}}), {"BRAID_RENDEZVOUS_PORT=\"", "1..65535"});
  }
}

TEST(DetectLaunch, BraidJobTokenOverrides) {
  for (const Vars& env :
       {torchrun(), srun(), mpirun(), mpiexec(), braidrun(), parse("RANK=0 WORLD_SIZE=1 MASTER_ADDR=h")}) {
    LaunchInfo info = detect(with(env, Vars{{"BRAID_JOB_TOKEN", "my job"}}));
    EXPECT_EQ(info.jobToken, "my job");
    EXPECT_EQ(info.notes.back(), "jobToken my job from BRAID_JOB_TOKEN");
  }
  // The file rendezvous keeps the launcher's name for it, which every rank sees alike.
  EXPECT_EQ(detect(with(mpirun(), "BRAID_JOB_TOKEN=t")).rendezvous.path, "/tmp/braid-rendezvous-3621650433");
}

}  // namespace
}  // namespace braid
