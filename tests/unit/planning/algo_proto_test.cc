// NCCL_ALGO / NCCL_PROTO parsing and the policy's queries.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planning/algo_proto.h"

namespace braid {
namespace {

constexpr CollFunc kAllFuncs[] = {CollFunc::Broadcast,     CollFunc::Reduce,    CollFunc::AllGather,
                                  CollFunc::ReduceScatter, CollFunc::AllReduce, CollFunc::SendRecv,
                                  CollFunc::AlltoAll,      CollFunc::Gather,    CollFunc::Scatter};
constexpr CollFunc kCollectives[] = {CollFunc::Broadcast, CollFunc::Reduce, CollFunc::AllGather,
                                     CollFunc::ReduceScatter, CollFunc::AllReduce};

struct Parsed {
  AlgoProtoPolicy policy;
  std::vector<std::string> warnings;
};

Parsed algo(const std::string& text) {
  Parsed parsed;
  EXPECT_TRUE(parseAlgoPolicy(text, &parsed.policy, &parsed.warnings).ok());
  return parsed;
}

Parsed proto(const std::string& text) {
  Parsed parsed;
  EXPECT_TRUE(parseProtoPolicy(text, &parsed.policy, &parsed.warnings).ok());
  return parsed;
}

bool anyWarningContains(const Parsed& parsed, const std::string& needle) {
  for (const std::string& warning : parsed.warnings) {
    if (warning.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string allWarnings(const Parsed& parsed) {
  std::string out;
  for (const std::string& warning : parsed.warnings) out += warning + "\n";
  return out;
}

TEST(AlgoProto, Names) {
  EXPECT_STREQ(algorithmName(Algorithm::Ring), "Ring");
  EXPECT_STREQ(algorithmName(Algorithm::Tree), "Tree");
  EXPECT_STREQ(algorithmName(Algorithm::Direct), "Direct");
  EXPECT_STREQ(protocolName(Protocol::Simple), "Simple");
  EXPECT_STREQ(protocolName(Protocol::LL), "LL");
  EXPECT_STREQ(collFuncName(CollFunc::AllReduce), "AllReduce");
  EXPECT_STREQ(collFuncName(CollFunc::ReduceScatter), "ReduceScatter");
  EXPECT_STREQ(collFuncName(CollFunc::SendRecv), "SendRecv");
  EXPECT_STREQ(collFuncName(CollFunc::AlltoAll), "AlltoAll");
  EXPECT_STREQ(collFuncName(CollFunc::Scatter), "Scatter");
}

TEST(AlgoProto, Applicability) {
  EXPECT_TRUE(algorithmApplies(CollFunc::AllReduce, Algorithm::Tree));
  EXPECT_TRUE(algorithmApplies(CollFunc::AllReduce, Algorithm::Ring));
  for (CollFunc func : kCollectives) EXPECT_TRUE(algorithmApplies(func, Algorithm::Direct));
  EXPECT_TRUE(pairApplies(Algorithm::Direct, Protocol::Simple));
  EXPECT_FALSE(pairApplies(Algorithm::Direct, Protocol::LL));
  EXPECT_TRUE(pairApplies(Algorithm::Ring, Protocol::LL));
  for (CollFunc func : {CollFunc::Broadcast, CollFunc::Reduce, CollFunc::AllGather, CollFunc::ReduceScatter}) {
    EXPECT_TRUE(algorithmApplies(func, Algorithm::Ring));
    EXPECT_FALSE(algorithmApplies(func, Algorithm::Tree));
    EXPECT_FALSE(usesP2pPath(func));
  }
  for (CollFunc func : {CollFunc::SendRecv, CollFunc::AlltoAll, CollFunc::Gather, CollFunc::Scatter}) {
    EXPECT_TRUE(usesP2pPath(func));
    EXPECT_EQ(applicableAlgorithms(func), 0);
  }
}

TEST(AlgoProto, DefaultAllowsEverything) {
  for (const Parsed& parsed : {Parsed{}, algo(""), algo("  "), proto("")}) {
    EXPECT_TRUE(parsed.warnings.empty());
    for (CollFunc func : kAllFuncs) {
      EXPECT_TRUE(parsed.policy.allowsAlgorithm(func, Algorithm::Ring));
      EXPECT_TRUE(parsed.policy.allowsAlgorithm(func, Algorithm::Tree));
      EXPECT_TRUE(parsed.policy.allowsProtocol(func, Protocol::Simple));
      EXPECT_TRUE(parsed.policy.allowsProtocol(func, Protocol::LL));
      EXPECT_EQ(parsed.policy.usableAlgorithms(func), applicableAlgorithms(func));
      EXPECT_EQ(parsed.policy.explainInapplicable(func), "");
    }
  }
}

TEST(AlgoProto, PositiveList) {
  Parsed parsed = algo("ring");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  for (CollFunc func : kAllFuncs) {
    EXPECT_TRUE(parsed.policy.allowsAlgorithm(func, Algorithm::Ring));
    EXPECT_FALSE(parsed.policy.allowsAlgorithm(func, Algorithm::Tree));
  }
  parsed = algo("Ring, TREE");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
}

TEST(AlgoProto, Negation) {
  Parsed parsed = algo("^tree");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
  // Excluding what Braid never runs is honoured silently.
  parsed = algo("^NVLS,collnetdirect");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_EQ(parsed.policy.algorithms[static_cast<int>(CollFunc::AllReduce)], kAllAlgorithms);
  parsed = proto("^ll");
  EXPECT_TRUE(parsed.policy.allowsProtocol(CollFunc::AllGather, Protocol::Simple));
  EXPECT_FALSE(parsed.policy.allowsProtocol(CollFunc::AllGather, Protocol::LL));
  EXPECT_FALSE(parsed.policy.allowsProtocol(CollFunc::SendRecv, Protocol::LL));
}

TEST(AlgoProto, PerFunctionClauses) {
  Parsed parsed = algo("allreduce:tree;allgather:ring");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllGather, Algorithm::Ring));
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllGather, Algorithm::Tree));
  // Functions no clause names keep the default.
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::Broadcast, Algorithm::Ring));
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::Broadcast, Algorithm::Tree));

  parsed = algo("AllReduce:^ring");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::ReduceScatter, Algorithm::Ring));
}

