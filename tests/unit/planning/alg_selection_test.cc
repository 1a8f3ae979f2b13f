// ncclCollConfig_t.algSelection: NCCL's grammar, and what Braid can run of a selection.
#include "planning/alg_selection.h"

#include <gtest/gtest.h>

#include <string>

namespace braid {
namespace {

constexpr uint8_t kRingSimple = pairBit(Algorithm::Ring, Protocol::Simple);
constexpr uint8_t kRingLL = pairBit(Algorithm::Ring, Protocol::LL);
constexpr uint8_t kTreeSimple = pairBit(Algorithm::Tree, Protocol::Simple);
constexpr uint8_t kTreeLL = pairBit(Algorithm::Tree, Protocol::LL);

uint8_t pairsOf(const std::string& text, CollFunc func) {
  AlgSelection selection;
  Status s = parseAlgSelection(text, &selection);
  EXPECT_TRUE(s.ok()) << text << ": " << s.message();
  return selectedPairs(selection, func);
}

TEST(AlgSelection, NamesArePrefixesInAnyCase) {
  EXPECT_EQ(pairsOf("ring", CollFunc::AllReduce), kRingSimple | kRingLL);
  EXPECT_EQ(pairsOf("TREE", CollFunc::AllReduce), kTreeSimple | kTreeLL);
  EXPECT_EQ(pairsOf("tree_simple", CollFunc::AllReduce), kTreeSimple);
  EXPECT_EQ(pairsOf(" Ring_Simple ", CollFunc::AllGather), kRingSimple);
  // RING_LL is also a prefix of RING_LL128, which Braid does not run: LL alone remains.
  EXPECT_EQ(pairsOf("ring_ll", CollFunc::Broadcast), kRingLL);
}

TEST(AlgSelection, CommasJoinTermsPlusJoinsFactorsCaretNegates) {
  EXPECT_EQ(pairsOf("ring_simple,tree_ll", CollFunc::AllReduce), kRingSimple | kTreeLL);
  EXPECT_EQ(pairsOf("^tree", CollFunc::AllReduce), kRingSimple | kRingLL);
  EXPECT_EQ(pairsOf("ring+^ring_simple", CollFunc::AllReduce), kRingLL);
  EXPECT_EQ(pairsOf("^nvls", CollFunc::ReduceScatter), kRingSimple | kRingLL);
}

TEST(AlgSelection, BadTextIsAnErrorNamingIt) {
  const char* bad[] = {"bogus", "ring,,tree", ",ring", "ring+^", "^", "ring_simple+tree_simple", "ring+"};
  for (const char* text : bad) {
    AlgSelection selection;
    Status s = parseAlgSelection(text, &selection);
    EXPECT_EQ(s.code(), ncclInvalidArgument) << text;
    EXPECT_NE(s.message().find(std::string("\"") + text + "\""), std::string::npos) << s.message();
  }
  AlgSelection selection;
  EXPECT_NE(parseAlgSelection("bogus", &selection).message().find("RING_SIMPLE"), std::string::npos);
}

TEST(AlgSelection, WhatCannotServeACallIsExplained) {
  AlgSelection tree;
  ASSERT_TRUE(parseAlgSelection("tree", &tree).ok());
  EXPECT_EQ(selectedPairs(tree, CollFunc::AllGather), 0);
  std::string why = explainUnservable(tree, CollFunc::AllGather);
  EXPECT_NE(why.find("none of which serves AllGather"), std::string::npos) << why;
  EXPECT_NE(why.find("RING_LL, RING_SIMPLE"), std::string::npos) << why;

  AlgSelection nvls;
  ASSERT_TRUE(parseAlgSelection("nvls,ring_ll128", &nvls).ok());
  EXPECT_EQ(selectedPairs(nvls, CollFunc::AllReduce), 0);
  why = explainUnservable(nvls, CollFunc::AllReduce);
  EXPECT_NE(why.find("which Braid does not implement"), std::string::npos) << why;
  EXPECT_NE(why.find("NVLS_SIMPLE"), std::string::npos) << why;

  AlgSelection ring;
  ASSERT_TRUE(parseAlgSelection("ring", &ring).ok());
  EXPECT_EQ(selectedPairs(ring, CollFunc::AlltoAll), 0);
  why = explainUnservable(ring, CollFunc::AlltoAll);
  EXPECT_NE(why.find("point-to-point"), std::string::npos) << why;
}

TEST(AlgSelection, PairNames) {
  EXPECT_EQ(pairNames(kTreeLL | kRingSimple), "TREE_LL, RING_SIMPLE");
  EXPECT_EQ(pairNames(0), "");
}

}  // namespace
}  // namespace braid
