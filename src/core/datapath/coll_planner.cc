#include "core/datapath/coll_planner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "kernels/reduce/numeric_types.h"
#include "planning/alg_selection.h"
#include "transport/shm/shm_board.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// Bytes a collective moves in the size the tuning model expects (the full result).
size_t modelBytes(const CollTask& task, int nranks, size_t elemBytes) {
  size_t bytes = task.count * elemBytes;
  if (task.func == CollFunc::AllGather || task.func == CollFunc::ReduceScatter) bytes *= static_cast<size_t>(nranks);
  return bytes;
}

// Why the communicator cannot run Hier ("" when it can): it needs several hosts with the
// same number of ranks, at least two each (in host mode and in GPU mode alike).
std::string hierUnavailableWhy(const RankLayout& layout) {
  if (layout.nNodes < 2) return "Hier needs several hosts";
  const int local = layout.uniformLocalRanks();
  if (local == 0) return "Hier needs the same number of ranks on every host";
  if (local < 2) return "Hier needs at least two ranks on each host";
  return "";
}

// Whether Hier can run an AllReduce with `op`: its phases combine partial results, which
// an operation with a pre-multiplier or a final division cannot do.
bool hierTakes(RedOpKind op) { return op != RedOpKind::PreMulSum && op != RedOpKind::SumPostDiv; }

// Collectives of at least this many bytes (the tuning model's size) may run single-copy
// where Direct would take them: from here on, not copying through the board's slots saves
// more than the agreement's hop costs (docs/performance.md).
constexpr size_t kSingleCopyMinBytes = 16u << 10;

}  // namespace

CollPlanner::CollPlanner(int rank, int nranks, const RankLayout& layout, const DataPathSettings& settings, bool gpuMode)
    : rank_(rank), nranks_(nranks), layout_(layout), settings_(settings), gpuMode_(gpuMode) {}

Status CollPlanner::create(int rank, int nranks, const RankLayout& layout, const DataPathSettings& settings,
                           bool gpuMode, std::unique_ptr<CollPlanner>* out) {
  std::unique_ptr<CollPlanner> planner(new CollPlanner(rank, nranks, layout, settings, gpuMode));
  std::vector<std::string> warnings;
  BRAID_CHECK(parseAlgoPolicy(settings.algo, &planner->policy_, &warnings));
  BRAID_CHECK(parseProtoPolicy(settings.proto, &planner->policy_, &warnings));
  if (rank == 0) {
    for (const std::string& warning : warnings) BRAID_WARN("%s", warning.c_str());
  }
  int maxLocal = 0;
  for (const auto& node : layout.ranksOfNode) maxLocal = std::max(maxLocal, static_cast<int>(node.size()));
  TuningInputs& tuning = planner->tuning_;
  tuning.nranks = nranks;
  tuning.nNodes = layout.nNodes;
  tuning.maxLocalRanks = maxLocal;
  if (gpuMode) {
    // GPU mode's links: per channel, NVLink/PCIe peer-to-peer within a host, the network
    // (host-staged) between hosts, with NCCL's per-hop latencies.
    tuning.intra = settings.p2pDisable ? LinkModel{5.0, 2.0} : LinkModel{20.0, 0.6};
    tuning.inter = LinkModel{10.0, 5.0};
  } else {
    // Host mode's: shared memory within a host, sockets between hosts.
    tuning.intra = settings.shmDisable ? LinkModel{1.5, 20.0} : LinkModel{6.0, 1.0};
    tuning.inter = LinkModel{1.2, 25.0};
  }
  tuning.nChannels = settings.defaultChannels;
  tuning.ranksPerCore = settings.ranksPerCore;
  // A ring of two crosses the network with two hosts (Ring of two ranks, Hier's cross-host
  // rings) or without shared memory: there an exchange saves a hop. Host mode only: the
  // GPU kernels carry the exchange but have not run it on a GPU.
  tuning.exchangeOfTwo = !gpuMode && (layout.nNodes == 2 || settings.shmDisable);
  // Direct collectives read every rank's slot in one shared-memory segment: host mode,
  // every rank on one host, shared memory allowed.
  std::string noDirect = gpuMode                    ? "Direct runs in host mode only"
                         : layout.nNodes > 1        ? "Direct needs every rank on one host"
                         : settings.shmDisable      ? "Direct needs shared memory, and NCCL_SHM_DISABLE=1"
                         : nranks > kMaxDirectRanks ? strFormat("Direct takes at most %d ranks", kMaxDirectRanks)
                                                    : "";
  const std::string noHier = hierUnavailableWhy(layout);
  AlgoProtoPolicy& policy = planner->policy_;
  auto unavailable = [&policy](Algorithm algo, const std::string& why) {
    policy.unavailable |= algorithmBit(algo);
    policy.unavailableWhy += (policy.unavailableWhy.empty() ? "" : "; ") + why;
  };
  if (noDirect.empty()) {
    tuning.directSlotBytes = ShmBoard::kSlotBytes;
  } else {
    unavailable(Algorithm::Direct, noDirect);
  }
  if (noHier.empty()) {
    tuning.hierLocalRanks = layout.localRanks;
  } else {
    unavailable(Algorithm::Hier, noHier);
  }
  *out = std::move(planner);
  return okStatus();
}

