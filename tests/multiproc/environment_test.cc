// What users control through the environment, observed from real processes: the log
// format and destination, configuration files, malformed values, interface choice.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "multiproc_util.h"

namespace braid::test {
namespace {

// args: id, nranks. Prints the init result.
BRAID_CHILD_SCENARIO(init_and_report) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int nranks = std::atoi(ctx.args[1].c_str());
  ncclComm_t comm = nullptr;
  ncclResult_t result = ncclCommInitRank(&comm, nranks, id, ctx.index);
  std::printf("RESULT %d\nMESSAGE %s\n", result, ncclGetLastError(nullptr));
  if (comm) ncclCommDestroy(comm);
  return result == ncclSuccess ? 0 : 10;
}

// A child that makes its own id (so the root runs under the child's environment).
BRAID_CHILD_SCENARIO(own_id_and_report) {
  ncclUniqueId id{};
  ncclResult_t result = ncclGetUniqueId(&id);
  ncclComm_t comm = nullptr;
  if (result == ncclSuccess) result = ncclCommInitRank(&comm, 1, id, 0);
  std::printf("RESULT %d\nMESSAGE %s\n", result, ncclGetLastError(nullptr));
  if (comm) ncclCommDestroy(comm);
  return result == ncclSuccess ? 0 : 10;
}

std::vector<ChildResult> runWithEnv(const std::string& scenario, int n, const std::vector<std::string>& args,
                                    std::map<std::string, std::string> env) {
  return runScenario(scenario, n, args, 60, [&](int) { return env; });
}

TEST(Environment, InfoLinesFollowNcclsFormat) {
  auto results = runWithEnv("init_and_report", 2, {idToArg(freshId()), "2"}, {{"NCCL_DEBUG", "INFO"}});
  expectAllSucceeded(results);
  // host:pid:tid [rank] NCCL INFO ...
  auto isInfoLine = [](const std::string& line) {
    size_t first = line.find(':'), second = line.find(':', first + 1), space = line.find(' ');
    if (first == std::string::npos || second == std::string::npos || space < second) return false;
    std::string pid = line.substr(first + 1, second - first - 1), tid = line.substr(second + 1, space - second - 1);
    auto numeric = [](const std::string& t) { return !t.empty() && t.find_first_not_of("0123456789") == t.npos; };
    return numeric(pid) && numeric(tid) && line.compare(space, 15, " [1] NCCL INFO ") == 0 &&
           line.find("Init COMPLETE") != std::string::npos;
  };
  bool found = false;
  std::istringstream lines(results[1].output);
  for (std::string line; std::getline(lines, line);) found |= isInfoLine(line);
  EXPECT_TRUE(found) << results[1].output;
  EXPECT_NE(results[0].output.find("NCCL INFO Bootstrap: using "), std::string::npos) << results[0].output;
  EXPECT_NE(results[0].output.find("nNodes 1 localRanks 2 localRank 0"), std::string::npos);
}

// The "NCCL version" line names the level ncclGetVersion reports (which users compare
// with what their framework was built against), not nccl.h's lower API level.
TEST(Environment, VersionLineMatchesNcclGetVersion) {
  auto results = runWithEnv("init_and_report", 1, {idToArg(freshId()), "1"}, {{"NCCL_DEBUG", "VERSION"}});
  expectAllSucceeded(results);
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  const std::string expected = "NCCL version " + std::to_string(version / 10000) + "." +
                               std::to_string(version / 100 % 100) + "." + std::to_string(version % 100) + "+braid";
  EXPECT_NE(results[0].output.find(expected), std::string::npos) << expected << "\n" << results[0].output;
}

TEST(Environment, SubsystemFilter) {
  auto results = runWithEnv("init_and_report", 1, {idToArg(freshId()), "1"},
                            {{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "^BOOTSTRAP"}});
  expectAllSucceeded(results);
  EXPECT_EQ(results[0].output.find("Bootstrap: using"), std::string::npos) << results[0].output;
  EXPECT_NE(results[0].output.find("Init COMPLETE"), std::string::npos) << results[0].output;
}

TEST(Environment, DebugFileWithHostAndPid) {
  char dir[] = "/tmp/braid-logs-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string pattern = std::string(dir) + "/nccl.%h.%p.log";
  auto results = runWithEnv("init_and_report", 2, {idToArg(freshId()), "2"},
                            {{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_FILE", pattern}});
  expectAllSucceeded(results);
  int files = 0;
  for (const auto& r : results) EXPECT_EQ(r.output.find("NCCL INFO"), std::string::npos) << r.output;
  std::string listing;
  FILE* ls = popen((std::string("ls ") + dir).c_str(), "r");
  char name[512];
  while (fgets(name, sizeof(name), ls)) {
    std::string file = std::string(dir) + "/" + std::string(name, strcspn(name, "\n"));
    EXPECT_NE(readFile(file).find("Init COMPLETE"), std::string::npos) << file;
    EXPECT_NE(file.find(".log"), std::string::npos);
    ++files;
    std::remove(file.c_str());
  }
  pclose(ls);
  rmdir(dir);
  EXPECT_EQ(files, 2);
}

TEST(Environment, ConfigurationFileIsRead) {
  char path[] = "/tmp/braid-nccl-conf-XXXXXX";
  int fd = mkstemp(path);
  const char text[] = "# cluster defaults\nNCCL_DEBUG=INFO\nNCCL_DEBUG_SUBSYS=INIT\n";
  ASSERT_EQ(write(fd, text, sizeof(text) - 1), static_cast<ssize_t>(sizeof(text) - 1));
  close(fd);
  auto results = runWithEnv("init_and_report", 1, {idToArg(freshId()), "1"}, {{"NCCL_CONF_FILE", path}});
  std::remove(path);
  expectAllSucceeded(results);
  EXPECT_NE(results[0].output.find("Init COMPLETE"), std::string::npos) << results[0].output;
}

TEST(Environment, MalformedValuesAreReportedAndDefaultsUsed) {
  auto results = runWithEnv("own_id_and_report", 1, {},
                            {{"NCCL_DEBUG", "WARN"},
                             {"BRAID_BOOTSTRAP_TIMEOUT", "soon"},
                             {"NCCL_SOCKET_FAMILY", "AF_CARRIER_PIGEON"},
                             {"NCCL_COMM_BLOCKING", "2"}});
  expectAllSucceeded(results);
  const std::string& out = results[0].output;
  EXPECT_NE(out.find("BRAID_BOOTSTRAP_TIMEOUT=soon is not an integer; using the default 300"), std::string::npos)
      << out;
  EXPECT_NE(out.find("NCCL_SOCKET_FAMILY=AF_CARRIER_PIGEON is not AF_INET or AF_INET6"), std::string::npos) << out;
  EXPECT_NE(out.find("NCCL_COMM_BLOCKING=2 is outside [0, 1]"), std::string::npos) << out;
}

TEST(Environment, UnknownDebugLevelFallsBackToWarn) {
  auto results = runWithEnv("own_id_and_report", 1, {}, {{"NCCL_DEBUG", "LOUD"}});
  expectAllSucceeded(results);
  EXPECT_NE(results[0].output.find("NCCL_DEBUG=LOUD is not one of"), std::string::npos) << results[0].output;
}

TEST(Environment, SocketIfnameSelectsTheInterface) {
  auto results = runWithEnv("own_id_and_report", 1, {}, {{"NCCL_DEBUG", "INFO"}, {"NCCL_SOCKET_IFNAME", "=lo"}});
  expectAllSucceeded(results);
  EXPECT_NE(results[0].output.find("Bootstrap: using lo (127.0.0.1"), std::string::npos) << results[0].output;
  EXPECT_NE(results[0].output.find("first match of NCCL_SOCKET_IFNAME==lo"), std::string::npos);
}

TEST(Environment, SocketIfnameMatchingNothingIsAClearError) {
  auto results = runWithEnv("own_id_and_report", 1, {}, {{"NCCL_SOCKET_IFNAME", "eht9"}});
  ASSERT_EQ(results[0].exitCode, 10) << results[0].describe();
  const std::string& out = results[0].output;
  EXPECT_NE(out.find("RESULT 4"), std::string::npos) << out;  // ncclInvalidArgument
  EXPECT_NE(out.find("NCCL_SOCKET_IFNAME=eht9 (names starting with eht9) matches no usable network interface"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("lo (127.0.0.1, loopback)"), std::string::npos) << out;
}

}  // namespace
}  // namespace braid::test
