// The benchmarks' command line: nccl-tests' flags and defaults, and errors for bad input.
#include "common/options.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "common/host_mode.h"

namespace braid::bench {
namespace {

ParseResult parse(std::vector<std::string> args) { return parseOptions(args); }

TEST(BenchOptions, DefaultsAreNcclTests) {
  ParseResult r = parse({});
  ASSERT_TRUE(r.ok()) << r.error;
  const Options& o = r.options;
  EXPECT_EQ(o.nThreads, 1);
  EXPECT_EQ(o.nGpus, 1);
  EXPECT_EQ(o.minBytes, 32u << 20);
  EXPECT_EQ(o.maxBytes, 32u << 20);
  EXPECT_EQ(o.stepBytes, 1u << 20);
  EXPECT_EQ(o.stepFactor, 1u);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.warmupIters, 1);
  EXPECT_EQ(o.aggIters, 1);
  EXPECT_EQ(o.cycles, 1);
  EXPECT_EQ(o.check, 1);
  EXPECT_EQ(o.ops, std::vector<BenchOp>{BenchOp::kSum});
  EXPECT_EQ(o.types, std::vector<ncclDataType_t>{ncclFloat32});
  EXPECT_EQ(o.root, 0);
  EXPECT_EQ(o.blocking, 0);
  EXPECT_EQ(o.average, 1);
  EXPECT_FALSE(o.help);
}

TEST(BenchOptions, SizesTakeBinarySuffixesAndFractions) {
  EXPECT_EQ(parseSize("8"), 8u);
  EXPECT_EQ(parseSize("0"), 0u);
  EXPECT_EQ(parseSize("1K"), 1024u);
  EXPECT_EQ(parseSize("64k"), 65536u);
  EXPECT_EQ(parseSize("1.5M"), 1572864u);
  EXPECT_EQ(parseSize("2G"), 2147483648u);
  EXPECT_EQ(parseSize("0.5K"), 512u);
  EXPECT_EQ(parseSize(".5K"), 512u);
  EXPECT_EQ(parseSize("1.9"), 1u);  // whole bytes, rounded down
}

TEST(BenchOptions, BadSizesAreRejected) {
  for (const char* bad : {"", "K", "-1", "1T", "1KB", "1e3", "1..5", " 1", "1 ", "0x10", "abc", "99999999G"}) {
    EXPECT_FALSE(parseSize(bad).has_value()) << bad;
  }
}

TEST(BenchOptions, ShortLongAndAttachedForms) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"-b", "8", "-e", "64K"},
                                                                {"-b8", "-e64K"},
                                                                {"--minbytes", "8", "--maxbytes", "64K"},
                                                                {"--minbytes=8", "--maxbytes=64K"}}) {
    ParseResult r = parse(args);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.options.minBytes, 8u);
    EXPECT_EQ(r.options.maxBytes, 65536u);
  }
}

