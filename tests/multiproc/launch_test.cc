// braidCommInitFromEnv under each launcher's environment, set as the launcher would set
// it, with real processes and the real rendezvous (TCP or file).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "braid/launch.h"
#include "multiproc_util.h"

namespace braid::test {
namespace {

// Variables of every launcher: cleared in children so the machine's own (a CI job under
// Slurm, say) cannot leak into a test.
const std::vector<std::string> kLauncherVariables = {"RANK",
                                                     "WORLD_SIZE",
                                                     "LOCAL_RANK",
                                                     "LOCAL_WORLD_SIZE",
                                                     "MASTER_ADDR",
                                                     "MASTER_PORT",
                                                     "TORCHELASTIC_RUN_ID",
                                                     "BRAIDRUN_JOB_ID",
                                                     "SLURM_PROCID",
                                                     "SLURM_NTASKS",
                                                     "SLURM_NPROCS",
                                                     "SLURM_LOCALID",
                                                     "SLURM_NODEID",
                                                     "SLURM_JOB_ID",
                                                     "SLURM_JOBID",
                                                     "SLURM_STEP_ID",
                                                     "SLURM_JOB_NODELIST",
                                                     "SLURM_STEP_NODELIST",
                                                     "SLURM_NODELIST",
                                                     "SLURM_TASKS_PER_NODE",
                                                     "SLURM_STEP_TASKS_PER_NODE",
                                                     "OMPI_COMM_WORLD_RANK",
                                                     "OMPI_COMM_WORLD_SIZE",
                                                     "OMPI_COMM_WORLD_LOCAL_RANK",
                                                     "OMPI_COMM_WORLD_LOCAL_SIZE",
                                                     "OMPI_MCA_ess_base_jobid",
                                                     "PMIX_NAMESPACE",
                                                     "PMI_RANK",
                                                     "PMI_SIZE",
                                                     "MPI_LOCALRANKID",
                                                     "MPI_LOCALNRANKS",
                                                     "PMI_KVSNAME",
                                                     "BRAID_LAUNCHER",
                                                     "BRAID_RENDEZVOUS",
                                                     "BRAID_RENDEZVOUS_PORT",
                                                     "BRAID_JOB_TOKEN",
                                                     "NCCL_COMM_ID"};

BRAID_CHILD_SCENARIO(init_from_env) {
  int expectedSize = std::atoi(ctx.args[0].c_str());
  std::string expectedLauncher = ctx.args[1];
  ncclComm_t comm = nullptr;
  braidLaunchInfo info{};
  CHILD_OK(braidCommInitFromEnv(&comm, nullptr, &info));
  int rank = -1, count = -1;
  CHILD_OK(ncclCommUserRank(comm, &rank));
  CHILD_OK(ncclCommCount(comm, &count));
  std::printf("rank %d/%d launcher %s local %d/%d rendezvous %s\n", rank, count, info.launcher, info.localRank,
              info.localSize, info.rendezvous);
  CHILD_CHECK(rank == info.rank && count == expectedSize && info.nranks == expectedSize);
  CHILD_CHECK(expectedLauncher == info.launcher);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

std::string randomToken() {
  std::random_device device;
  return std::to_string(device() % 1000000 + 1000);
}

std::vector<ChildResult> runLaunch(int n, const std::string& launcher,
                                   const std::function<std::map<std::string, std::string>(int)>& envFor) {
  std::vector<ChildSpec> specs(n);
  for (int i = 0; i < n; ++i) {
    specs[i].scenario = "init_from_env";
    specs[i].args = {std::to_string(n), launcher};
    specs[i].unsetEnv = kLauncherVariables;
    specs[i].env = envFor(i);
    specs[i].env["NCCL_DEBUG"] = "INFO";
    specs[i].env["BRAID_BOOTSTRAP_TIMEOUT"] = "20";
  }
  return runChildren(specs, 60);
}

TEST(Launch, Torchrun) {
  std::string port = std::to_string(freePort() - 1);  // braid uses MASTER_PORT+1 under torchrun
  std::string runId = "run" + randomToken();
  auto results = runLaunch(3, "torchrun", [&](int i) {
    return std::map<std::string, std::string>{
        {"RANK", std::to_string(i)},  {"WORLD_SIZE", "3"},   {"LOCAL_RANK", std::to_string(i)},
        {"LOCAL_WORLD_SIZE", "3"},    {"GROUP_RANK", "0"},   {"ROLE_RANK", std::to_string(i)},
        {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}, {"TORCHELASTIC_RUN_ID", runId}};
  });
  expectAllSucceeded(results);
  EXPECT_NE(results[0].output.find("Launcher: torchrun, rank 0 of 3"), std::string::npos) << results[0].output;
}

TEST(Launch, GenericRankVariables) {
  std::string port = std::to_string(freePort());
  auto results = runLaunch(2, "env", [&](int i) {
    return std::map<std::string, std::string>{
        {"RANK", std::to_string(i)}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "localhost"}, {"MASTER_PORT", port}};
  });
  expectAllSucceeded(results);
}

TEST(Launch, SlurmSrun) {
  // The port is derived from the job id; the host from the node list.
  std::string job = randomToken();
  auto results = runLaunch(4, "slurm", [&](int i) {
    return std::map<std::string, std::string>{{"SLURM_PROCID", std::to_string(i)},
                                              {"SLURM_NTASKS", "4"},
                                              {"SLURM_LOCALID", std::to_string(i)},
                                              {"SLURM_NODEID", "0"},
                                              {"SLURM_JOB_ID", job},
                                              {"SLURM_STEP_ID", "0"},
                                              {"SLURM_JOB_NODELIST", "localhost"},
                                              {"SLURM_STEP_NODELIST", "localhost"},
                                              {"SLURM_STEP_TASKS_PER_NODE", "4"},
                                              {"SLURM_TASKS_PER_NODE", "4"}};
  });
  expectAllSucceeded(results);
  EXPECT_NE(results[1].output.find("local 1/4"), std::string::npos) << results[1].output;
}

TEST(Launch, OpenMpiSingleHostUsesAFileRendezvous) {
  std::string job = randomToken();
  auto results = runLaunch(3, "openmpi", [&](int i) {
    return std::map<std::string, std::string>{{"OMPI_COMM_WORLD_RANK", std::to_string(i)},
                                              {"OMPI_COMM_WORLD_SIZE", "3"},
                                              {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(i)},
                                              {"OMPI_COMM_WORLD_LOCAL_SIZE", "3"},
                                              {"OMPI_MCA_ess_base_jobid", job}};
  });
  expectAllSucceeded(results);
  EXPECT_NE(results[0].output.find("file:///tmp/braid-rendezvous-"), std::string::npos) << results[0].output;
  // Rank 0 removes the file once every rank has joined.
  std::ifstream leftover("/tmp/braid-rendezvous-" + job);
  EXPECT_FALSE(leftover.good());
}

TEST(Launch, MpichHydra) {
  std::string port = std::to_string(freePort());
  auto results = runLaunch(2, "mpich", [&](int i) {
    return std::map<std::string, std::string>{{"PMI_RANK", std::to_string(i)},        {"PMI_SIZE", "2"},
                                              {"MPI_LOCALRANKID", std::to_string(i)}, {"MPI_LOCALNRANKS", "2"},
                                              {"MASTER_ADDR", "127.0.0.1"},           {"MASTER_PORT", port}};
  });
  expectAllSucceeded(results);
}

TEST(Launch, SharedFileIgnoresAStaleJobsFile) {
  std::string path = "/tmp/braid-test-rendezvous-" + randomToken();
  {
    // A previous job's file with another token: must never be used.
    std::ofstream stale(path);
    stale << "old-job\n" << std::string(256, 'a') << "\n";
  }
  std::string token = "job-" + randomToken();
  auto results = runLaunch(3, "env", [&](int i) {
    return std::map<std::string, std::string>{{"RANK", std::to_string(i)},
                                              {"WORLD_SIZE", "3"},
                                              {"BRAID_RENDEZVOUS", "file://" + path},
                                              {"BRAID_JOB_TOKEN", token}};
  });
  expectAllSucceeded(results);
  std::remove(path.c_str());
}

BRAID_CHILD_SCENARIO(init_from_env_fails) {
  ncclComm_t comm = nullptr;
  ncclResult_t result = braidCommInitFromEnv(&comm, nullptr, nullptr);
  std::printf("RESULT %d\nMESSAGE %s\n", result, ncclGetLastError(nullptr));
  return result == ncclSuccess ? 1 : 0;
}

TEST(Launch, MissingEnvironmentIsExplained) {
  ChildSpec spec;
  spec.scenario = "init_from_env_fails";
  spec.unsetEnv = kLauncherVariables;
  auto results = runChildren({spec}, 30);
  ASSERT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_NE(results[0].output.find("no launcher environment found"), std::string::npos) << results[0].output;
}

TEST(Launch, MultiHostMpirunWithoutMasterAddrIsExplained) {
  ChildSpec spec;
  spec.scenario = "init_from_env_fails";
  spec.unsetEnv = kLauncherVariables;
  spec.env = {{"OMPI_COMM_WORLD_RANK", "1"},
              {"OMPI_COMM_WORLD_SIZE", "4"},
              {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
              {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}};
  auto results = runChildren({spec}, 30);
  ASSERT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_NE(results[0].output.find("MASTER_ADDR"), std::string::npos) << results[0].output;
}

}  // namespace
}  // namespace braid::test
