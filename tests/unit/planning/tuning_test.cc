// The latency/bandwidth model and the choice it drives.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "planning/alg_selection.h"
#include "planning/tuning.h"

namespace braid {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kGiB = 1024 * kMiB;

constexpr LinkModel kNvLink = {40.0, 0.6};
constexpr LinkModel kNetwork = {12.0, 5.0};

TuningInputs multiNode(int nNodes, int perNode, int nChannels = 16) {
  return TuningInputs{nNodes * perNode, nNodes, perNode, kNvLink, kNetwork, nChannels};
}

TuningInputs singleNode(int nranks, int nChannels = 16) {
  return TuningInputs{nranks, 1, nranks, kNvLink, kNetwork, nChannels};
}

// Host mode on one host, as the planner describes it (shared memory within the host), with
// Direct's board.
TuningInputs hostModeOneHost(int nranks) {
  TuningInputs in{nranks, 1, nranks, LinkModel{6.0, 1.0}, LinkModel{1.2, 25.0}, 4};
  in.directSlotBytes = 64 * kKiB;
  return in;
}

constexpr CollFunc kCollectiveFuncs[] = {CollFunc::Broadcast, CollFunc::Reduce, CollFunc::AllGather,
                                         CollFunc::ReduceScatter, CollFunc::AllReduce};

std::vector<size_t> sizes() {
  std::vector<size_t> out = {0};
  for (size_t bytes = 1; bytes <= kGiB; bytes *= 2) out.push_back(bytes);
  return out;
}

TEST(Tuning, MonotonicInSize) {
  const CollFunc funcs[] = {CollFunc::Broadcast, CollFunc::Reduce, CollFunc::AllGather, CollFunc::ReduceScatter,
                            CollFunc::AllReduce};
  for (const TuningInputs& in : {multiNode(4, 8), singleNode(8), multiNode(16, 1), singleNode(1)}) {
    for (CollFunc func : funcs) {
      for (Algorithm algo : {Algorithm::Ring, Algorithm::Tree}) {
        if (!algorithmApplies(func, algo)) continue;
        for (Protocol proto : {Protocol::Simple, Protocol::LL}) {
          double previous = 0;
          for (size_t bytes : sizes()) {
            double us = predictTimeUs(func, algo, proto, bytes, in);
            EXPECT_TRUE(std::isfinite(us));
            EXPECT_GT(us, 0);
            EXPECT_GE(us, previous) << collFuncName(func) << "/" << algorithmName(algo) << "/" << protocolName(proto)
                                    << " at " << bytes;
            previous = us;
          }
        }
      }
    }
    double previous = 0;
    for (size_t bytes : sizes()) {
      double us = predictP2pTimeUs(Protocol::Simple, bytes, in);
      EXPECT_GE(us, previous);
      previous = us;
    }
  }
}

TEST(Tuning, InapplicableCombinationsAreInfinite) {
  TuningInputs in = multiNode(2, 8);
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::AllGather, Algorithm::Tree, Protocol::Simple, kMiB, in)));
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::Broadcast, Algorithm::Tree, Protocol::LL, kMiB, in)));
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::SendRecv, Algorithm::Ring, Protocol::Simple, kMiB, in)));
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::AlltoAll, Algorithm::Tree, Protocol::Simple, kMiB, in)));
}

