// What a communicator computes to plan its collectives, for a few layouts given as
// <hosts>/<ranks per host> (block placement):
//   plan/rank_layout: RankLayout::fromHostHashes, the layout from every rank's host hash
//       (once per communicator);
//   plan/ring_order: buildRingOrder (once per communicator);
//   plan/tree_links: buildTreeLinks of one rank in both trees (once per tree channel);
//   plan/choose_algorithm: chooseAlgorithm for an AllReduce of 8 B, 1 MiB and 256 MiB
//       (per collective call: this one is on every operation's path).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "micro_bench.h"
#include "planning/algo_proto.h"
#include "planning/rank_layout.h"
#include "planning/ring.h"
#include "planning/tree.h"
#include "planning/tuning.h"

namespace braid::bench {
namespace {

// Rank r on host r / perHost; hashes that look unrelated, as real host hashes do.
std::vector<uint64_t> hostHashes(int hosts, int perHost) {
  std::vector<uint64_t> hashes;
  for (int h = 0; h < hosts; ++h) hashes.insert(hashes.end(), perHost, 0x9e3779b97f4a7c15ull * (h + 1u));
  return hashes;
}

RankLayout layoutOf(const benchmark::State& state) {
  return RankLayout::fromHostHashes(hostHashes(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))), 0);
}

void rankLayoutBenchmark(benchmark::State& state) {
  const std::vector<uint64_t> hashes = hostHashes(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    RankLayout layout = RankLayout::fromHostHashes(hashes, 0);
    benchmark::DoNotOptimize(layout);
  }
}

void ringOrderBenchmark(benchmark::State& state) {
  const RankLayout layout = layoutOf(state);
  for (auto _ : state) {
    std::vector<int> order = buildRingOrder(layout);
    benchmark::DoNotOptimize(order);
  }
}

void treeLinksBenchmark(benchmark::State& state) {
  const RankLayout layout = layoutOf(state);
  // A rank that heads its host in the middle of the tree: interior in one of the two trees.
  const int rank = (layout.nNodes / 2) * static_cast<int>(state.range(1));
  for (auto _ : state) {
    TreeLinks links[2] = {buildTreeLinks(layout, rank, 0), buildTreeLinks(layout, rank, 1)};
    benchmark::DoNotOptimize(links);
  }
}

// The inputs DataPath::init gives the model in host mode (shared memory and sockets).
TuningInputs hostModeInputs(const RankLayout& layout) {
  TuningInputs in{};
  in.nranks = static_cast<int>(layout.nodeOfRank.size());
  in.nNodes = layout.nNodes;
  for (const auto& node : layout.ranksOfNode)
    in.maxLocalRanks = std::max(in.maxLocalRanks, static_cast<int>(node.size()));
  in.intra = LinkModel{6.0, 1.0};
  in.inter = LinkModel{1.2, 25.0};
  in.nChannels = 4;
  return in;
}

void chooseAlgorithmBenchmark(benchmark::State& state) {
  const TuningInputs in = hostModeInputs(layoutOf(state));
  const AlgoProtoPolicy policy;
  for (auto _ : state) {
    for (size_t bytes : {size_t{8}, size_t{1} << 20, size_t{256} << 20}) {
      AlgoChoice choice = chooseAlgorithm(CollFunc::AllReduce, bytes, in, policy);
      benchmark::DoNotOptimize(choice);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 3);
}

}  // namespace

void registerPlanBenchmarks(const MicroOptions& /*options*/) {
  const std::vector<std::vector<int64_t>> layouts = {{1, 8}, {4, 8}, {64, 8}, {512, 8}};
  for (const auto& [name, fn] :
       {std::pair<const char*, void (*)(benchmark::State&)>{"plan/rank_layout", rankLayoutBenchmark},
        {"plan/ring_order", ringOrderBenchmark},
        {"plan/tree_links", treeLinksBenchmark},
        {"plan/choose_algorithm", chooseAlgorithmBenchmark}}) {
    auto* b = benchmark::RegisterBenchmark(name, fn);
    b->ArgNames({"hosts", "per_host"});
    for (const auto& layout : layouts) b->Args(layout);
  }
}

}  // namespace braid::bench
