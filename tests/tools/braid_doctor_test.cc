// braid-doctor end to end under braidrun: the hello lines, every report section, the
// verdict and exit status, --json that parses, and the contradictions the launcher
// section must name (two ranks claiming one local rank, Slurm's NoDevFiles, a world size
// larger than the ranks started) within a bounded time.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "run_command.h"
#include "text_assertions.h"

namespace braid::test {
namespace {

using test::contains;

using Args = std::vector<std::string>;

// braidrun -n np braid-doctor args; `shellPrefix` (e.g. "LOCAL_RANK=0") is set in each
// rank's environment through /bin/sh, after braidrun's own variables.
CommandResult doctor(int np, const Args& args = {}, const std::string& shellPrefix = "", double limitSec = 120) {
  Args argv = {BRAIDRUN_PATH, "-n", std::to_string(np)};
  if (shellPrefix.empty()) {
    argv.push_back(BRAID_DOCTOR_PATH);
    argv.insert(argv.end(), args.begin(), args.end());
  } else {
    argv.insert(argv.end(), {"/bin/sh", "-c", shellPrefix + " exec \"$0\" \"$@\"", BRAID_DOCTOR_PATH});
    argv.insert(argv.end(), args.begin(), args.end());
  }
  return runCommand(argv, limitSec);
}

// braidrun prefixes each line with "[rank] ": rank 0's lines without the prefix.
std::string rankOutput(const std::string& out, int rank) {
  std::string prefix = "[" + std::to_string(rank) + "] ", text;
  for (const std::string& line : splitLines(out)) {
    if (line.rfind(prefix, 0) == 0) text += line.substr(prefix.size()) + "\n";
  }
  return text;
}

void expectHealthyRun(int np) {
  CommandResult r = doctor(np);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::set<int> hellos;
  for (const std::string& line : splitLines(r.out)) {
    if (!contains(line, "hello from rank ")) continue;
    int rank = std::stoi(line.substr(1));
    hellos.insert(rank);
    EXPECT_TRUE(contains(line, "hello from rank " + std::to_string(rank) + "/" + std::to_string(np) + " (local rank " +
                                   std::to_string(rank) + "/" + std::to_string(np) + ") on "))
        << line;
    EXPECT_TRUE(contains(line, ", device host, launcher braidrun")) << line;
  }
  EXPECT_EQ(hellos.size(), static_cast<size_t>(np)) << r.out;
  std::string report = rankOutput(r.out, 0);
  for (const char* part : {"== Launcher ==", "braidrun detected", "LOCAL_WORLD_SIZE=", "rank 0 from RANK",
                           "== Network (per host) ==", "chosen for bootstrap and sockets", "why: ", "== Reachability",
                           " failed, ", "== Topology and channels ==", "Topology from", "SHM bandwidth: ranks 0 -> 1",
                           "all-reduce 16777216 bytes (float sum): results correct", "busBw", "Verdict: OK"}) {
    EXPECT_TRUE(contains(report, part)) << part << "\n" << report;
  }
  EXPECT_TRUE(contains(report, " connected, 0 failed")) << report;
  // The report is rank 0's alone.
  EXPECT_FALSE(contains(rankOutput(r.out, 1), "Verdict")) << r.out;
}

TEST(BraidDoctor, TwoRanksPassAndReport) { expectHealthyRun(2); }

TEST(BraidDoctor, ThreeRanksPassAndReport) { expectHealthyRun(3); }

TEST(BraidDoctor, JsonParsesAndHasEverySection) {
  CommandResult r = doctor(3, {"--json"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  // The hello lines go to stderr so that stdout is one document.
  EXPECT_TRUE(contains(r.err, "hello from rank 2/3")) << r.err;
  std::string json = rankOutput(r.out, 0);
  ASSERT_EQ(json.front(), '{') << json;
  EXPECT_TRUE(rankOutput(r.out, 1).empty()) << r.out;
  char path[] = "/tmp/braid-doctor-json-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << json;
  // Python's json module is the reference parser; the check prints what the test asserts.
  CommandResult parsed =
      runCommand({"python3", "-c",
                  "import json,sys\n"
                  "d=json.load(open(sys.argv[1]))\n"
                  "print(d['verdict']['status'], d['ranks'], len(d['hello']), d['bandwidth']['allreduce']['correct'],\n"
                  "      len(d['bandwidth']['pairs']), d['reachability']['connected'] > 0, sorted(d))",
                  path});
  unlink(path);
  if (parsed.exitCode != 0 && contains(parsed.err, "No such file")) GTEST_SKIP() << "python3 is not installed";
  ASSERT_EQ(parsed.exitCode, 0) << parsed.describe() << "\n" << json;
  EXPECT_EQ(parsed.out,
            "OK 3 3 True 3 True ['bandwidth', 'braid_version', 'exit_status', 'hello', 'launcher', 'network', "
            "'ranks', 'reachability', 'tool', 'topology', 'verdict']\n")
      << json;
}

// Two doctors started side by side by /bin/sh with the variables a launcher would set:
// `envOf(rank)` is "NAME=value ..." for that rank. Every launcher variable of the test's
// own environment is removed first. Returns rank 0's and rank 1's output.
std::vector<std::string> runAsLauncher(const std::function<std::string(int)>& envOf, CommandResult* result) {
  char dir[] = "/tmp/braid-doctor-launcher-XXXXXX";
  if (!mkdtemp(dir)) return {};
  std::string clean =
      "env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u BRAIDRUN_JOB_ID "
      "-u SLURM_PROCID -u SLURM_JOB_ID -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u TORCHELASTIC_RUN_ID "
      "-u BRAID_RENDEZVOUS -u BRAID_LAUNCHER ";
  std::string script;
  for (int rank = 0; rank < 2; ++rank) {
    script += clean + envOf(rank) + " " + BRAID_DOCTOR_PATH + " --timeout 60 >" + dir + "/" + std::to_string(rank) +
              ".out 2>&1 & ";
  }
  script += "wait";
  *result = runCommand({"/bin/sh", "-c", script}, 90);
  std::vector<std::string> outputs;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(std::string(dir) + "/" + std::to_string(rank) + ".out");
    outputs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  runCommand({"rm", "-rf", dir});
  return outputs;
}

TEST(BraidDoctor, UnderSlurmVariables) {
  // What srun -N 1 -n 2 sets, on one node.
  CommandResult r;
  std::vector<std::string> out = runAsLauncher(
      [](int rank) {
        // The job id varies per run so that the port derived from it does too.
        return "SLURM_JOB_ID=" + std::to_string(getpid()) + " SLURM_STEP_ID=0 SLURM_PROCID=" + std::to_string(rank) +
               " SLURM_NTASKS=2 SLURM_LOCALID=" + std::to_string(rank) +
               " SLURM_NODEID=0 SLURM_NNODES=1 SLURM_STEP_TASKS_PER_NODE=2 SLURM_STEP_NODELIST=127.0.0.1";
      },
      &r);
  ASSERT_EQ(out.size(), 2u) << r.describe();
  EXPECT_TRUE(contains(out[1], "hello from rank 1/2 (local rank 1/2) on ")) << out[1];
  EXPECT_TRUE(contains(out[1], "launcher slurm")) << out[1];
  EXPECT_TRUE(contains(out[0], "rank 0 from SLURM_PROCID")) << out[0];
  EXPECT_TRUE(contains(out[0], "SLURM_STEP_TASKS_PER_NODE=2")) << out[0];
  EXPECT_TRUE(contains(out[0], "Verdict: OK")) << out[0];
}

TEST(BraidDoctor, UnderOpenMpiVariables) {
  // What mpirun -np 2 sets on one host: no rank-0 address, so a file rendezvous named
  // after the common parent process (this test's shell).
  CommandResult r;
  std::vector<std::string> out = runAsLauncher(
      [](int rank) {
        return "OMPI_COMM_WORLD_RANK=" + std::to_string(rank) +
               " OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=" + std::to_string(rank) +
               " OMPI_COMM_WORLD_LOCAL_SIZE=2";
      },
      &r);
  ASSERT_EQ(out.size(), 2u) << r.describe();
  EXPECT_TRUE(contains(out[0], "hello from rank 0/2 (local rank 0/2) on ")) << out[0];
  EXPECT_TRUE(contains(out[0], "launcher openmpi")) << out[0];
  EXPECT_TRUE(contains(out[0], "rendezvous file://")) << out[0];
  EXPECT_TRUE(contains(out[0], "Verdict: OK")) << out[0];
}

TEST(BraidDoctor, TwoRanksClaimingOneLocalRankIsAnError) {
  CommandResult r = doctor(2, {}, "LOCAL_RANK=0");
  EXPECT_EQ(r.exitCode, 2) << r.describe();
  std::string report = rankOutput(r.out, 0);
  EXPECT_TRUE(contains(report, "ERROR [launcher] ranks 0,1 on host 0")) << report;
  EXPECT_TRUE(contains(report, "all claim local rank 0")) << report;
  EXPECT_TRUE(contains(report, "fix: let the launcher set the local rank")) << report;
  EXPECT_TRUE(contains(report, "Verdict: ERROR")) << report;
}

TEST(BraidDoctor, SlurmWithoutGpusIsAWarningWithTheGresFlag) {
  CommandResult r = doctor(2, {}, "CUDA_VISIBLE_DEVICES=NoDevFiles");
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  std::string report = rankOutput(r.out, 0);
  EXPECT_TRUE(contains(report, "WARN [launcher] rank 0: CUDA_VISIBLE_DEVICES=NoDevFiles")) << report;
  EXPECT_TRUE(contains(report, "--gres=gpu:")) << report;
}

TEST(BraidDoctor, SharedAndDuplicatedDevicesAreNamed) {
  CommandResult r = doctor(2, {}, "CUDA_VISIBLE_DEVICES=0,0");
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  std::string report = rankOutput(r.out, 0);
  EXPECT_TRUE(contains(report, "CUDA_VISIBLE_DEVICES=0,0 lists '0' twice")) << report;
}

TEST(BraidDoctor, MoreRanksThanGpusInTheTopologyIsAWarning) {
  // The topology file stands for a server with 4 GPUs; 5 ranks on it cannot each have one.
  std::string topo = std::string(BRAID_TOPO_FIXTURES) + "/pcie_4gpu_1nic.xml";
  CommandResult r = doctor(5, {"--allreduce-bytes", "65536"}, "NCCL_TOPO_FILE=" + topo);
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  std::string report = rankOutput(r.out, 0);
  EXPECT_TRUE(contains(report, "4 GPUs (sm 75)")) << report;
  // NCCL's form: the one searched ring used twice, ranks padded to three places.
  EXPECT_TRUE(contains(report, "Channel 00/02 :    0   1   2   3")) << report;
  EXPECT_TRUE(contains(report, "WARN [topology] 5 ranks on host 0 (")) << report;
  EXPECT_TRUE(contains(report, "fix: start one rank per GPU: srun --ntasks-per-node=4 --gres=gpu:4")) << report;
}

TEST(BraidDoctor, WorldSizeLargerThanTheRanksStartedFailsInBoundedTime) {
  // Two ranks started, three announced: the communicator cannot form. Each rank says so
  // and exits non-zero within the bootstrap timeout instead of waiting forever.
  CommandResult r = doctor(2, {}, "WORLD_SIZE=3 BRAID_BOOTSTRAP_TIMEOUT=3", 60);
  EXPECT_NE(r.exitCode, 0) << r.describe();
  EXPECT_FALSE(r.timedOut) << r.describe();
  EXPECT_LT(r.seconds, 30.0) << r.describe();
  EXPECT_TRUE(contains(r.err, "creating the communicator")) << r.describe();
  EXPECT_TRUE(contains(r.err, "ERROR [init]")) << r.describe();
  // The variable behind it is in each rank's explanation.
  EXPECT_TRUE(contains(r.err, "derived: nranks 3 from WORLD_SIZE")) << r.describe();
  EXPECT_TRUE(contains(r.err, "never joined")) << r.describe();
}

TEST(BraidDoctor, OverallTimeoutEndsTheRun) {
  // Rank 1 never starts the doctor: rank 0 waits in the bootstrap and the --timeout
  // watchdog ends it with status 3, naming the step.
  CommandResult r =
      runCommand({BRAIDRUN_PATH, "-n", "2", "/bin/sh", "-c",
                  "if [ \"$RANK\" = 0 ]; then exec \"$0\" --timeout 2; else sleep 8; fi", BRAID_DOCTOR_PATH},
                 60);
  EXPECT_TRUE(contains(r.err, "gave up after 2 s while creating the communicator")) << r.describe();
  EXPECT_LT(r.seconds, 30.0) << r.describe();
  EXPECT_NE(r.exitCode, 0) << r.describe();
}

TEST(BraidDoctor, BadOptionsAreUsageErrors) {
  CommandResult r = runCommand({BRAID_DOCTOR_PATH, "--nope"});
  EXPECT_EQ(r.exitCode, 2) << r.describe();
  EXPECT_TRUE(contains(r.err, "unknown option")) << r.describe();
  r = runCommand({BRAID_DOCTOR_PATH, "--help"});
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "exit status: 0 every check passed")) << r.describe();
}

}  // namespace
}  // namespace braid::test
