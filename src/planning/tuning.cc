#include "planning/tuning.h"

#include "kernels/algorithms/channel_share.h"
#include "planning/alg_selection.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace braid {

namespace {

// Per operation, whatever the choice: enqueue, kernel launch, proxy wake-up. It never
// changes which choice wins; it keeps the predictions of tiny operations realistic.
constexpr double kLaunchOverheadUs = 4.0;
// LL: the receiver polls flags stored next to the data, so a step needs neither a memory
// fence nor a separate flag write: about half of a hop's latency...
constexpr double kLLLatencyFactor = 0.5;
// ...but every 8-byte word of data travels with an 8-byte flag: half the bandwidth.
constexpr double kLLBandwidthFactor = 0.5;
// Simple: every step ends with a fence, a flag (counter) write and the peer's poll of it.
constexpr double kSimpleStepOverheadUs = 2.0;
// Tree ranks reduce the data going up and forward the data coming down at the same time;
// two streams through each rank pipeline a little worse than the ring's single one.
constexpr double kTreeBandwidthEfficiency = 0.9;
// Direct: a rank publishes its slot and then looks at every other rank's counter, one
// cache line each, before it reads their slots.
constexpr double kDirectPerPeerUs = 0.05;
// ...and then copies and reduces on one thread, in cache for the sizes it wins: its data
// moves at that speed, not at a link's (measured here: 2 ranks, 32 KiB in 6.6 us).
constexpr double kDirectCopyGBs = 16.0;
// A step in which every rank of a host acts, where the host's ranks outnumber its cores:
// each rank more per core waits for a turn on it, a wake-up and a context switch. Measured
// across hosts (2 x 2 ranks on 2 cores: Hier, four such steps, took about 60 us more than
// the tree, whose chain has one rank of a host act at a time; performance.md).
constexpr double kTurnUs = 15.0;
// Floor for link bandwidths, so that unset or nonsensical inputs never divide by zero.
constexpr double kMinBandwidthGBs = 1e-3;
// 1 GB/s moves 1e3 bytes per microsecond.
constexpr double kBytesPerUsPerGBs = 1e3;
// Smallest share worth a channel: one pass of a 512-thread block over its data, 8 bytes a
// thread for LL (the data half of a 16-byte line) and 64 bytes a thread for Simple.
constexpr size_t kMinChannelBytesLL = 512 * 8;
constexpr size_t kMinChannelBytesSimple = 512 * 64;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Inputs clamped to what the formulas can use: at least one rank, node, local rank and
// channel, and a positive bandwidth.
struct Sanitized {
  int nranks;
  int nNodes;
  int maxLocalRanks;
  int nChannels;
  int ranksPerCore;
  bool exchangeOfTwo;
  LinkModel intra;
  LinkModel inter;
};

LinkModel sanitizeLink(LinkModel link) {
  // !(x >= y) also catches NaN.
  if (!(link.bandwidthGBs >= kMinBandwidthGBs)) link.bandwidthGBs = kMinBandwidthGBs;
  if (!(link.latencyUs >= 0)) link.latencyUs = 0;
  return link;
}

Sanitized sanitize(const TuningInputs& in) {
  Sanitized s;
  s.nranks = std::max(in.nranks, 1);
  s.nNodes = std::clamp(in.nNodes, 1, s.nranks);
  s.maxLocalRanks = std::clamp(in.maxLocalRanks, 1, s.nranks);
  s.nChannels = std::max(in.nChannels, 1);
  s.ranksPerCore = std::max(in.ranksPerCore, 1);
  s.exchangeOfTwo = in.exchangeOfTwo;
  s.intra = sanitizeLink(in.intra);
  s.inter = sanitizeLink(in.inter);
  return s;
}

// One pipeline step over `link` with `proto`.
double hopUs(const LinkModel& link, Protocol proto) {
  return proto == Protocol::LL ? link.latencyUs * kLLLatencyFactor : link.latencyUs + kSimpleStepOverheadUs;
}

// What a step in which `acting` ranks of a host act at once costs on top of its hop when
// ranks outnumber the cores: a turn for each rank more per core, at most one per rank.
double turnUs(const Sanitized& s, int acting) {
  return (std::clamp(s.ranksPerCore, 1, std::max(acting, 1)) - 1) * kTurnUs;
}

// Bytes per microsecond over the slowest link the data crosses, on every channel.
double bytesPerUs(const Sanitized& s, Protocol proto) {
  const LinkModel& slowest = s.nNodes > 1 ? s.inter : s.intra;
  double protoFactor = proto == Protocol::LL ? kLLBandwidthFactor : 1.0;
  return slowest.bandwidthGBs * kBytesPerUsPerGBs * s.nChannels * protoFactor;
}

int ceilLog2(int n) {
  int log = 0;
  while ((1 << log) < n) ++log;
  return log;
}

// One rank: nothing crosses a link; the operation is a local copy (protocols do not apply).
double singleRankUs(size_t bytes, const Sanitized& s) {
  return kLaunchOverheadUs + static_cast<double>(bytes) / bytesPerUs(s, Protocol::Simple);
}

// Whether a ring all-reduce of two ranks over `share` bytes per channel is an exchange:
// one hop instead of two (ring_all_reduce.h).
bool exchanges(const Sanitized& s, double share) {
  return s.exchangeOfTwo && share <= static_cast<double>(kExchangeMaxShareBytes);
}

double ringUs(CollFunc func, Protocol proto, size_t bytes, const Sanitized& s) {
  int n = s.nranks;
  // AllReduce is a reduce-scatter then an all-gather: two laps. Broadcast and Reduce are a
  // pipelined chain along the ring: n-1 hops of latency, but each byte crosses each link
  // once.
  int steps = func == CollFunc::AllReduce ? 2 * (n - 1) : n - 1;
  if (func == CollFunc::AllReduce && n == 2 && exchanges(s, static_cast<double>(bytes) / s.nChannels)) steps = 1;
  double volume;
  switch (func) {
    case CollFunc::AllReduce:
      volume = 2.0 * (n - 1) / n;
      break;
    case CollFunc::AllGather:
    case CollFunc::ReduceScatter:
      volume = static_cast<double>(n - 1) / n;
      break;
    default:
      volume = 1.0;
      break;
  }
  // Hosts are contiguous in the ring, so nNodes of its n links cross hosts; the chain of
  // steps a chunk follows crosses them in that proportion (rounded up).
  int interSteps = s.nNodes > 1 ? std::min(steps, (steps * s.nNodes + n - 1) / n) : 0;
  // Every rank acts in every step, so across hosts a host's ranks take turns on its cores
  // at each. (On one host, where Direct and single copy take what the ring loses, this was
  // not measured, and the model leaves it out.)
  const double turn = s.nNodes > 1 ? turnUs(s, s.maxLocalRanks) : 0.0;
  double latency = kLaunchOverheadUs + interSteps * (hopUs(s.inter, proto) + turn) +
                   (steps - interSteps) * (hopUs(s.intra, proto) + turn);
  return latency + static_cast<double>(bytes) * volume / bytesPerUs(s, proto);
}

double treeAllReduceUs(Protocol proto, size_t bytes, const Sanitized& s) {
  // Reduce up the tree, then broadcast down: each way is ceil(log2(nNodes)) host hops (the
  // depth of Braid's binary tree over hosts) plus the longest chain inside a host.
  double oneWay = ceilLog2(s.nNodes) * hopUs(s.inter, proto) + (s.maxLocalRanks - 1) * hopUs(s.intra, proto);
  double latency = kLaunchOverheadUs + 2 * oneWay;
  // Data volume per rank, in units of `bytes`: channels alternate between the two trees,
  // and each carries its channels' share of the data. A rank that is interior in a tree
  // sends 3 times that tree's share (its sum up, the result to two children), a leaf once
  // (up; it only receives coming down); every rank is interior in one tree and a leaf in
  // the other. With c channels the busier tree has ceil(c/2) of them, so the busiest rank
  // sends (3 * ceil(c/2) + floor(c/2)) / c = (c + 2 * ceil(c/2)) / c: 2 for even c, 3 for
  // one channel (a single tree). Ring's 2(n-1)/n is always below 2, which is why ring wins
  // large AllReduces.
  int c = s.nChannels;
  double volume = static_cast<double>(c + 2 * ((c + 1) / 2)) / c;
  return latency + static_cast<double>(bytes) * volume / (bytesPerUs(s, proto) * kTreeBandwidthEfficiency);
}

// Hier (kernels/algorithms/hier_all_reduce.h), with L ranks on each of H hosts: a ring
// reduce-scatter over each host's L ranks, a ring all-reduce of each rank's slice (1/L of
// the data) between the H ranks of its local index, a ring all-gather over the host's ranks,
// one after the other. Each host's L slices cross its link side by side, so the link carries
// 2(H-1)/H of the data where the flat ring's carries 2(n-1)/n of it; the phases inside the
// host move (L-1)/L of it each at shared-memory speed. All L local ranks act in every
// step, so where they outnumber the cores each step waits for turns (turnUs).
double hierAllReduceUs(Protocol proto, size_t bytes, const Sanitized& s, int localRanks) {
  const int l = localRanks;
  const int h = s.nranks / l;
  const double size = static_cast<double>(bytes);
  Sanitized inside = s;
  inside.nNodes = 1;  // bytesPerUs of the phases inside a host: the intra link
  const double turn = turnUs(s, l);
  const double intraUs =
      2 * (l - 1) * (hopUs(s.intra, proto) + turn) + 2.0 * (l - 1) / l * size / bytesPerUs(inside, proto);
  // (Its cross-host rings of two hosts exchange small shares too, saving a hop, which the
  // model leaves out: credited, it put 2 x 2 ranks on 2 cores onto Hier/LL at 16 KiB, which
  // ran at 74-167 us against the tree's 50-69.)
  const double interUs = 2 * (h - 1) * (hopUs(s.inter, proto) + turn) + 2.0 * (h - 1) / h * size / bytesPerUs(s, proto);
  return kLaunchOverheadUs + intraUs + interUs;
}

// Direct (exec/host/direct_collectives.h): one hop per slot-sized piece, on one thread.
// Each rank copies its contribution into its slot and reads what it needs from the others':
// n inputs for AllReduce and Reduce, every block for AllGather, its block of every input for
// ReduceScatter, the root's for Broadcast.
double directUs(CollFunc func, size_t bytes, const Sanitized& s, size_t slotBytes) {
  const double n = s.nranks;
  const double size = static_cast<double>(bytes);
  double contribution = size;
  double read = size;
  switch (func) {
    case CollFunc::AllReduce:
    case CollFunc::Reduce:
      read = n * size;
      break;
    case CollFunc::AllGather:
      contribution = size / n;
      break;
    default:
      break;
  }
  const double pieces = std::max(1.0, std::ceil(contribution / static_cast<double>(slotBytes)));
  const double perPiece = hopUs(s.intra, Protocol::LL) + kDirectPerPeerUs * (n - 1);
  const double copyBytesPerUs = kDirectCopyGBs * kBytesPerUsPerGBs;
  return kLaunchOverheadUs + pieces * perPiece + (contribution + read) / copyBytesPerUs;
}

}  // namespace

