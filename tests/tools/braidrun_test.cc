// End-to-end runs of the braidrun binary over small /bin/sh scripts.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "run_command.h"
#include "text_assertions.h"

namespace braid::test {
namespace {

using test::contains;

using Args = std::vector<std::string>;

// Runs braidrun with `args`.
CommandResult braidrun(const Args& args) {
  Args argv = {BRAIDRUN_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand(argv);
}

// Runs `script` with /bin/sh in `np` ranks; `options` go before the program.
CommandResult runScript(int np, const std::string& script, const Args& options = {}) {
  Args args = {"-n", std::to_string(np)};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"/bin/sh", "-c", script});
  return braidrun(args);
}

TEST(Braidrun, RanksGetTheirVariablesAndPrefixedOutput) {
  CommandResult r = runScript(3,
                              "echo \"rank=$RANK world=$WORLD_SIZE local=$LOCAL_RANK lws=$LOCAL_WORLD_SIZE "
                              "group=$GROUP_RANK role=$ROLE_RANK/$ROLE_WORLD_SIZE addr=$MASTER_ADDR port=$MASTER_PORT "
                              "job=$BRAIDRUN_JOB_ID\"");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::vector<std::string> lines = splitLines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.describe();
  std::set<std::string> ranks;
  std::set<std::string> ports;
  std::set<std::string> jobs;
  for (const std::string& line : lines) {
    // The port and job id vary; everything else is fixed by the line's rank.
    size_t portAt = line.find(" port=");
    size_t jobAt = line.find(" job=");
    ASSERT_TRUE(line.size() > 4 && portAt != std::string::npos && jobAt != std::string::npos) << line;
    std::string rank = line.substr(1, 1);
    std::string port = line.substr(portAt + 6, jobAt - portAt - 6);
    std::string job = line.substr(jobAt + 5);
    EXPECT_EQ(line, "[" + rank + "] rank=" + rank + " world=3 local=" + rank + " lws=3 group=0 role=" + rank +
                        "/3 addr=127.0.0.1 port=" + port + " job=" + job);
    ASSERT_FALSE(port.empty()) << line;
    EXPECT_EQ(port.find_first_not_of("0123456789"), std::string::npos) << line;
    EXPECT_NE(job.find('-'), std::string::npos) << line;
    ranks.insert(rank);
    ports.insert(port);
    jobs.insert(job);
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2"}));
  ASSERT_EQ(ports.size(), 1u) << "MASTER_PORT must be the same for every rank";
  int port = std::stoi(*ports.begin());
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
  EXPECT_EQ(jobs.size(), 1u);
  EXPECT_EQ(r.err, "");
}

TEST(Braidrun, StderrIsPrefixedAndKeptApart) {
  CommandResult r = runScript(2, "echo out$RANK; echo err$RANK >&2");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::vector<std::string> out = splitLines(r.out);
  std::vector<std::string> err = splitLines(r.err);
  EXPECT_EQ(std::set<std::string>(out.begin(), out.end()), (std::set<std::string>{"[0] out0", "[1] out1"}));
  EXPECT_EQ(std::set<std::string>(err.begin(), err.end()), (std::set<std::string>{"[0] err0", "[1] err1"}));
}

TEST(Braidrun, PartialLastLineGetsANewline) {
  CommandResult r = runScript(1, "printf 'first\\nno newline'; printf 'e1\\ne2' >&2");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.out, "[0] first\n[0] no newline\n");
  EXPECT_EQ(r.err, "[0] e1\n[0] e2\n");
}

TEST(Braidrun, OverlongLineIsCut) {
  // 1 MiB is where braidrun stops waiting for a newline.
  CommandResult r = runScript(1, "head -c 1500000 /dev/zero | tr '\\0' a");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::string> lines = splitLines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "[0] " + std::string(1 << 20, 'a'));
  EXPECT_EQ(lines[1], "[0] " + std::string(1500000 - (1 << 20), 'a'));
}

