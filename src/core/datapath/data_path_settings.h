// The data path's configuration, read once per communicator from the environment and the
// communicator's config, then made identical on every rank: each rank contributes its
// reading through the bootstrap and all adopt rank 0's, with a WARN naming any setting that
// differed (ranks that disagreed on NCCL_ALGO or NCCL_BUFFSIZE would otherwise pick
// different algorithms or FIFO sizes and hang).
#pragma once

#include <string>

#include "bootstrap/bootstrap.h"
#include "core/config/comm_config.h"
#include "planning/algo_proto.h"
#include "transport/connector.h"

namespace braid {

struct DataPathSettings {
  FifoSizes fifo;
  int minChannels = 1;
  int maxChannels = 64;
  int defaultChannels = 1;  // what collectives use at most unless NCCL_MIN_NCHANNELS says more
  // Host mode: ranks that take turns on each core of rank 0's machine (at least 1; agreed
  // like the channel count). The tuning model adds the turns to every hop in which all of a
  // host's ranks act. GPU mode: 1 (the kernels move the data, not the ranks' threads).
  int ranksPerCore = 1;
  std::string algo;   // NCCL_ALGO text
  std::string proto;  // NCCL_PROTO text
  bool shmDisable = false;
  bool p2pDisable = false;  // NCCL_P2P_DISABLE (GPU mode)
  int p2pLevel = -1;        // NCCL_P2P_LEVEL as a PathType; -1 when unset (GPU mode)
  std::string netName;      // NCCL_NET / config netName
  int nsocksPerThread = 1;
  int socketThreads = 0;
  int64_t spinNs = 20000;
  // What the defaults were taken from (BRAID_SPIN_NS unset: -1), kept so that the
  // agreement can size waits and channels by the ranks that share this machine's CPUs.
  int64_t spinNsSetting = -1;
  bool gpuMode = false;
  bool singleCopy = true;  // a local matter: each receiver probes its own senders
  size_t singleCopyThreshold = 256 << 10;
  double timeoutSec = 0;  // BRAID_TIMEOUT, a local matter: 0 waits as long as the peers live
  // What a wait past BRAID_TIMEOUT returns (CommConfig::timeoutResult), a local matter too.
  ncclResult_t timeoutResult = ncclRemoteError;
};

// Reads this rank's settings (local: cores, environment, config). `gpuMode`: channels are
// GPU blocks, not host threads.
DataPathSettings readDataPathSettings(const CommConfig& config, int localRanks, bool gpuMode = false);

// The spin before a wait yields (BRAID_SPIN_NS unset), for `ranks` ranks sharing `cores`
// CPUs: 20 us where each rank has a core of its own, none where they outnumber the cores.
// Across hosts (`network`: host mode, the job spans hosts) each rank also has a network
// proxy thread that stays runnable through every operation, so a rank needs two cores.
int64_t defaultSpinNs(int cores, int ranks, bool network);

// Makes them the same on all ranks (rank 0's), warning about differences. Each rank also
// tells the others its machine (boot id) and CPUs, and the defaults that depend on cores
// per rank (the spin before a wait yields, host mode's channel count) follow the ranks that
// share a machine's CPUs (planning/cpu_sharing.h) rather than those of one host: network
// namespaces or containers of one machine compete for its cores.
Status agreeOnSettings(Bootstrap& bootstrap, DataPathSettings* settings);

}  // namespace braid