double predictTimeUs(CollFunc func, Algorithm algo, Protocol proto, size_t bytes, const TuningInputs& in) {
  if (!algorithmApplies(func, algo) || !pairApplies(algo, proto)) return kInfinity;
  Sanitized s = sanitize(in);
  if (s.nranks == 1) return singleRankUs(bytes, s);
  switch (algo) {
    case Algorithm::Tree:
      return treeAllReduceUs(proto, bytes, s);
    case Algorithm::Direct:
      return in.directSlotBytes && s.nNodes == 1 ? directUs(func, bytes, s, in.directSlotBytes) : kInfinity;
    case Algorithm::Hier:
      if (in.hierLocalRanks < 2 || s.nNodes < 2 || s.nranks != in.hierLocalRanks * s.nNodes) return kInfinity;
      return hierAllReduceUs(proto, bytes, s, in.hierLocalRanks);
    case Algorithm::Ring:
      break;
  }
  return ringUs(func, proto, bytes, s);
}

double predictP2pTimeUs(Protocol proto, size_t bytes, const TuningInputs& in) {
  Sanitized s = sanitize(in);
  if (s.nranks == 1) return singleRankUs(bytes, s);
  const LinkModel& link = s.nNodes > 1 ? s.inter : s.intra;
  return kLaunchOverheadUs + hopUs(link, proto) + static_cast<double>(bytes) / bytesPerUs(s, proto);
}