TEST(Braidrun, NoPrefix) {
  CommandResult r = runScript(2, "printf 'x'", {"--no-prefix"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.out, "x\nx\n");
}

TEST(Braidrun, LinesOfDifferentRanksNeverMix) {
  // Many ranks writing many lines at once, each line built from several writes.
  const int kLines = 300;
  CommandResult r = runScript(4, "i=0; while [ $i -lt " + std::to_string(kLines) +
                                     " ]; do printf 'rank %s ' $RANK; printf 'line %s ' $i; "
                                     "echo 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz'; i=$((i+1)); done");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::map<char, int> nextLine;
  std::vector<std::string> lines = splitLines(r.out);
  ASSERT_EQ(lines.size(), 4u * kLines);
  for (const std::string& line : lines) {
    ASSERT_GT(line.size(), 4u) << line;
    char rank = line[1];
    // Each rank's own lines keep their order too.
    std::string expected = std::string("[") + rank + "] rank " + rank + " line " + std::to_string(nextLine[rank]++) +
                           " abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz";
    ASSERT_EQ(line, expected);
  }
  EXPECT_EQ(nextLine.size(), 4u);
}

TEST(Braidrun, EnvironmentOverrides) {
  CommandResult r = braidrun({"-n", "2", "-x", "FOO=from-x", "-x", "RANK=7", "--", "BAR=bar baz", "MASTER_PORT=12345",
                              "FOO=later", "/bin/sh", "-c", "echo \"$FOO|$BAR|$MASTER_PORT|$RANK|$WORLD_SIZE\""});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  // Ranks print in whatever order they run; each must print exactly this.
  EXPECT_TRUE(contains(r.out, "[0] later|bar baz|12345|7|2\n")) << r.describe();
  EXPECT_TRUE(contains(r.out, "[1] later|bar baz|12345|7|2\n")) << r.describe();
  EXPECT_EQ(r.out.size(), 2 * std::string("[0] later|bar baz|12345|7|2\n").size()) << r.describe();
}

TEST(Braidrun, ParentEnvironmentIsInheritedButRankVariablesReplaced) {
  setenv("BRAIDRUN_TEST_INHERITED", "yes", 1);
  setenv("WORLD_SIZE", "99", 1);
  CommandResult r = runScript(1, "echo \"$BRAIDRUN_TEST_INHERITED $WORLD_SIZE\"");
  unsetenv("BRAIDRUN_TEST_INHERITED");
  unsetenv("WORLD_SIZE");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.out, "[0] yes 1\n");
}

TEST(Braidrun, StdinIsEmpty) {
  CommandResult r = runScript(1, "if read line; then echo got; else echo eof; fi");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.out, "[0] eof\n");
}

TEST(Braidrun, FailingRankStopsTheOthers) {
  CommandResult r = runScript(3, "if [ \"$RANK\" = 1 ]; then echo failing >&2; exit 3; fi; sleep 30");
  EXPECT_EQ(r.exitCode, 3) << r.describe();
  EXPECT_LT(r.seconds, 2.5) << r.describe();
  EXPECT_TRUE(contains(r.err, "[1] failing\nbraidrun: rank 1 exited with status 3; stopping the other ranks\n"))
      << r.describe();
}

TEST(Braidrun, RankThatIgnoresSigtermIsKilledAfterGracePeriod) {
  CommandResult r = runScript(2, "if [ \"$RANK\" = 0 ]; then sleep 0.2; exit 5; fi; trap '' TERM; sleep 30");
  EXPECT_EQ(r.exitCode, 5) << r.describe();
  EXPECT_GT(r.seconds, 2.5) << r.describe();
  EXPECT_LT(r.seconds, 4.8) << r.describe();
}

TEST(Braidrun, RankKilledBySignal) {
  CommandResult r = runScript(2, "if [ \"$RANK\" = 1 ]; then kill -KILL $$; fi; sleep 30");
  EXPECT_EQ(r.exitCode, 128 + 9) << r.describe();
  EXPECT_LT(r.seconds, 2.5) << r.describe();
  EXPECT_TRUE(contains(r.err, "braidrun: rank 1 was killed by signal 9 (SIGKILL); stopping the other ranks\n"))
      << r.describe();
}