namespace {

// Everything of a task but its buffers, which a plan that depends on the task alone only
// carries (see planDependsOnTaskAlone): benchmarks and bucketed gradients move them every call.
bool samePlanInputs(const CollTask& a, const CollTask& b) {
  return a.func == b.func && a.count == b.count && a.type == b.type && a.op == b.op && a.opArg == b.opArg &&
         a.scalarAtRun == b.scalarAtRun && a.root == b.root && a.stream == b.stream && a.pairs == b.pairs &&
         a.minChannels == b.minChannels && a.maxChannels == b.maxChannels;
}

void tracePlan(const CollWork& w, size_t bytes, double predictedUs) {
  BRAID_TRACE(kLogTuning, "%s of %zu bytes: %s/%s on %d channel(s), predicted %.1f us", collFuncName(w.func), bytes,
              algorithmName(w.algo), protocolName(w.proto), w.nChannels, predictedUs);
}

// Collectives that never run single-copy, whatever lies in windows: nothing to move, or a
// Direct one whose one hop beats the agreement's extra one (below kSingleCopyMinBytes).
bool windowsNeverApply(const CollWork& w, size_t bytes) {
  return w.oneRank || w.count == 0 || (w.algo == Algorithm::Direct && bytes < kSingleCopyMinBytes);
}

// Whether w's plan looked at nothing but the task and the communicator's fixed settings
// (no windows, no scalar read at run time): then the same task always gets the same work,
// and a task that differs only in its buffers the same work with its own buffers.
bool planDependsOnTaskAlone(const CollTask& task, const CollWork& w, size_t bytes) {
  return windowsNeverApply(w, bytes) && !task.scalarAtRun;
}

}  // namespace

const CollWork* CollPlanner::rememberedPlan(const CollTask& task) {
  if (!lastPlan_.valid || !samePlanInputs(lastPlan_.task, task)) return nullptr;
  lastPlan_.work.send = task.sendbuff;
  lastPlan_.work.recv = task.recvbuff;
  tracePlan(lastPlan_.work, modelBytes(task, nranks_, lastPlan_.work.elemBytes), lastPlan_.predictedUs);
  return &lastPlan_.work;
}