TEST(BenchOptions, EveryValueFlag) {
  ParseResult r =
      parse({"-t", "2", "-g", "3",  "-b", "1K", "-e", "1M", "-i", "4K",       "-f", "2",    "-n", "5", "-m", "4",
             "-w", "0", "-N", "3",  "-p", "1",  "-c", "2",  "-o", "max",      "-d", "half", "-r", "1", "-z", "3",
             "-y", "1", "-T", "30", "-C", "1",  "-S", "1",  "-J", "out.json", "-a", "2",    "-x", "1", "-u", "1",
             "-G", "0", "-R", "0",  "-D", "0",  "-M", "0",  "-I", "0",        "-K", "0",    "-V", "0"});
  ASSERT_TRUE(r.ok()) << r.error;
  const Options& o = r.options;
  EXPECT_EQ(o.nThreads, 2);
  EXPECT_EQ(o.nGpus, 3);
  EXPECT_EQ(o.minBytes, 1024u);
  EXPECT_EQ(o.maxBytes, 1u << 20);
  EXPECT_EQ(o.stepBytes, 4096u);
  EXPECT_EQ(o.stepFactor, 2u);
  EXPECT_EQ(o.iters, 5);
  EXPECT_EQ(o.aggIters, 4);
  EXPECT_EQ(o.warmupIters, 0);
  EXPECT_EQ(o.cycles, 3);
  EXPECT_TRUE(o.parallelInit);
  EXPECT_EQ(o.check, 2);
  EXPECT_EQ(o.ops, std::vector<BenchOp>{BenchOp::kMax});
  EXPECT_EQ(o.types, std::vector<ncclDataType_t>{ncclFloat16});
  EXPECT_EQ(o.root, 1);
  EXPECT_EQ(o.blocking, 3);
  EXPECT_TRUE(o.streamNull);
  EXPECT_EQ(o.timeoutSec, 30);
  EXPECT_TRUE(o.reportCpuTime);
  EXPECT_TRUE(o.reportTimestamps);
  EXPECT_EQ(o.jsonPath, "out.json");
  EXPECT_EQ(o.average, 2);
  EXPECT_EQ(o.ctaPolicy, 1);
  EXPECT_EQ(o.unalign, 1);
}

TEST(BenchOptions, AllListsAndCommaLists) {
  ParseResult r = parse({"-d", "all", "-o", "all"});
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.options.types.size(), 12u);
  EXPECT_EQ(r.options.types.front(), ncclInt8);
  EXPECT_EQ(r.options.types.back(), ncclFloat8e5m2);
  EXPECT_EQ(r.options.ops, (std::vector<BenchOp>{BenchOp::kSum, BenchOp::kProd, BenchOp::kMax, BenchOp::kMin,
                                                 BenchOp::kAvg, BenchOp::kMulSum}));
  r = parse({"-d", "bfloat16,f8e4m3,int64", "-o", "avg,mulsum"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.types, (std::vector<ncclDataType_t>{ncclBfloat16, ncclFloat8e4m3, ncclInt64}));
  EXPECT_EQ(r.options.ops, (std::vector<BenchOp>{BenchOp::kAvg, BenchOp::kMulSum}));
}

TEST(BenchOptions, AllRootsAsMinusOneOrAll) {
  EXPECT_EQ(parse({"-r", "all"}).options.root, kAllRoots);
  EXPECT_EQ(parse({"-r", "-1"}).options.root, kAllRoots);
  EXPECT_EQ(parse({"--root=all"}).options.root, kAllRoots);
  EXPECT_EQ(parse({"-r", "7"}).options.root, 7);
}

TEST(BenchOptions, BadInputIsAnErrorWithAReason) {
  struct Case {
    std::vector<std::string> args;
    const char* mentions;
  };
  const std::vector<Case> cases = {
      {{"-q"}, "unknown option '-q'"},
      {{"--bogus=1"}, "unknown option"},
      {{"stray"}, "unexpected argument 'stray'"},
      {{"-b"}, "-b needs a value"},
      {{"-b", "abc"}, "not a size"},
      {{"-e", "1T"}, "not a size"},
      {{"-b", "64", "-e", "8"}, "above the last"},
      {{"-b", "8", "-e", "64", "-i", "0"}, "never reach"},
      {{"-f", "0"}, "step factor"},
      {{"-f", "1.5"}, "step factor"},
      {{"-n", "0"}, "-n"},
      {{"-t", "0"}, "-t"},
      {{"-g", "x"}, "-g"},
      {{"-c", "-1"}, "-c"},
      {{"-o", "mean"}, "not an operation"},
      {{"-o", "sum,"}, "not an operation"},
      {{"-d", "fp32"}, "not a type"},
      {{"-r", "-2"}, "not a root"},
      {{"-r", "first"}, "not a root"},
      {{"-z", "4"}, "-z"},
      {{"-a", "4"}, "-a"},
      {{"-p", "2"}, "0 or 1"},
      {{"-x", "3"}, "CTA policy"},
      {{"-J", ""}, "empty"},
      {{"-T", "soon"}, "timeout"},
      {{"-G", "1"}, "GPU mode"},
      {{"-R", "3"}, "registration mode"},
      {{"-R", "2", "-g", "2"}, "-g 1"},
      {{"-D", "1"}, "GPU mode"},
      {{"-M", "1"}, "GPU mode"},
      {{"-V", "16"}, "GPU mode"},
      {{"-I", "1"}, "not supported"},
      {{"-K", "2"}, "-I"},
  };
  for (const Case& c : cases) {
    ParseResult r = parse(c.args);
    EXPECT_FALSE(r.ok()) << c.args[0];
    EXPECT_NE(r.error.find(c.mentions), std::string::npos) << r.error;
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line: " << r.error;
  }
}