TEST(AlgoProto, LaterClausesReplaceEarlierOnes) {
  Parsed parsed = algo("tree;allreduce:ring");
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::Reduce, Algorithm::Tree));
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::Reduce, Algorithm::Ring));
  parsed = algo("allreduce:ring;tree");
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
  // NCCL's documented example.
  parsed = algo("ring,tree;allreduce:^nvls");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_EQ(parsed.policy.algorithms[static_cast<int>(CollFunc::AllReduce)], kAllAlgorithms);
}

TEST(AlgoProto, UnimplementedNamesWarnAndTheRestApplies) {
  Parsed parsed = algo("nvls,ring");
  ASSERT_EQ(parsed.warnings.size(), 1u) << allWarnings(parsed);
  EXPECT_EQ(parsed.warnings[0], "NCCL_ALGO lists NVLS, which Braid does not implement; ignored");
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));

  for (const char* name : {"CollNetDirect", "collnetchain", "NVLSTree", "pat"}) {
    parsed = algo(std::string(name) + ",tree");
    EXPECT_EQ(parsed.warnings.size(), 1u) << name;
    EXPECT_TRUE(anyWarningContains(parsed, "Braid does not implement")) << name;
  }

  parsed = proto("LL128,simple");
  ASSERT_EQ(parsed.warnings.size(), 1u) << allWarnings(parsed);
  EXPECT_EQ(parsed.warnings[0], "NCCL_PROTO lists LL128, which Braid does not implement; ignored");
  EXPECT_TRUE(parsed.policy.allowsProtocol(CollFunc::AllReduce, Protocol::Simple));
  EXPECT_FALSE(parsed.policy.allowsProtocol(CollFunc::AllReduce, Protocol::LL));
}