int chooseChannelCount(Protocol proto, size_t bytes, int maxChannels) {
  size_t minShare = proto == Protocol::LL ? kMinChannelBytesLL : kMinChannelBytesSimple;
  size_t wanted = bytes / minShare;
  if (maxChannels < 1) return 1;
  return static_cast<int>(std::clamp<size_t>(wanted, 1, static_cast<size_t>(maxChannels)));
}

uint8_t usablePairs(CollFunc func, const AlgoProtoPolicy& policy) {
  uint8_t pairs = 0;
  for (Protocol proto : {Protocol::Simple, Protocol::LL}) {
    if (!(policy.usableProtocols(func) & protocolBit(proto))) continue;
    for (Algorithm algo : {Algorithm::Ring, Algorithm::Tree, Algorithm::Direct, Algorithm::Hier}) {
      if ((policy.usableAlgorithms(func) & algorithmBit(algo)) && pairApplies(algo, proto)) {
        pairs |= pairBit(algo, proto);
      }
    }
  }
  return pairs;
}

AlgoChoice chooseAlgorithm(CollFunc func, size_t bytes, const TuningInputs& in, const AlgoProtoPolicy& policy,
                           uint8_t pairs) {
  AlgoChoice best{Algorithm::Ring, Protocol::Simple, 1, kInfinity};
  uint8_t algorithms = policy.usableAlgorithms(func);
  uint8_t protocols = policy.usableProtocols(func);
  // Enumeration order sets the tie-breaks: Simple before LL, Ring before Tree before Direct
  // before Hier.
  for (Protocol proto : {Protocol::Simple, Protocol::LL}) {
    if (!(protocols & protocolBit(proto))) continue;
    TuningInputs withChannels = in;
    withChannels.nChannels = chooseChannelCount(proto, bytes, in.nChannels);
    auto consider = [&](Algorithm algo, double us) {
      if (us < best.predictedUs) best = AlgoChoice{algo, proto, withChannels.nChannels, us};
    };
    if (usesP2pPath(func)) {
      consider(Algorithm::Ring, predictP2pTimeUs(proto, bytes, withChannels));
      continue;
    }
    for (Algorithm algo : {Algorithm::Ring, Algorithm::Tree, Algorithm::Direct, Algorithm::Hier}) {
      if ((algorithms & algorithmBit(algo)) && (pairs & pairBit(algo, proto))) {
        if (algo != Algorithm::Direct) {
          consider(algo, predictTimeUs(func, algo, proto, bytes, withChannels));
          continue;
        }
        // Direct runs on one thread: one channel whatever the size.
        TuningInputs oneChannel = withChannels;
        oneChannel.nChannels = 1;
        double us = predictTimeUs(func, algo, proto, bytes, oneChannel);
        if (us < best.predictedUs) best = AlgoChoice{algo, proto, 1, us};
      }
    }
  }
  // What the settings left cannot run here (NCCL_ALGO=direct with NCCL_PROTO=LL): the ring,
  // which runs everything.
  if (best.predictedUs == kInfinity && !usesP2pPath(func)) {
    for (Protocol proto : {Protocol::Simple, Protocol::LL}) {
      if (!(protocols & protocolBit(proto))) continue;
      TuningInputs withChannels = in;
      withChannels.nChannels = chooseChannelCount(proto, bytes, in.nChannels);
      double us = predictTimeUs(func, Algorithm::Ring, proto, bytes, withChannels);
      if (us < best.predictedUs) best = AlgoChoice{Algorithm::Ring, proto, withChannels.nChannels, us};
    }
  }
  return best;
}

}  // namespace braid