TEST(Tuning, LatencyGrowsWithRanksForRingAndWithHostsLogarithmicallyForTree) {
  double ring8 = predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::LL, 8, multiNode(8, 8));
  double ring64 = predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::LL, 8, multiNode(64, 8));
  double tree8 = predictTimeUs(CollFunc::AllReduce, Algorithm::Tree, Protocol::LL, 8, multiNode(8, 8));
  double tree64 = predictTimeUs(CollFunc::AllReduce, Algorithm::Tree, Protocol::LL, 8, multiNode(64, 8));
  EXPECT_GT(ring64 - ring8, 5 * (tree64 - tree8));
  // Broadcast: the chain's latency grows with n, its bandwidth term does not.
  double bcastSmall8 = predictTimeUs(CollFunc::Broadcast, Algorithm::Ring, Protocol::Simple, 8, singleNode(8));
  double bcastSmall4 = predictTimeUs(CollFunc::Broadcast, Algorithm::Ring, Protocol::Simple, 8, singleNode(4));
  EXPECT_GT(bcastSmall8, bcastSmall4);
  double bcastBig8 = predictTimeUs(CollFunc::Broadcast, Algorithm::Ring, Protocol::Simple, kGiB, singleNode(8));
  double bcastBig4 = predictTimeUs(CollFunc::Broadcast, Algorithm::Ring, Protocol::Simple, kGiB, singleNode(4));
  EXPECT_NEAR((bcastBig8 - bcastSmall8) / (bcastBig4 - bcastSmall4), 1.0, 1e-6);
}

TEST(Tuning, RingDataVolumeFactors) {
  // Bandwidth terms: what a size adds on top of the latency, per function.
  TuningInputs in = singleNode(4);
  auto bandwidthTerm = [&](CollFunc func) {
    return predictTimeUs(func, Algorithm::Ring, Protocol::Simple, kGiB, in) -
           predictTimeUs(func, Algorithm::Ring, Protocol::Simple, 0, in);
  };
  double allReduce = bandwidthTerm(CollFunc::AllReduce);
  EXPECT_NEAR(bandwidthTerm(CollFunc::AllGather) / allReduce, 0.5, 1e-9);  // (n-1)/n vs 2(n-1)/n
  EXPECT_NEAR(bandwidthTerm(CollFunc::ReduceScatter) / allReduce, 0.5, 1e-9);
  EXPECT_NEAR(bandwidthTerm(CollFunc::Broadcast) / allReduce, 1.0 / 1.5, 1e-9);  // 1 vs 2*3/4
  // Channels scale the bandwidth.
  TuningInputs fewer = in;
  fewer.nChannels = 4;
  double fewerTerm = predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::Simple, kGiB, fewer) -
                     predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::Simple, 0, fewer);
  EXPECT_NEAR(fewerTerm / allReduce, 4.0, 1e-9);
}

TEST(Tuning, MultiNodeUsesTheNetworkBandwidth) {
  TuningInputs in = multiNode(2, 4);
  TuningInputs fasterNet = in;
  fasterNet.inter.bandwidthGBs *= 2;
  TuningInputs fasterNvLink = in;
  fasterNvLink.intra.bandwidthGBs *= 2;
  double base = predictTimeUs(CollFunc::AllGather, Algorithm::Ring, Protocol::Simple, kGiB, in);
  EXPECT_LT(predictTimeUs(CollFunc::AllGather, Algorithm::Ring, Protocol::Simple, kGiB, fasterNet), 0.6 * base);
  EXPECT_DOUBLE_EQ(predictTimeUs(CollFunc::AllGather, Algorithm::Ring, Protocol::Simple, kGiB, fasterNvLink), base);
}

TEST(Tuning, TreeBeatsRingForSmallMultiNodeAllReduceAndRingWinsLarge) {
  AlgoProtoPolicy policy;
  for (int nNodes : {2, 4, 16, 64}) {
    TuningInputs in = multiNode(nNodes, 8);
    SCOPED_TRACE(::testing::Message() << nNodes << " nodes");
    for (Protocol proto : {Protocol::Simple, Protocol::LL}) {
      // One crossover: tree below it, ring above. Ring's latency grows with the 8 * nNodes
      // ranks, so the crossover moves up with the job (past 1 GiB at 512 ranks).
      int switches = 0;
      bool treeWins = true;
      for (size_t bytes = 1 * kKiB; bytes <= 256 * kGiB; bytes *= 2) {
        bool treeWinsHere = predictTimeUs(CollFunc::AllReduce, Algorithm::Tree, proto, bytes, in) <
                            predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, proto, bytes, in);
        if (bytes == 1 * kKiB) {
          EXPECT_TRUE(treeWinsHere);
        }
        if (treeWinsHere != treeWins) ++switches;
        treeWins = treeWinsHere;
      }
      EXPECT_FALSE(treeWins) << "ring wins large AllReduces";
      EXPECT_EQ(switches, 1);
    }
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, 1 * kKiB, in, policy).algo, Algorithm::Tree);
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, 256 * kGiB, in, policy).algo, Algorithm::Ring);
    if (nNodes <= 16) {
      EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, kGiB, in, policy).algo, Algorithm::Ring);
    }
  }
  // One host: the tree is a chain as long as the ring, and ring moves less data.
  EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, 1 * kKiB, singleNode(8), policy).algo, Algorithm::Ring);
}