TEST(Braidrun, AllSucceed) {
  CommandResult r = runScript(4, "sleep 0.$RANK");
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.err, "");
}

TEST(Braidrun, Timeout) {
  CommandResult r = runScript(2, "echo started; sleep 30", {"--timeout", "0.5"});
  EXPECT_EQ(r.exitCode, 124) << r.describe();
  EXPECT_GT(r.seconds, 0.4) << r.describe();
  EXPECT_LT(r.seconds, 2.5) << r.describe();
  EXPECT_TRUE(contains(r.err, "braidrun: timed out after 0.5 s; stopping all ranks\n")) << r.describe();
  EXPECT_TRUE(contains(r.out, "[0] started\n")) << r.describe();
  EXPECT_FALSE(contains(r.err, "exited with status")) << r.describe();
}

TEST(Braidrun, ForwardsSigintToRanks) {
  // Rank 0 interrupts braidrun itself (its parent), as Ctrl-C would. The ranks exec their
  // sleep: a shell that forks `sleep` just after braidrun signalled the group would wait
  // out the child (bash defers SIGINT to its foreground job), which is bash's behaviour,
  // not braidrun's, and made this test flaky under load.
  CommandResult r = runScript(2, "if [ \"$RANK\" = 0 ]; then (sleep 0.3; kill -INT $PPID) & fi; exec sleep 30");
  EXPECT_EQ(r.exitCode, 130) << r.describe();
  EXPECT_LT(r.seconds, 2.5) << r.describe();
  EXPECT_TRUE(contains(r.err, "braidrun: received SIGINT; stopping all ranks\n")) << r.describe();
}

TEST(Braidrun, ForwardsSigtermToRanks) {
  CommandResult r = runScript(2, "if [ \"$RANK\" = 1 ]; then sleep 0.3; kill -TERM $PPID; fi; sleep 30");
  EXPECT_EQ(r.exitCode, 143) << r.describe();
  EXPECT_LT(r.seconds, 2.5) << r.describe();
}

TEST(Braidrun, MissingProgram) {
  CommandResult r = braidrun({"-n", "2", "/nonexistent/braidrun-test-program"});
  EXPECT_EQ(r.exitCode, 127) << r.describe();
  EXPECT_TRUE(contains(r.err, "braidrun: cannot run /nonexistent/braidrun-test-program: No such file or directory"))
      << r.describe();

  r = braidrun({"-n", "1", "braidrun-test-no-such-program-in-path"});
  EXPECT_EQ(r.exitCode, 127) << r.describe();
  EXPECT_TRUE(contains(r.err, "cannot run braidrun-test-no-such-program-in-path")) << r.describe();
}

TEST(Braidrun, ProgramNotExecutable) {
  char path[] = "/tmp/braidrun_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "echo hi\n", 8), 8);
  close(fd);
  chmod(path, 0644);
  CommandResult r = braidrun({"-n", "1", path});
  unlink(path);
  EXPECT_EQ(r.exitCode, 127) << r.describe();
  EXPECT_TRUE(contains(r.err, std::string("braidrun: cannot run ") + path + ": Permission denied")) << r.describe();
}

TEST(Braidrun, BadCommandLines) {
  for (const Args& args : {Args{}, Args{"/bin/true"}, Args{"-n", "0", "/bin/true"}, Args{"-n", "x", "/bin/true"},
                           Args{"-n", "2"}, Args{"-n", "2", "--bogus", "/bin/true"}, Args{"-n", "2", "A=1"}}) {
    CommandResult r = braidrun(args);
    EXPECT_EQ(r.exitCode, 2) << testing::PrintToString(args) << r.describe();
    EXPECT_EQ(r.err.rfind("braidrun: ", 0), 0u) << r.describe();
    EXPECT_TRUE(contains(r.err, "\nusage: braidrun -n N")) << r.describe();
    EXPECT_EQ(r.out, "");
  }
}

TEST(Braidrun, Help) {
  CommandResult r = braidrun({"--help"});
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.out.rfind("usage: braidrun -n N", 0), 0u) << r.describe();
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace braid::test