Status CollPlanner::planColl(const CollTask& task, CollWork* out) {
  if (const CollWork* remembered = rememberedPlan(task)) {
    *out = *remembered;
    return okStatus();
  }
  const int nranks = nranks_;
  const size_t elemBytes = dataTypeSize(task.type);
  const size_t bytes = modelBytes(task, nranks, elemBytes);
  // A call's own selection narrows what the settings allow; where NCCL_ALGO/NCCL_PROTO
  // leave none of it, the environment wins, as in NCCL.
  const int func = static_cast<int>(task.func);
  uint8_t pairs = 0xff;
  if (task.pairs) {
    uint8_t allowed = usablePairs(task.func, policy_);
    pairs = task.pairs & allowed;
    if (!pairs) {
      pairs = allowed;
      if (!reportedSelectionOverridden_[func]) {
        reportedSelectionOverridden_[func] = true;
        BRAID_INFO(kLogTuning, "%s: the call's algSelection (%s) is outside NCCL_ALGO=%s / NCCL_PROTO=%s; using %s",
                   collFuncName(task.func), pairNames(task.pairs).c_str(), policy_.algoSetting.c_str(),
                   policy_.protoSetting.c_str(), pairNames(allowed).c_str());
      }
    }
  }
  // A call's channel bounds, within the communicator's.
  TuningInputs tuning = tuning_;
  int lower = settings_.minChannels;
  int upper = std::max(settings_.minChannels, settings_.defaultChannels);
  if (task.maxChannels > 0) {
    upper = std::clamp(task.maxChannels, settings_.minChannels, settings_.maxChannels);
    tuning.nChannels = upper;
  }
  if (task.minChannels > 0) lower = std::clamp(task.minChannels, settings_.minChannels, upper);
  if (tuning_.hierLocalRanks > 0 && task.func == CollFunc::AllReduce && !hierTakes(task.op)) {
    constexpr uint8_t kHierPairs = pairBit(Algorithm::Hier, Protocol::Simple) | pairBit(Algorithm::Hier, Protocol::LL);
    pairs &= static_cast<uint8_t>(~kHierPairs);
    if (!pairs) pairs = usablePairs(task.func, policy_) & static_cast<uint8_t>(~kHierPairs);
    if (!reportedHierRefused_ && rank_ == 0) {
      reportedHierRefused_ = true;
      BRAID_INFO(kLogTuning,
                 "AllReduce: not Hier (Hier runs sum, prod, max and min, not %s); the model chooses among "
                 "the others",
                 redOpKindName(task.op));
    }
  }
  LastChoice& last = lastChoice_[func];
  if (!last.valid || last.bytes != bytes || last.pairs != pairs || last.nChannels != tuning.nChannels) {
    last = LastChoice{true, bytes, pairs, tuning.nChannels, chooseAlgorithm(task.func, bytes, tuning, policy_, pairs)};
    reportChoice(task.func, bytes, tuning, pairs, last.choice);
  }
  const AlgoChoice choice = last.choice;
  if (!reportedInapplicable_[func]) {
    reportedInapplicable_[func] = true;
    std::string why = policy_.explainInapplicable(task.func);
    if (!why.empty() && rank_ == 0) {
      if (policy_.forcedOntoUnavailable(task.func)) {
        BRAID_WARN("%s", why.c_str());
      } else {
        BRAID_INFO(kLogTuning | kLogColl, "%s", why.c_str());
      }
    }
  }
  CollWork w;
  w.func = task.func;
  w.algo = choice.algo;
  w.proto = choice.proto;
  w.type = task.type;
  w.op = task.op;
  w.opArg = task.opArg;
  if (task.scalarAtRun) {
    // ncclScalarDevice: GPU kernels read it when they run; host mode runs now, so now is
    // when it is read.
    if (gpuMode_) {
      w.scalar = task.scalarAtRun;
    } else {
      std::memcpy(&w.opArg, task.scalarAtRun, elemBytes);
    }
  }
  w.send = task.sendbuff;
  w.recv = task.recvbuff;
  w.root = task.root;
  w.nChannels = std::clamp(choice.nChannels, lower, upper);
  w.oneRank = nranks == 1;
  w.count = task.count;
  w.elemBytes = elemBytes;
  w.stream = task.stream;
  // Data-only collectives move bytes; reductions move elements.
  const bool dataOnly = isDataOnly(task.func);
  w.geometry.unit = dataOnly ? 1 : static_cast<uint32_t>(elemBytes);
  w.geometry.extent = task.count * (dataOnly ? elemBytes : 1);
  w.geometry.stepPayload = w.proto == Protocol::LL ? settings_.fifo.llStepBytes / 2 : settings_.fifo.simpleStepBytes;
  w.geometry.nChannels = w.nChannels;
  w.geometry.nranks = nranks;
  w.geometry.pipelineSlices = w.proto == Protocol::Simple;
  w.geometry.exchangeOfTwo = tuning_.exchangeOfTwo && task.func == CollFunc::AllReduce;
  const bool perRank = task.func == CollFunc::AllGather || task.func == CollFunc::ReduceScatter;
  w.segment = perRank ? w.geometry.extent : 0;
  if (w.algo == Algorithm::Hier) {
    // Each channel takes its share of every local rank's slice (as a reduce-scatter's
    // channels take their share of every rank's segment); channel 0 also the remainder.
    const int local = tuning_.hierLocalRanks;
    w.segment = task.count / static_cast<size_t>(local);
    w.geometry.extent = w.segment;
    w.geometry.nranks = local;
  }
  markWindowCandidate(task, bytes, &w);
  tracePlan(w, bytes, choice.predictedUs);
  lastPlan_.valid = planDependsOnTaskAlone(task, w, bytes);
  if (lastPlan_.valid) {
    lastPlan_.task = task;
    lastPlan_.work = w;
    lastPlan_.predictedUs = choice.predictedUs;
  }
  *out = w;
  return okStatus();
}

void CollPlanner::reportChoice(CollFunc func, size_t bytes, const TuningInputs& tuning, uint8_t pairs,
                               const AlgoChoice& choice) {
  // The first time a function runs with an algorithm and protocol, on rank 0 (every rank
  // chooses alike): for which size, and what the model predicted for the others it could
  // run there.
  uint8_t& seen = reportedPairs_[static_cast<int>(func)];
  const uint8_t bit = pairBit(choice.algo, choice.proto);
  if (rank_ != 0 || (seen & bit)) return;
  seen |= bit;
  std::string others;
  TuningInputs withChannels = tuning;
  withChannels.nChannels = choice.nChannels;
  const uint8_t algorithms = policy_.usableAlgorithms(func);
  for (Algorithm algo : {Algorithm::Ring, Algorithm::Tree, Algorithm::Direct, Algorithm::Hier}) {
    if (!(algorithms & algorithmBit(algo)) || !(pairs & pairBit(algo, choice.proto)) || algo == choice.algo) continue;
    const double us = predictTimeUs(func, algo, choice.proto, bytes, withChannels);
    if (std::isfinite(us)) others += strFormat("%s%s %.0f us", others.empty() ? "" : ", ", algorithmName(algo), us);
  }
  BRAID_INFO(kLogTuning, "%s of %zu bytes: %s/%s on %d channel(s), predicted %.0f us%s%s%s", collFuncName(func), bytes,
             algorithmName(choice.algo), protocolName(choice.proto), choice.nChannels, choice.predictedUs,
             others.empty() ? "" : " (", others.c_str(), others.empty() ? "" : ")");
}