TEST(Tuning, TreeWithOneChannelCarriesMore) {
  // A single channel uses a single tree, whose interior ranks send three times the data.
  TuningInputs one = multiNode(4, 2, 1);
  TuningInputs two = multiNode(4, 2, 2);
  auto bandwidthTerm = [](const TuningInputs& in) {
    return predictTimeUs(CollFunc::AllReduce, Algorithm::Tree, Protocol::Simple, kGiB, in) -
           predictTimeUs(CollFunc::AllReduce, Algorithm::Tree, Protocol::Simple, 0, in);
  };
  EXPECT_NEAR(bandwidthTerm(one) / bandwidthTerm(two), 3.0 / 2.0 * 2.0, 1e-9);
}

TEST(Tuning, LLForTinySimpleForLarge) {
  AlgoProtoPolicy policy;
  for (const TuningInputs& in : {multiNode(4, 8), singleNode(8), multiNode(32, 1)}) {
    for (CollFunc func : {CollFunc::AllReduce, CollFunc::AllGather, CollFunc::Broadcast, CollFunc::SendRecv}) {
      SCOPED_TRACE(collFuncName(func));
      EXPECT_EQ(chooseAlgorithm(func, 64, in, policy).proto, Protocol::LL);
      EXPECT_EQ(chooseAlgorithm(func, 256 * kMiB, in, policy).proto, Protocol::Simple);
    }
    EXPECT_LT(predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::LL, 8, in),
              predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::Simple, 8, in));
    EXPECT_GT(predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::LL, kGiB, in),
              predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::Simple, kGiB, in));
  }
}

TEST(Tuning, ChoiceIsTheMinimumOfThePredictions) {
  AlgoProtoPolicy policy;
  TuningInputs in = multiNode(8, 4);
  for (size_t bytes : sizes()) {
    AlgoChoice choice = chooseAlgorithm(CollFunc::AllReduce, bytes, in, policy);
    for (Protocol proto : {Protocol::Simple, Protocol::LL}) {
      TuningInputs withChannels = in;
      withChannels.nChannels = chooseChannelCount(proto, bytes, in.nChannels);
      for (Algorithm algo : {Algorithm::Ring, Algorithm::Tree}) {
        EXPECT_LE(choice.predictedUs, predictTimeUs(CollFunc::AllReduce, algo, proto, bytes, withChannels));
      }
    }
    TuningInputs chosen = in;
    chosen.nChannels = choice.nChannels;
    EXPECT_DOUBLE_EQ(choice.predictedUs, predictTimeUs(CollFunc::AllReduce, choice.algo, choice.proto, bytes, chosen));
  }
}

