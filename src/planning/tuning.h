// A small latency/bandwidth model for choosing, per operation, the algorithm, protocol and
// number of channels. Predictions are in microseconds; what matters is their order, not
// their absolute value. The shape follows NCCL's model (time = latency per pipeline step x
// steps + bytes / bandwidth), with Braid's own, fewer constants (see tuning.cc).
#pragma once

#include <cstddef>

#include "planning/algo_proto.h"

namespace braid {

struct LinkModel {
  double bandwidthGBs;  // what one channel sustains over this link (1 GB/s = 1e9 B/s)
  double latencyUs;     // one hop, one way
};

struct TuningInputs {
  int nranks;
  int nNodes;
  int maxLocalRanks;  // ranks on the most populated host
  LinkModel intra;    // between ranks of one host
  LinkModel inter;    // between hosts
  int nChannels;      // channels the operation spreads over (bandwidth scales with them)
  // Direct's slot size (transport/shm/shm_board.h); 0 when the communicator cannot run
  // Direct (not host mode on one host with shared memory).
  size_t directSlotBytes = 0;
  // Hier's ranks per host (every host has as many); 0 when the communicator cannot run Hier
  // (one host, hosts of different sizes, one rank per host).
  int hierLocalRanks = 0;
  // Ranks that take turns on each core of the machine (1: a core each). A step in which
  // every rank of a host acts (the ring's across hosts, Hier's) then waits for turns on
  // the cores, which the model adds to its hops; the tree's chain has one act at a time.
  int ranksPerCore = 1;
  // Host mode, where a ring of two ranks crosses the network (two hosts, or no shared
  // memory): its all-reduce exchanges for channel shares up to kExchangeMaxShareBytes
  // (kernels/algorithms/ring_all_reduce.h), one hop where the ring takes two. (Hier's
  // cross-host rings of two hosts exchange too; its model does not count on it.)
  bool exchangeOfTwo = false;
};

// Predicted time of `func` with `algo` and `proto` on `bytes` (the size of the full
// result: the whole buffer for AllReduce and Broadcast, the gathered buffer for AllGather,
// the input for ReduceScatter). +infinity when `algo` cannot run `func` (Tree for anything
// but AllReduce, any algorithm for the p2p functions) or not with `proto` (Direct with LL),
// or the communicator cannot run it (Direct without directSlotBytes). Degenerate inputs (one rank, no
// channels, zero bandwidth) give finite, positive times.
double predictTimeUs(CollFunc func, Algorithm algo, Protocol proto, size_t bytes, const TuningInputs& in);
// The p2p path: one transfer of `bytes` to one peer over the slowest link kind present
// (the peer is not known here).
double predictP2pTimeUs(Protocol proto, size_t bytes, const TuningInputs& in);

// Channels worth using for `bytes` with `proto`: enough that each carries at least a
// minimum share (smaller shares only add synchronisation), at least 1, at most maxChannels.
int chooseChannelCount(Protocol proto, size_t bytes, int maxChannels);

struct AlgoChoice {
  Algorithm algo;  // for the p2p functions: Ring, and meaningless (they use the p2p path)
  Protocol proto;
  int nChannels;  // from chooseChannelCount, with in.nChannels as the maximum
  double predictedUs;
};

// The fastest combination the policy allows (AlgoProtoPolicy::usableAlgorithms and
// usableProtocols) among those that apply to `func`; ties go to Ring and to Simple.
// `pairs` (pairBit of alg_selection.h) narrows it further, for a call's own selection;
// the caller makes sure that leaves something.
AlgoChoice chooseAlgorithm(CollFunc func, size_t bytes, const TuningInputs& in, const AlgoProtoPolicy& policy,
                           uint8_t pairs = 0xff);
// The pairs the policy lets `func` use (pairBit of alg_selection.h).
uint8_t usablePairs(CollFunc func, const AlgoProtoPolicy& policy);

}  // namespace braid
