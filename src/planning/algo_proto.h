// NCCL_ALGO and NCCL_PROTO: which algorithms and protocols the planner may use, per
// collective function, in NCCL's grammar:
//   "ring,tree"                       only these
//   "^tree"                           all but these
//   "allreduce:tree;allgather:ring"   clauses separated by ';', each optionally for one
//                                     function (a clause without one applies to all; later
//                                     clauses replace earlier ones for what they cover)
// Names are case-insensitive. A bad piece never makes the setting fail: it becomes a
// warning and the rest still applies, as in NCCL.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace braid {

// Direct (Braid's own, host mode): every rank of one host reads every rank's contribution
// from shared memory in one hop (exec/host/direct_collectives.h); data published as plain
// bytes and a counter, i.e. with the Simple protocol only.
// Hier (Braid's own, AllReduce over several hosts with the same number of ranks each): a
// reduce-scatter over each host's ranks, an all-reduce of each slice between the ranks of
// the same local index on every host, an all-gather over each host's ranks
// (kernels/algorithms/hier_all_reduce.h). Each host's link carries 2(H-1)/H of the data
// instead of the flat ring's 2(n-1)/n.
enum class Algorithm : uint8_t { Ring, Tree, Direct, Hier };
enum class Protocol : uint8_t { Simple, LL };
enum class CollFunc : uint8_t {
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  AllReduce,
  SendRecv,
  AlltoAll,
  Gather,
  Scatter
};

constexpr int kNumAlgorithms = 4;
constexpr int kNumProtocols = 2;
constexpr int kNumCollFuncs = 9;

// NCCL's spelling: "Ring", "Tree" (and Braid's "Direct"); "Simple", "LL"; "AllReduce", ...
const char* algorithmName(Algorithm algo);
const char* protocolName(Protocol proto);
const char* collFuncName(CollFunc func);

// Bit masks over Algorithm and Protocol values.
constexpr uint8_t algorithmBit(Algorithm algo) { return static_cast<uint8_t>(1u << static_cast<int>(algo)); }
constexpr uint8_t protocolBit(Protocol proto) { return static_cast<uint8_t>(1u << static_cast<int>(proto)); }
constexpr uint8_t kAllAlgorithms = (1u << kNumAlgorithms) - 1;
constexpr uint8_t kAllProtocols = (1u << kNumProtocols) - 1;

// SendRecv, AlltoAll, Gather and Scatter run on the p2p path, where no algorithm applies.
bool usesP2pPath(CollFunc func);
// A fact of Braid: Tree and Hier run AllReduce only; Ring and Direct run every collective but the
// p2p ones (whether a communicator can run Direct at all is AlgoProtoPolicy::unavailable).
bool algorithmApplies(CollFunc func, Algorithm algo);
// Whether `algo` runs with `proto` (Direct: Simple only).
bool pairApplies(Algorithm algo, Protocol proto);
uint8_t applicableAlgorithms(CollFunc func);

struct AlgoProtoPolicy {
  // Per CollFunc (indexed by its value): the algorithms and protocols the settings allow.
  // Never empty after parsing: a setting that allows nothing Braid implements falls back
  // to everything (with a warning).
  uint8_t algorithms[kNumCollFuncs];
  uint8_t protocols[kNumCollFuncs];
  // Algorithms this communicator cannot run whatever the settings (Direct outside host mode
  // on one host), and why, for messages; the planner sets them.
  uint8_t unavailable = 0;
  std::string unavailableWhy;
  // The settings as given ("" when unset), quoted in messages.
  std::string algoSetting;
  std::string protoSetting;

  AlgoProtoPolicy();

  bool allowsAlgorithm(CollFunc func, Algorithm algo) const;
  bool allowsProtocol(CollFunc func, Protocol proto) const;
  // What the planner may pick from: the allowed algorithms that apply to `func` and are
  // available, or all those when the user allowed none of them (explainInapplicable says
  // so). 0 for the p2p functions.
  uint8_t usableAlgorithms(CollFunc func) const;
  uint8_t usableProtocols(CollFunc func) const;
  // Empty unless NCCL_ALGO forced algorithms none of which can run `func`: then the
  // message to report once, e.g. "NCCL_ALGO=tree does not apply to AllGather; using Ring".
  std::string explainInapplicable(CollFunc func) const;
  // Whether that message is about this communicator (a forced algorithm that applies to
  // `func` but cannot run here, e.g. Hier on one host: worth a warning) rather than about
  // the function (Tree or Hier for an AllGather: NCCL falls back without a word, and a
  // setting meant for the all-reduce need not warn on every other collective).
  bool forcedOntoUnavailable(CollFunc func) const;
};

// Parse NCCL_ALGO into out's algorithm half (resetting it first; the protocol half is
// left alone). Problems are appended to `warnings` (may be null) as full sentences.
// Fails only when `out` is null.
Status parseAlgoPolicy(const std::string& text, AlgoProtoPolicy* out, std::vector<std::string>* warnings);
// The same for NCCL_PROTO and out's protocol half.
Status parseProtoPolicy(const std::string& text, AlgoProtoPolicy* out, std::vector<std::string>* warnings);

}  // namespace braid