TEST(Tuning, PolicyRestrictsTheChoice) {
  TuningInputs in = multiNode(16, 8);
  std::vector<std::string> warnings;
  AlgoProtoPolicy ringOnly;
  ASSERT_TRUE(parseAlgoPolicy("ring", &ringOnly, &warnings).ok());
  AlgoProtoPolicy treeOnly;
  ASSERT_TRUE(parseAlgoPolicy("allreduce:tree", &treeOnly, &warnings).ok());
  AlgoProtoPolicy simpleOnly;
  ASSERT_TRUE(parseProtoPolicy("simple", &simpleOnly, &warnings).ok());
  AlgoProtoPolicy llOnly;
  ASSERT_TRUE(parseProtoPolicy("ll", &llOnly, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
  for (size_t bytes : sizes()) {
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, bytes, in, ringOnly).algo, Algorithm::Ring);
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, bytes, in, treeOnly).algo, Algorithm::Tree);
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, bytes, in, simpleOnly).proto, Protocol::Simple);
    EXPECT_EQ(chooseAlgorithm(CollFunc::SendRecv, bytes, in, simpleOnly).proto, Protocol::Simple);
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllGather, bytes, in, llOnly).proto, Protocol::LL);
  }
  // Forcing Tree for a function it cannot run leaves Ring (explainInapplicable says why).
  AlgoProtoPolicy tree;
  ASSERT_TRUE(parseAlgoPolicy("tree", &tree, &warnings).ok());
  AlgoChoice choice = chooseAlgorithm(CollFunc::AllGather, kMiB, in, tree);
  EXPECT_EQ(choice.algo, Algorithm::Ring);
  EXPECT_TRUE(std::isfinite(choice.predictedUs));
}

TEST(Tuning, ChannelCount) {
  EXPECT_EQ(chooseChannelCount(Protocol::Simple, 0, 16), 1);
  EXPECT_EQ(chooseChannelCount(Protocol::LL, 1, 16), 1);
  EXPECT_EQ(chooseChannelCount(Protocol::Simple, kGiB, 16), 16);
  EXPECT_EQ(chooseChannelCount(Protocol::Simple, kGiB, 0), 1);
  EXPECT_EQ(chooseChannelCount(Protocol::LL, kGiB, -3), 1);
  // LL spreads smaller operations over more channels than Simple.
  EXPECT_GT(chooseChannelCount(Protocol::LL, 64 * kKiB, 32), chooseChannelCount(Protocol::Simple, 64 * kKiB, 32));
  int previous = 1;
  for (size_t bytes : sizes()) {
    int channels = chooseChannelCount(Protocol::Simple, bytes, 24);
    EXPECT_GE(channels, previous);
    EXPECT_LE(channels, 24);
    previous = channels;
  }
  AlgoProtoPolicy policy;
  EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, kGiB, multiNode(4, 8, 12), policy).nChannels, 12);
  EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, 64, multiNode(4, 8, 12), policy).nChannels, 1);
}