TEST(AlgoProto, UnknownNamesAndFunctionsWarn) {
  Parsed parsed = algo("rign,tree");
  ASSERT_EQ(parsed.warnings.size(), 1u) << allWarnings(parsed);
  EXPECT_TRUE(anyWarningContains(parsed, "'rign'"));
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));

  parsed = algo("allredcue:tree;allgather:ring");
  ASSERT_EQ(parsed.warnings.size(), 1u) << allWarnings(parsed);
  EXPECT_TRUE(anyWarningContains(parsed, "'allredcue'"));
  // The bad clause is dropped, the good one applies.
  EXPECT_TRUE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllGather, Algorithm::Tree));

  parsed = proto("simple;foo:ll;allgather:LL,Bogus");
  EXPECT_TRUE(anyWarningContains(parsed, "'foo'"));
  EXPECT_TRUE(anyWarningContains(parsed, "'Bogus'"));
  EXPECT_TRUE(parsed.policy.allowsProtocol(CollFunc::AllGather, Protocol::LL));
  EXPECT_FALSE(parsed.policy.allowsProtocol(CollFunc::AllGather, Protocol::Simple));
  EXPECT_FALSE(parsed.policy.allowsProtocol(CollFunc::AllReduce, Protocol::LL));
}

TEST(AlgoProto, EveryFunctionNameParses) {
  const char* names[] = {"broadcast", "REDUCE",   "AllGather", "reducescatter", "allreduce",
                         "SendRecv",  "alltoall", "gather",    "scatter"};
  for (int f = 0; f < kNumCollFuncs; ++f) {
    Parsed parsed = proto(std::string(names[f]) + ":ll");
    EXPECT_TRUE(parsed.warnings.empty()) << names[f] << ": " << allWarnings(parsed);
    for (CollFunc func : kAllFuncs) {
      EXPECT_EQ(parsed.policy.allowsProtocol(func, Protocol::Simple), static_cast<int>(func) != f) << names[f];
    }
  }
}

TEST(AlgoProto, AlgorithmClauseForAP2pFunctionWarns) {
  Parsed parsed = algo("sendrecv:ring;allreduce:tree");
  ASSERT_EQ(parsed.warnings.size(), 1u) << allWarnings(parsed);
  EXPECT_TRUE(anyWarningContains(parsed, "p2p path"));
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
}

TEST(AlgoProto, NothingRunnableFallsBackWithAWarning) {
  Parsed parsed = algo("nvls");
  ASSERT_EQ(parsed.warnings.size(), 2u) << allWarnings(parsed);
  EXPECT_TRUE(anyWarningContains(parsed, "NCCL_ALGO lists NVLS"));
  EXPECT_TRUE(anyWarningContains(parsed, "NCCL_ALGO=nvls leaves nothing Braid implements for any function"))
      << allWarnings(parsed);
  for (CollFunc func : kAllFuncs) {
    EXPECT_EQ(parsed.policy.algorithms[static_cast<int>(func)], kAllAlgorithms);
    EXPECT_EQ(parsed.policy.explainInapplicable(func), "");
  }

  parsed = algo("allreduce:^ring,tree,direct,hier");
  ASSERT_EQ(parsed.warnings.size(), 1u) << allWarnings(parsed);
  EXPECT_TRUE(anyWarningContains(parsed, "for AllReduce;")) << allWarnings(parsed);
  EXPECT_EQ(parsed.policy.algorithms[static_cast<int>(CollFunc::AllReduce)], kAllAlgorithms);

  parsed = algo("allreduce:pat;reduce:collnetchain");
  EXPECT_TRUE(anyWarningContains(parsed, "for Reduce, AllReduce;")) << allWarnings(parsed);

  parsed = proto("ll128");
  ASSERT_EQ(parsed.warnings.size(), 2u) << allWarnings(parsed);
  EXPECT_TRUE(anyWarningContains(parsed, "NCCL_PROTO=ll128 leaves nothing Braid implements for any function"));
  EXPECT_TRUE(anyWarningContains(parsed, "(LL, Simple)")) << allWarnings(parsed);
  for (CollFunc func : kAllFuncs) EXPECT_EQ(parsed.policy.protocols[static_cast<int>(func)], kAllProtocols);

  // A clause with an empty list selects nothing, too.
  parsed = algo("allgather:");
  EXPECT_TRUE(anyWarningContains(parsed, "for AllGather;")) << allWarnings(parsed);
}