TEST(BenchOptions, HelpStopsParsing) {
  EXPECT_TRUE(parse({"-h"}).options.help);
  EXPECT_TRUE(parse({"-b", "8", "--help", "-q"}).options.help);
  EXPECT_NE(usageText("all_reduce_perf").find("-d, --datatype"), std::string::npos);
}

TEST(BenchOptions, SweepMultipliesOrAdds) {
  Options o;
  o.minBytes = 8;
  o.maxBytes = 64 << 10;
  o.stepFactor = 4;
  EXPECT_EQ(sweepSizes(o), (std::vector<uint64_t>{8, 32, 128, 512, 2048, 8192, 32768}));
  o.stepFactor = 1;
  o.minBytes = 1 << 20;
  o.maxBytes = 3 << 20;
  EXPECT_EQ(sweepSizes(o), (std::vector<uint64_t>{1 << 20, 2 << 20, 3 << 20}));
  o.minBytes = 0;
  o.maxBytes = 4;
  o.stepFactor = 2;
  EXPECT_EQ(sweepSizes(o), (std::vector<uint64_t>{0, 1, 2, 4}));
  o.minBytes = o.maxBytes = 100;
  o.stepBytes = 0;
  o.stepFactor = 1;
  EXPECT_EQ(sweepSizes(o), (std::vector<uint64_t>{100}));
}

TEST(BenchOptions, WarmupDoublesWhateverTheStep) {
  Options o;
  o.minBytes = 8;
  o.maxBytes = 100;
  o.stepFactor = 8;
  EXPECT_EQ(warmupSizes(o), (std::vector<uint64_t>{8, 16, 32, 64}));
}

}  // namespace
}  // namespace braid::bench

namespace braid::bench {
namespace {

// The *_perf programs run host mode whatever the machine: unset or auto becomes cpu; cpu
// and host stay; gpu is refused with a pointer to nccl-tests.
TEST(BenchHostMode, AsksForHostModeUnlessTheUserAskedForTheGpu) {
  ::unsetenv("BRAID_DEVICE");
  EXPECT_EQ(requestHostMode(), "");
  EXPECT_STREQ(std::getenv("BRAID_DEVICE"), "cpu");
  ::setenv("BRAID_DEVICE", "AUTO", 1);
  EXPECT_EQ(requestHostMode(), "");
  EXPECT_STREQ(std::getenv("BRAID_DEVICE"), "cpu");
  ::setenv("BRAID_DEVICE", "host", 1);
  EXPECT_EQ(requestHostMode(), "");
  EXPECT_STREQ(std::getenv("BRAID_DEVICE"), "host");
  ::setenv("BRAID_DEVICE", "gpu", 1);
  std::string why = requestHostMode();
  EXPECT_NE(why.find("BRAID_DEVICE=gpu"), std::string::npos) << why;
  EXPECT_NE(why.find("nccl-tests"), std::string::npos) << why;
  ::unsetenv("BRAID_DEVICE");
}

}  // namespace
}  // namespace braid::bench