TEST(Tuning, DegenerateInputsStayFinite) {
  AlgoProtoPolicy policy;
  std::vector<TuningInputs> inputs = {
      singleNode(1),
      TuningInputs{1, 1, 1, kNvLink, kNetwork, 0},
      TuningInputs{0, 0, 0, kNvLink, kNetwork, 0},
      TuningInputs{-4, -1, -1, {0, 0}, {0, 0}, -2},
      TuningInputs{8, 2, 4, {0, 0}, {-1, -1}, 4},
      TuningInputs{8, 20, 99, {NAN, NAN}, kNetwork, 1},
  };
  for (const TuningInputs& in : inputs) {
    for (size_t bytes : {size_t{0}, size_t{1}, kMiB, kGiB}) {
      for (CollFunc func : {CollFunc::AllReduce, CollFunc::Broadcast, CollFunc::AllGather, CollFunc::ReduceScatter,
                            CollFunc::Reduce, CollFunc::SendRecv, CollFunc::Gather}) {
        AlgoChoice choice = chooseAlgorithm(func, bytes, in, policy);
        EXPECT_TRUE(std::isfinite(choice.predictedUs)) << collFuncName(func) << " " << bytes;
        EXPECT_GT(choice.predictedUs, 0);
        EXPECT_GE(choice.nChannels, 1);
      }
    }
  }
  // One rank: every applicable choice costs the same (a local copy); ties go to Ring/Simple.
  AlgoChoice choice = chooseAlgorithm(CollFunc::AllReduce, kMiB, singleNode(1), policy);
  EXPECT_EQ(choice.algo, Algorithm::Ring);
  EXPECT_EQ(choice.proto, Protocol::Simple);
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

TEST(Tuning, DirectTakesSmallOperationsOnOneHostAndTheRingLargeOnes) {
  AlgoProtoPolicy policy;
  for (int nranks : {2, 4, 8}) {
    TuningInputs in = hostModeOneHost(nranks);
    for (CollFunc func : kCollectiveFuncs) {
      AlgoChoice small = chooseAlgorithm(func, 64, in, policy);
      // Two ranks' ring takes one hop for all but AllReduce (two): a tie at best.
      if (nranks > 2 || func == CollFunc::AllReduce) {
        EXPECT_EQ(small.algo, Algorithm::Direct) << collFuncName(func) << " " << nranks;
        EXPECT_EQ(small.proto, Protocol::Simple);
        EXPECT_EQ(small.nChannels, 1);
      }
      AlgoChoice large = chooseAlgorithm(func, 64 * kMiB, in, policy);
      EXPECT_EQ(large.algo, Algorithm::Ring) << collFuncName(func) << " " << nranks;
    }
  }
}

TEST(Tuning, DirectNeedsItsBoardOneHostAndTheSimpleProtocol) {
  TuningInputs in = hostModeOneHost(4);
  EXPECT_TRUE(std::isfinite(predictTimeUs(CollFunc::AllReduce, Algorithm::Direct, Protocol::Simple, 8, in)));
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::AllReduce, Algorithm::Direct, Protocol::LL, 8, in)));
  TuningInputs noBoard = in;
  noBoard.directSlotBytes = 0;
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::AllReduce, Algorithm::Direct, Protocol::Simple, 8, noBoard)));
  TuningInputs twoHosts = in;
  twoHosts.nNodes = 2;
  twoHosts.maxLocalRanks = 2;
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::AllReduce, Algorithm::Direct, Protocol::Simple, 8, twoHosts)));
  // Pieces of a slot each cost a hop: more data than a slot holds costs more than one.
  double oneSlot = predictTimeUs(CollFunc::Broadcast, Algorithm::Direct, Protocol::Simple, 64 * kKiB, in);
  double twoSlots = predictTimeUs(CollFunc::Broadcast, Algorithm::Direct, Protocol::Simple, 64 * kKiB + 1, in);
  EXPECT_GT(twoSlots - oneSlot, 0.4);
}

TEST(Tuning, DirectOnlyWhereThePolicyAndTheProtocolAllowIt) {
  TuningInputs in = hostModeOneHost(2);
  std::vector<std::string> warnings;
  AlgoProtoPolicy ringOnly;
  ASSERT_TRUE(parseAlgoPolicy("ring", &ringOnly, &warnings).ok());
  EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, 8, in, ringOnly).algo, Algorithm::Ring);
  AlgoProtoPolicy llOnly;
  ASSERT_TRUE(parseProtoPolicy("ll", &llOnly, &warnings).ok());
  EXPECT_NE(chooseAlgorithm(CollFunc::AllReduce, 8, in, llOnly).algo, Algorithm::Direct);
  // Direct forced with LL only: nothing of that runs, so the ring with LL does.
  AlgoProtoPolicy directLl = llOnly;
  ASSERT_TRUE(parseAlgoPolicy("direct", &directLl, &warnings).ok());
  AlgoChoice fallback = chooseAlgorithm(CollFunc::AllReduce, 8, in, directLl);
  EXPECT_EQ(fallback.algo, Algorithm::Ring);
  EXPECT_EQ(fallback.proto, Protocol::LL);
  EXPECT_TRUE(std::isfinite(fallback.predictedUs));
  EXPECT_TRUE(warnings.empty());
  // A call's own selection names NCCL's rows, none of which is Direct.
  EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, 8, in, AlgoProtoPolicy(), pairBit(Algorithm::Ring, Protocol::LL)).algo,
            Algorithm::Ring);
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