TEST(AlgoProto, ForcedAlgorithmThatCannotApply) {
  Parsed parsed = algo("tree");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_EQ(parsed.policy.explainInapplicable(CollFunc::AllGather),
            "NCCL_ALGO=tree does not apply to AllGather; using Ring, Direct");
  // About the function, not this communicator: the planner says it at INFO, not WARN.
  EXPECT_FALSE(parsed.policy.forcedOntoUnavailable(CollFunc::AllGather));
  EXPECT_EQ(parsed.policy.usableAlgorithms(CollFunc::AllGather),
            algorithmBit(Algorithm::Ring) | algorithmBit(Algorithm::Direct));
  EXPECT_EQ(parsed.policy.explainInapplicable(CollFunc::AllReduce), "");
  EXPECT_EQ(parsed.policy.usableAlgorithms(CollFunc::AllReduce), algorithmBit(Algorithm::Tree));
  // The p2p path has nothing to explain.
  EXPECT_EQ(parsed.policy.explainInapplicable(CollFunc::SendRecv), "");
  EXPECT_EQ(parsed.policy.usableAlgorithms(CollFunc::SendRecv), 0);
  for (CollFunc func : kCollectives) EXPECT_NE(parsed.policy.usableAlgorithms(func), 0);
}

// Direct is Braid's own name; a communicator that cannot run it (GPU mode, several hosts,
// no shared memory) marks it unavailable, and forcing it then says why and falls back.
TEST(AlgoProto, DirectParsesAndAnUnavailableDirectFallsBack) {
  Parsed parsed = algo("direct");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  for (CollFunc func : kCollectives) {
    EXPECT_EQ(parsed.policy.usableAlgorithms(func), algorithmBit(Algorithm::Direct));
    EXPECT_EQ(parsed.policy.explainInapplicable(func), "");
  }
  parsed.policy.unavailable = algorithmBit(Algorithm::Direct);
  parsed.policy.unavailableWhy = "Direct needs every rank on one host";
  EXPECT_EQ(parsed.policy.usableAlgorithms(CollFunc::AllGather), algorithmBit(Algorithm::Ring));
  EXPECT_EQ(parsed.policy.usableAlgorithms(CollFunc::AllReduce),
            algorithmBit(Algorithm::Ring) | algorithmBit(Algorithm::Tree) | algorithmBit(Algorithm::Hier));
  EXPECT_EQ(parsed.policy.explainInapplicable(CollFunc::AllReduce),
            "NCCL_ALGO=direct cannot run AllReduce on this communicator (Direct needs every rank on one host); using "
            "Tree, Ring, Hier");
  EXPECT_TRUE(parsed.policy.forcedOntoUnavailable(CollFunc::AllReduce));  // a WARN
  // Not forced: nothing to explain, and Direct is simply not among the choices.
  Parsed plain = algo("");
  plain.policy.unavailable = algorithmBit(Algorithm::Direct);
  EXPECT_EQ(plain.policy.explainInapplicable(CollFunc::AllReduce), "");
  EXPECT_EQ(plain.policy.usableAlgorithms(CollFunc::Broadcast), algorithmBit(Algorithm::Ring));
  EXPECT_EQ(algo("^direct").policy.usableAlgorithms(CollFunc::AllReduce),
            algorithmBit(Algorithm::Ring) | algorithmBit(Algorithm::Tree) | algorithmBit(Algorithm::Hier));
}

