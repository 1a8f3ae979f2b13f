// braidrun's command-line parser, without running anything.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braidrun/options.h"

namespace braid::run {
namespace {

using Args = std::vector<std::string>;

TEST(BraidrunOptions, MinimalCommandLine) {
  ParseResult r = parseOptions({"-n", "4", "python3", "train.py", "--lr", "0.1"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.np, 4);
  EXPECT_EQ(r.options.command, (Args{"python3", "train.py", "--lr", "0.1"}));
  EXPECT_TRUE(r.options.env.empty());
  EXPECT_FALSE(r.options.timeoutSec.has_value());
  EXPECT_TRUE(r.options.prefixOutput);
  EXPECT_FALSE(r.options.help);
}

TEST(BraidrunOptions, AllOptionSpellings) {
  ParseResult r = parseOptions(
      {"--np=2", "-xA=1", "--env", "B=2", "--env=C=x=y", "-x", "D=", "--timeout", "1.5", "--no-prefix", "prog"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.np, 2);
  EXPECT_EQ(r.options.env, (std::vector<EnvAssignment>{{"A", "1"}, {"B", "2"}, {"C", "x=y"}, {"D", ""}}));
  ASSERT_TRUE(r.options.timeoutSec.has_value());
  EXPECT_DOUBLE_EQ(*r.options.timeoutSec, 1.5);
  EXPECT_FALSE(r.options.prefixOutput);
  EXPECT_EQ(r.options.command, Args{"prog"});

  r = parseOptions({"-n3", "--np", "5", "--timeout=2", "prog"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.np, 5);  // the last one wins
  EXPECT_DOUBLE_EQ(*r.options.timeoutSec, 2.0);
}

TEST(BraidrunOptions, LeadingAssignmentsAreEnvironment) {
  ParseResult r = parseOptions({"-n", "2", "-x", "A=1", "B=2", "_c9=a b", "prog", "X=1", "-n", "7"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.env, (std::vector<EnvAssignment>{{"A", "1"}, {"B", "2"}, {"_c9", "a b"}}));
  // Everything from PROGRAM on belongs to the program, options and assignments included.
  EXPECT_EQ(r.options.command, (Args{"prog", "X=1", "-n", "7"}));
}

TEST(BraidrunOptions, TokenThatIsNotAnIdentifierAssignmentIsTheProgram) {
  ParseResult r = parseOptions({"-n", "1", "9A=1", "x"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.command, (Args{"9A=1", "x"}));

  r = parseOptions({"-n", "1", "A-B=1", "x"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.command, (Args{"A-B=1", "x"}));

  r = parseOptions({"-n", "1", "=1", "x"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.command, (Args{"=1", "x"}));
}

TEST(BraidrunOptions, DoubleDashEndsOptions) {
  ParseResult r = parseOptions({"-n", "2", "--", "A=1", "-n", "x"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.env, (std::vector<EnvAssignment>{{"A", "1"}}));
  EXPECT_EQ(r.options.command, (Args{"-n", "x"}));

  r = parseOptions({"-n", "2", "--", "--help"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(r.options.help);
  EXPECT_EQ(r.options.command, Args{"--help"});
}

TEST(BraidrunOptions, OptionsEndAtFirstNonOption) {
  ParseResult r = parseOptions({"-n", "2", "prog", "--timeout", "3"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(r.options.timeoutSec.has_value());
  EXPECT_EQ(r.options.command, (Args{"prog", "--timeout", "3"}));

  // A lone "-" is not an option.
  r = parseOptions({"-n", "2", "-"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.command, Args{"-"});
}

TEST(BraidrunOptions, HelpNeedsNothingElse) {
  for (const Args& args : {Args{"-h"}, Args{"--help"}, Args{"-n", "2", "--help", "--bogus"}}) {
    ParseResult r = parseOptions(args);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.options.help);
  }
}

TEST(BraidrunOptions, RankCountBounds) {
  EXPECT_TRUE(parseOptions({"-n", "1", "p"}).ok());
  EXPECT_TRUE(parseOptions({"-n", "1024", "p"}).ok());
  for (const char* bad : {"0", "1025", "-1", "abc", "2x", "", " 2", "1.5", "99999999999"}) {
    ParseResult r = parseOptions({"-n", bad, "p"});
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error.find("rank count"), std::string::npos) << r.error;
  }
}

TEST(BraidrunOptions, Errors) {
  struct Case {
    Args args;
    const char* expected;  // a piece of the message
  };
  const Case cases[] = {
      {{}, "missing -n"},
      {{"prog"}, "missing -n"},
      {{"-n", "2"}, "no program"},
      {{"-n", "2", "--"}, "no program"},
      {{"-n", "2", "A=1", "B=2"}, "no program"},
      {{"-n"}, "needs a value"},
      {{"-n", "2", "-x"}, "needs a value"},
      {{"-n", "2", "--timeout"}, "needs a value"},
      {{"--bogus", "-n", "2", "p"}, "unknown option '--bogus'"},
      {{"-n", "2", "-q", "p"}, "unknown option '-q'"},
      {{"-n", "2", "--np-x", "p"}, "unknown option"},
      {{"-n", "2", "--no-prefix=1", "p"}, "unknown option"},
      {{"-n", "2", "-x", "NOEQUALS", "p"}, "NAME=VALUE"},
      {{"-n", "2", "-x", "1A=2", "p"}, "NAME=VALUE"},
      {{"-n", "2", "--timeout", "0", "p"}, "bad timeout"},
      {{"-n", "2", "--timeout", "-1", "p"}, "bad timeout"},
      {{"-n", "2", "--timeout", "nan", "p"}, "bad timeout"},
      {{"-n", "2", "--timeout", "inf", "p"}, "bad timeout"},
      {{"-n", "2", "--timeout", "5s", "p"}, "bad timeout"},
  };
  for (const Case& c : cases) {
    ParseResult r = parseOptions(c.args);
    ASSERT_FALSE(r.ok()) << testing::PrintToString(c.args);
    EXPECT_NE(r.error.find(c.expected), std::string::npos) << r.error;
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line: " << r.error;
  }
}

TEST(BraidrunOptions, SplitEnvAssignment) {
  auto a = splitEnvAssignment("NAME=some=value");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->name, "NAME");
  EXPECT_EQ(a->value, "some=value");
  EXPECT_FALSE(splitEnvAssignment("NAME").has_value());
  EXPECT_FALSE(splitEnvAssignment("=x").has_value());
  EXPECT_FALSE(splitEnvAssignment("A.B=x").has_value());
  EXPECT_FALSE(splitEnvAssignment("./prog").has_value());
}

}  // namespace
}  // namespace braid::run