// Host mode across hosts, as the planner describes it, with Hier available.
TuningInputs hostModeHosts(int nNodes, int perNode) {
  TuningInputs in{nNodes * perNode, nNodes, perNode, LinkModel{6.0, 1.0}, LinkModel{1.2, 25.0}, 4};
  in.hierLocalRanks = perNode;
  return in;
}

TEST(Tuning, HierRunsAllReduceOnlyWhereTheHostsAreAlike) {
  const TuningInputs in = hostModeHosts(2, 2);
  EXPECT_TRUE(std::isfinite(predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, Protocol::Simple, kMiB, in)));
  EXPECT_TRUE(std::isfinite(predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, Protocol::LL, kMiB, in)));
  for (CollFunc func : {CollFunc::Broadcast, CollFunc::Reduce, CollFunc::AllGather, CollFunc::ReduceScatter}) {
    EXPECT_TRUE(std::isinf(predictTimeUs(func, Algorithm::Hier, Protocol::Simple, kMiB, in)));
  }
  TuningInputs unavailable = in;
  unavailable.hierLocalRanks = 0;
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, Protocol::Simple, kMiB, unavailable)));
  TuningInputs oneHost = hostModeHosts(1, 4);
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, Protocol::Simple, kMiB, oneHost)));
  TuningInputs mismatched = in;  // ranks that are not hosts x local ranks
  mismatched.nranks = 5;
  EXPECT_TRUE(std::isinf(predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, Protocol::Simple, kMiB, mismatched)));
}

// Large AllReduces are the network's: Hier sends 2(H-1)/H of the buffer over each host's
// link where the ring sends 2(n-1)/n, so it wins them and the model chooses it.
TEST(Tuning, HierBeatsTheRingOnLargeAllReducesAcrossHosts) {
  AlgoProtoPolicy policy;
  for (auto [nNodes, perNode] : {std::pair{2, 2}, std::pair{4, 2}, std::pair{2, 8}}) {
    SCOPED_TRACE(::testing::Message() << nNodes << " x " << perNode);
    const TuningInputs in = hostModeHosts(nNodes, perNode);
    const double ring = predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::Simple, kGiB, in);
    const double hier = predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, Protocol::Simple, kGiB, in);
    const int n = nNodes * perNode;
    const double volumeRatio = (2.0 * (nNodes - 1) / nNodes) / (2.0 * (n - 1) / n);
    EXPECT_LT(hier, ring);
    EXPECT_GT(hier, volumeRatio * ring) << "the phases inside the host cost something too";
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, 256 * kMiB, in, policy).algo, Algorithm::Hier);
    // A faster network shortens Hier's network phase.
    TuningInputs fasterNet = in;
    fasterNet.inter.bandwidthGBs *= 2;
    EXPECT_LT(predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, Protocol::Simple, kGiB, fasterNet), 0.7 * hier);
  }
  // Not allowed: never chosen.
  std::vector<std::string> warnings;
  ASSERT_TRUE(parseAlgoPolicy("^hier", &policy, &warnings).ok());
  EXPECT_NE(chooseAlgorithm(CollFunc::AllReduce, 256 * kMiB, hostModeHosts(2, 2), policy).algo, Algorithm::Hier);
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