// Hier is Braid's own name too, for AllReduce only; a communicator that cannot run it (one
// host, hosts of different sizes, GPU mode) marks it unavailable like Direct.
TEST(AlgoProto, HierParsesAppliesToAllReduceAndFallsBackWhenUnavailable) {
  Parsed parsed = algo("hier");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_EQ(parsed.policy.usableAlgorithms(CollFunc::AllReduce), algorithmBit(Algorithm::Hier));
  EXPECT_EQ(parsed.policy.explainInapplicable(CollFunc::AllGather),
            "NCCL_ALGO=hier does not apply to AllGather; using Ring, Direct");
  EXPECT_STREQ(algorithmName(Algorithm::Hier), "Hier");
  parsed.policy.unavailable = algorithmBit(Algorithm::Hier);
  parsed.policy.unavailableWhy = "Hier needs several hosts";
  EXPECT_EQ(parsed.policy.usableAlgorithms(CollFunc::AllReduce),
            algorithmBit(Algorithm::Ring) | algorithmBit(Algorithm::Tree) | algorithmBit(Algorithm::Direct));
  EXPECT_EQ(parsed.policy.explainInapplicable(CollFunc::AllReduce),
            "NCCL_ALGO=hier cannot run AllReduce on this communicator (Hier needs several hosts); using Tree, Ring, "
            "Direct");
}

TEST(AlgoProto, HalvesAreIndependent) {
  AlgoProtoPolicy policy;
  std::vector<std::string> warnings;
  ASSERT_TRUE(parseProtoPolicy("ll", &policy, &warnings).ok());
  ASSERT_TRUE(parseAlgoPolicy("ring", &policy, &warnings).ok());
  EXPECT_FALSE(policy.allowsProtocol(CollFunc::AllReduce, Protocol::Simple));
  EXPECT_FALSE(policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
  EXPECT_EQ(policy.algoSetting, "ring");
  EXPECT_EQ(policy.protoSetting, "ll");
  // Parsing again replaces the earlier setting rather than narrowing it.
  ASSERT_TRUE(parseAlgoPolicy("tree", &policy, &warnings).ok());
  EXPECT_TRUE(policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
  EXPECT_FALSE(policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Ring));
  EXPECT_TRUE(warnings.empty());
}

TEST(AlgoProto, NullWarningsAndNullPolicy) {
  AlgoProtoPolicy policy;
  EXPECT_TRUE(parseAlgoPolicy("nvls,bogus;x:y", &policy, nullptr).ok());
  EXPECT_EQ(policy.algorithms[static_cast<int>(CollFunc::AllReduce)], kAllAlgorithms);
  EXPECT_FALSE(parseAlgoPolicy("ring", nullptr, nullptr).ok());
  EXPECT_FALSE(parseProtoPolicy("ll", nullptr, nullptr).ok());
}

TEST(AlgoProto, OddSyntax) {
  // Stray separators and spaces are tolerated; "^" alone excludes nothing.
  Parsed parsed = algo(" ; ring , ;; ");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
  parsed = algo("^");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_EQ(parsed.policy.algorithms[static_cast<int>(CollFunc::AllReduce)], kAllAlgorithms);
  parsed = algo(" allreduce : ^ tree ");
  EXPECT_TRUE(parsed.warnings.empty()) << allWarnings(parsed);
  EXPECT_FALSE(parsed.policy.allowsAlgorithm(CollFunc::AllReduce, Algorithm::Tree));
}

}  // namespace
}  // namespace braid
