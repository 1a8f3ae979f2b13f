// How a group's point-to-point transfers are packed into kernel launches (pure, host-side,
// unit-tested without a GPU).
//
// Every transfer gets the step its connection's counter will be at when it starts
// (`firstStep`: the counter after every earlier transfer on that connection), and a
// *round*: the distance from this rank to the peer in the direction data flows
// ((peer - rank) mod n for a send, (rank - peer) mod n for a receive). A send in round d
// meets the receive of round d on its peer, so ranks that work through rounds in order
// never wait for each other in a cycle. Transfers go into launches whole rounds at a time,
// in round order; a launch holds at most `capacity` transfers; inside a launch they are
// grouped by channel (block), keeping their order within a channel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "util/status.h"

namespace braid {

struct P2pPlanInput {
  bool isSend = true;
  int peer = -1;
  int channel = 0;
  size_t bytes = 0;
  const void* connection = nullptr;  // identifies the connection (a Connector)
  uint32_t stepBytes = 0;            // the connection's Simple step size
};

struct P2pPlannedTransfer {
  size_t input = 0;        // index into the inputs
  uint64_t firstStep = 0;  // the connection's counter when it starts
};

struct P2pLaunchPlan {
  std::vector<P2pPlannedTransfer> transfers;  // grouped by channel
  std::vector<int> channelBegin;              // transfers of channel c: [channelBegin[c], channelBegin[c + 1])
  int nChannels = 0;                          // blocks to launch (highest channel used + 1)
};

// `nextStep` holds each connection's counter after the transfers planned so far (updated).
// Fails (ncclInvalidUsage) when one round alone needs more than `capacity` transfers.
Status planP2pLaunches(const std::vector<P2pPlanInput>& inputs, int rank, int nranks, size_t capacity,
                       std::map<const void*, uint64_t>* nextStep, std::vector<P2pLaunchPlan>* out);

}  // namespace braid