// Ranks that outnumber their machine's cores take turns on them at every step in which a
// host's ranks all act: the ring's across hosts, and Hier's. The model adds a turn per rank
// more per core (at most one per local rank) to those hops. On 2 x 2 ranks sharing 2 cores
// (one channel, as the planner sets it there) that hands sizes up to 16 KiB to the tree,
// whose chain has one rank of a host act at a time (it measured twice as fast as Hier
// there), and leaves larger ones to Hier. With a core per rank nothing changes.
TEST(Tuning, ARingOfTwoAcrossTheNetworkExchangesSmallShares) {
  // One rank on each of two hosts (host mode): the ring's all-reduce of two is an exchange
  // for shares up to kExchangeMaxShareBytes, one network hop instead of two.
  AlgoProtoPolicy policy;
  TuningInputs ring = hostModeHosts(2, 1);
  ring.hierLocalRanks = 0;
  ring.nChannels = 1;
  TuningInputs exchange = ring;
  exchange.exchangeOfTwo = true;
  for (Protocol proto : {Protocol::LL, Protocol::Simple}) {
    SCOPED_TRACE(static_cast<int>(proto));
    const double twoHops = predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, proto, 8, ring);
    const double oneHop = predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, proto, 8, exchange);
    EXPECT_LT(oneHop, twoHops);
    EXPECT_GT(oneHop, twoHops / 2) << "the launch and the bytes stay";
    // Larger shares keep the ring, and so does everything but the all-reduce.
    EXPECT_DOUBLE_EQ(predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, proto, kMiB, exchange),
                     predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, proto, kMiB, ring));
    EXPECT_DOUBLE_EQ(predictTimeUs(CollFunc::Broadcast, Algorithm::Ring, proto, 8, exchange),
                     predictTimeUs(CollFunc::Broadcast, Algorithm::Ring, proto, 8, ring));
  }
  // Three ranks are a ring whatever the flag says.
  TuningInputs three = hostModeHosts(3, 1);
  three.hierLocalRanks = 0;
  TuningInputs threeExchange = three;
  threeExchange.exchangeOfTwo = true;
  EXPECT_DOUBLE_EQ(predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::LL, 8, threeExchange),
                   predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, Protocol::LL, 8, three));
  // The tree's two hops lose to the exchange's one at small sizes.
  for (size_t bytes : {size_t{8}, size_t{1024}, size_t{16384}}) {
    SCOPED_TRACE(bytes);
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, bytes, exchange, policy).algo, Algorithm::Ring);
  }
}

TEST(Tuning, HierPaysForRanksThatTakeTurnsOnTheCores) {
  AlgoProtoPolicy policy;
  TuningInputs aCoreEach = hostModeHosts(2, 2);
  aCoreEach.nChannels = 1;
  TuningInputs twoPerCore = aCoreEach;
  twoPerCore.ranksPerCore = 2;
  TuningInputs eightPerCore = aCoreEach;
  eightPerCore.ranksPerCore = 8;
  for (Protocol proto : {Protocol::LL, Protocol::Simple}) {
    const double alone = predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, proto, 8, aCoreEach);
    const double turns = predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, proto, 8, twoPerCore);
    EXPECT_GT(turns, alone);
    EXPECT_DOUBLE_EQ(predictTimeUs(CollFunc::AllReduce, Algorithm::Hier, proto, 8, eightPerCore), turns)
        << "at most L = 2 rings take turns";
    EXPECT_GT(predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, proto, 8, twoPerCore),
              predictTimeUs(CollFunc::AllReduce, Algorithm::Ring, proto, 8, aCoreEach));
    // The tree's chain has one rank of a host act at a time: the same prediction.
    EXPECT_DOUBLE_EQ(predictTimeUs(CollFunc::AllReduce, Algorithm::Tree, proto, kMiB, twoPerCore),
                     predictTimeUs(CollFunc::AllReduce, Algorithm::Tree, proto, kMiB, aCoreEach));
  }
  for (size_t bytes : {size_t{8}, size_t{1024}, size_t{16384}}) {
    SCOPED_TRACE(bytes);
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, bytes, twoPerCore, policy).algo, Algorithm::Tree);
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, bytes, aCoreEach, policy).algo, Algorithm::Hier);
  }
  for (size_t bytes : {size_t{256} << 10, 64 * kMiB}) {
    EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, bytes, twoPerCore, policy).algo, Algorithm::Hier);
  }
  EXPECT_EQ(chooseAlgorithm(CollFunc::AllReduce, 64 * kMiB, aCoreEach, policy).algo, Algorithm::Hier);
}

}  // namespace
}  // namespace braid
