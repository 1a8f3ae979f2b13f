// GPU mode: do two GPU-mode ranks of one host connect through CUDA IPC ("P2P"), or through
// host shared memory? Decided as NCCL decides it (graph/paths.cc ncclTopoCheckP2p,
// transport/p2p.cc p2pCanConnect), and with the reason said in the INFO line:
//  - NCCL_P2P_DISABLE=1 sets the P2P level to LOC: no P2P between different GPUs;
//  - otherwise the path type between the two GPUs in the topology graph must not exceed
//    the P2P level: NCCL_P2P_LEVEL when set (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB,
//    SYS, or NCCL's legacy integers 0..5 = LOC, PIX, PXB, PHB, SYS, SYS; larger is SYS),
//    else PXB — SYS on AMD x86 machines when the communicator uses at most two of the
//    host's GPUs;
//  - a path the graph does not know (a GPU missing from it) counts as SYS;
//  - when this process sees both devices, CUDA must report peer access both ways
//    (cudaDeviceCanAccessPeer); when it sees only one, the path type decides, as in NCCL;
//  - CUDA IPC must work on this platform (it does not under WSL).
// Everything here is pure; core/datapath/p2p_agreement.cc gathers the inputs.
#pragma once

#include <string>

#include "topology/graph.h"
#include "topology/paths.h"
#include "transport/cuda_ipc/cuda_ipc_transport.h"

namespace braid {

// NCCL_P2P_LEVEL's grammar, names case-insensitively; false when `text` is neither a
// level name nor a non-negative integer.
bool parseP2pLevel(const std::string& text, PathType* out);

// NCCL's default level: SYS on x86 AMD CPUs when the communicator uses at most two GPUs
// of this host (`localGpus`; NCCL's graph holds only those), else PXB.
PathType defaultP2pLevel(const TopoGraph& graph, int localGpus);

// "0000:07:00.0": lower case, a four-digit domain (cudaDeviceGetPCIBusId and NVML write
// other forms of the same id).
std::string normalizeBusId(const std::string& busId);

// The path type between the GPUs with these bus ids; false when the graph lacks either.
bool gpuPathByBusId(const TopoGraph& graph, const TopoPaths& paths, const std::string& busIdA,
                    const std::string& busIdB, PathType* out);

struct P2pInputs {
  bool p2pDisable = false;  // NCCL_P2P_DISABLE=1
  int userLevel = -1;       // NCCL_P2P_LEVEL as a PathType; -1 when unset
  PathType defaultLevel = PathType::PXB;
  bool sameGpu = false;    // both ranks use one GPU (BRAID_SHARED_GPU=1)
  bool pathKnown = false;  // the graph shows both GPUs
  PathType path = PathType::SYS;
  std::string topologyNote;  // why the path is unknown, when it is
  CudaPeerAccess cudaPeer = CudaPeerAccess::Unknown;
  std::string cudaDetail;
  bool ipcSupported = true;
  std::string ipcDetail;
};

struct P2pDecision {
  bool useP2p = false;
  // Why not (when !useP2p: "P2P disabled by NCCL_P2P_DISABLE=1", "path PHB exceeds
  // NCCL_P2P_LEVEL=PXB"), or what allowed it ("path NVL within the default P2P level PXB").
  std::string reason;
};

P2pDecision decideP2p(const P2pInputs& in);

}  // namespace braid