void CollPlanner::markWindowCandidate(const CollTask& task, size_t bytes, CollWork* w) const {
  // Single-copy collectives agree on the board, as Direct ones run there: they need what
  // Direct needs and are turned off with it (NCCL_ALGO=^direct). Below kSingleCopyMinBytes
  // a Direct collective's one hop beats the agreement's extra one. Every input here is the
  // same on every rank; which buffers lie in windows is not, and is agreed on when the
  // collective runs.
  if (windowsNeverApply(*w, bytes)) return;
  if (!(policy_.usableAlgorithms(task.func) & algorithmBit(Algorithm::Direct))) return;
  if (!windows_.anyMappedByAll || !windows_.anyMappedByAll()) return;
  const size_t block = w->count * w->elemBytes;
  const size_t all = block * static_cast<size_t>(nranks_);
  const size_t sendBytes = task.func == CollFunc::ReduceScatter ? all : block;
  const size_t recvBytes = task.func == CollFunc::AllGather ? all : block;
  w->windowCandidate = true;
  if (!windows_.find(w->send, sendBytes, &w->sendWindow)) w->sendWindow = WindowRef();
  if (!windows_.find(w->recv, recvBytes, &w->recvWindow)) w->recvWindow = WindowRef();
}

void addChannelNeeds(const CollWork& w, ChannelNeeds* needs) {
  if (w.oneRank) return;
  needs->board |= w.windowCandidate || w.algo == Algorithm::Direct;
  if (w.algo == Algorithm::Direct) return;
  int& channels = w.algo == Algorithm::Tree   ? needs->treeChannels
                  : w.algo == Algorithm::Hier ? needs->hierChannels
                                              : needs->ringChannels;
  channels = std::max(channels, w.nChannels);
}

Status CollPlanner::planBatch(const CommTasks& tasks, WorkBatch* batch, ChannelNeeds* needs) {
  *batch = WorkBatch();
  *needs = ChannelNeeds();
  for (const CollTask& task : tasks.colls) {
    CollWork w;
    BRAID_CHECK(planColl(task, &w));
    addChannelNeeds(w, needs);
    batch->colls.push_back(w);
  }
  for (const P2pTask& task : tasks.p2ps) {
    P2pWork p;
    p.isSend = task.isSend;
    p.send = task.sendbuff;
    p.recv = task.recvbuff;
    p.bytes = task.bytes;
    p.peer = task.peer;
    p.channel = p2pChannel(task.peer);
    p.stream = task.stream;
    batch->p2ps.push_back(p);
  }
  // Refused here, before any connection is made for the group.
  if (!batch->p2ps.empty()) {
    std::vector<std::pair<const P2pWork*, const P2pWork*>> selfPairs;
    BRAID_CHECK(pairSelfTransfers(batch->p2ps, rank_, &selfPairs));
  }
  for (const DeviceStaging& s : tasks.deviceStaging) batch->staging.push_back({s.base, s.bytes});
  return okStatus();
}

double CollPlanner::predictUs(const CommTasks& tasks) const {
  const int nranks = nranks_;
  double total = 0;
  for (const CollTask& task : tasks.colls) {
    if (nranks == 1) continue;  // a local copy: nothing the model describes
    size_t bytes = modelBytes(task, nranks, dataTypeSize(task.type));
    total += chooseAlgorithm(task.func, bytes, tuning_, policy_).predictedUs;
  }
  // Transfers to different peers overlap; those to one peer in one direction queue up.
  std::map<std::pair<int, bool>, size_t> bytesPerPeer;
  for (const P2pTask& p2p : tasks.p2ps) {
    if (p2p.peer != rank_) bytesPerPeer[{p2p.peer, p2p.isSend}] += p2p.bytes;
  }
  double p2pUs = 0;
  for (const auto& [peer, bytes] : bytesPerPeer) {
    TuningInputs link = tuning_;
    link.nNodes =
        layout_.nodeOfRank[static_cast<size_t>(peer.first)] == layout_.nodeOfRank[static_cast<size_t>(rank_)] ? 1 : 2;
    p2pUs = std::max(p2pUs, predictP2pTimeUs(Protocol::Simple, bytes, link));
  }
  return total + p2pUs;
}

}  // namespace braid
