#include "exec/cuda/p2p_batches.h"

#include <algorithm>
#include <numeric>

#include "kernels/p2p/p2p_steps.h"

namespace braid {

namespace {

int roundOf(const P2pPlanInput& in, int rank, int nranks) {
  int distance = in.isSend ? in.peer - rank : rank - in.peer;
  return ((distance % nranks) + nranks) % nranks;
}

P2pLaunchPlan groupByChannel(const std::vector<P2pPlanInput>& inputs, std::vector<P2pPlannedTransfer> transfers) {
  P2pLaunchPlan plan;
  for (const P2pPlannedTransfer& t : transfers) plan.nChannels = std::max(plan.nChannels, inputs[t.input].channel + 1);
  std::stable_sort(transfers.begin(), transfers.end(), [&](const P2pPlannedTransfer& a, const P2pPlannedTransfer& b) {
    return inputs[a.input].channel < inputs[b.input].channel;
  });
  plan.channelBegin.assign(static_cast<size_t>(plan.nChannels) + 1, 0);
  for (const P2pPlannedTransfer& t : transfers) ++plan.channelBegin[static_cast<size_t>(inputs[t.input].channel) + 1];
  std::partial_sum(plan.channelBegin.begin(), plan.channelBegin.end(), plan.channelBegin.begin());
  plan.transfers = std::move(transfers);
  return plan;
}

}  // namespace

Status planP2pLaunches(const std::vector<P2pPlanInput>& inputs, int rank, int nranks, size_t capacity,
                       std::map<const void*, uint64_t>* nextStep, std::vector<P2pLaunchPlan>* out) {
  out->clear();
  if (inputs.empty()) return okStatus();
  // Rounds in order; within a round, the order of the calls (which keeps the order of the
  // transfers of each connection, the order both of its ends match them in).
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return roundOf(inputs[a], rank, nranks) < roundOf(inputs[b], rank, nranks);
  });
  std::vector<P2pPlannedTransfer> current;
  size_t i = 0;
  while (i < order.size()) {
    const int round = roundOf(inputs[order[i]], rank, nranks);
    size_t end = i;
    while (end < order.size() && roundOf(inputs[order[end]], rank, nranks) == round) ++end;
    const size_t inRound = end - i;
    if (inRound > capacity) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "in GPU mode one kernel launch takes at most %zu of a group's sends to rank %d and receives "
                         "from rank %d (they must progress together); this group has %zu: split it into several "
                         "groups",
                         capacity, (rank + round) % nranks, (rank - round + nranks) % nranks, inRound);
    }
    if (current.size() + inRound > capacity) {
      out->push_back(groupByChannel(inputs, std::move(current)));
      current.clear();
    }
    for (size_t k = i; k < end; ++k) {
      const P2pPlanInput& in = inputs[order[k]];
      uint64_t& step = (*nextStep)[in.connection];
      current.push_back({order[k], step});
      step += p2pStepsFor(in.bytes, in.stepBytes);
    }
    i = end;
  }
  if (!current.empty()) out->push_back(groupByChannel(inputs, std::move(current)));
  return okStatus();
}

}  // namespace braid
