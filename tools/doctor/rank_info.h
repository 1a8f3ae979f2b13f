// What one rank finds out about itself before anything is compared: who the launcher says
// it is, what it sees of the network, and where its reachability listeners are. Every
// rank fills one RankInfo, the communicator gathers them (gather.h), and rank 0 judges
// the set: contradictions only show when ranks are compared.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braid::doctor {

struct EnvVar {
  std::string name, value;
};

struct InterfaceInfo {
  std::string name;
  std::string address;  // without port
  std::string cls;      // interfaceClassName()
  int speedMbps = -1;
  int rankOrder = -1;  // position among the candidates (0 = first choice), -1: excluded
};

struct GidInfo {
  int index = 0;
  std::string gid, type, ndev;
};

struct IbPortInfo {
  std::string device;
  int port = 1;
  std::string linkLayer;  // "InfiniBand", "Ethernet (RoCE)"
  int speedMbps = 0;
  std::vector<GidInfo> gids;  // readable, non-zero entries
  int chosenIndex = -1;
  std::string reason;  // why that index, or why none
};

struct ListenerInfo {
  std::string iface;
  std::string address;  // host:port
};

struct RankInfo {
  // Identity, as the communicator and the launcher see it.
  int rank = -1, nranks = 0;
  int launcherRank = -1, launcherSize = 0;      // what the launcher's variables say
  int localRank = -1, localSize = 0;            // the launcher's view (-1/0: not given)
  int braidLocalRank = -1, braidLocalSize = 0;  // from the host hashes
  int node = -1;
  std::string host, device, launcher, rendezvous, pid;
  std::vector<EnvVar> env;           // launcher and Braid variables that are set
  std::vector<std::string> derived;  // "rank 3 from SLURM_PROCID", ...
  std::string launchError;           // detectLaunch's complaint, if any
  // CUDA_VISIBLE_DEVICES: set or not, its entries, and the GPUs the process can see.
  bool cudaVisibleSet = false;
  std::string cudaVisible;
  int visibleGpus = 0;

  // Network.
  std::vector<InterfaceInfo> interfaces;
  std::string candidateReason;  // chooseInterfaces()'s reason, or its error
  std::string bootstrapAddress;
  std::string bootstrapIface;
  std::vector<IbPortInfo> ibPorts;
  std::string ibNote;                  // why IB is not usable here, when it is not
  std::vector<std::string> ibSkipped;  // ports left out: not ACTIVE, not in NCCL_IB_HCA
  std::vector<ListenerInfo> listeners;
};

std::vector<uint8_t> encodeRankInfo(const RankInfo& info);
// False when the bytes are not a RankInfo (a version skew between ranks' doctors).
bool decodeRankInfo(const std::vector<uint8_t>& bytes, RankInfo* out);

}  // namespace braid::doctor
