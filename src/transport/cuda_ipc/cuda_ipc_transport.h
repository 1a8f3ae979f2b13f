// CUDA IPC ("P2P/IPC"): connections between two GPU-mode ranks of one host whose GPUs
// can reach each other over NVLink or PCIe (core/p2p_policy.h decides).
//
// The receiving end allocates the connection block — ConnShared, the Simple slots, the LL
// slots, Connector::bindLayout's layout — in its own device memory, zeroed, and hands out
// a handle: the block's CUDA IPC memory handle, its process (pid and a random token), its
// device and bus id. The sending end maps the block: when the handle comes from its own
// process (several ranks in one process, ncclCommInitAll) it uses the receiver's pointer
// directly, enabling peer access between the two devices; otherwise it opens the handle
// (cudaIpcOpenMemHandle, peer access enabled lazily). The sender writes the slots and
// `tail` into the receiver's memory and reads `head` from it. Each end keeps its step
// counter and LL staging in its own device memory.
//
// The host views of these connectors (sendView/recvView) point at DEVICE memory: host code
// must never dereference them. None does: the host executor does not run in GPU mode,
// DataPath::waitFailure only compares counter addresses, and the network proxy never sees
// these connectors. Only the device views are meant for use.
//
// Teardown: each end releases its own side, independently of the other: the sender
// closes its mapping (cudaIpcCloseMemHandle only drops this process's mapping: it neither
// waits for nor needs the receiver's process, which may be gone already; a failure is
// logged and teardown carries on), the receiver frees its block. CUDA keeps an exported
// allocation's memory alive while another process still maps it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "transport/transport.h"

namespace braid {

struct CudaIpcConfig {
  FifoSizes sizes;
  int cudaDev = -1;   // this rank's device
  std::string busId;  // its PCI bus id, for messages
};

// The transport; an error in a build without CUDA.
Status createCudaIpcTransport(const CudaIpcConfig& config, std::unique_ptr<Transport>* out);

// What the CUDA runtime of this process says about peer access between two GPUs, named
// by PCI bus id: Unknown when this process does not see both (CUDA_VISIBLE_DEVICES), or
// without CUDA. Both directions must be possible for Yes.
enum class CudaPeerAccess : uint8_t { Unknown, Yes, No };
struct CudaPeerQuery {
  CudaPeerAccess access = CudaPeerAccess::Unknown;
  std::string detail;  // why (for the INFO line)
};
// Asked with `cudaDev` (the asking rank's device) current, so that no other device's
// context is created on the way.
CudaPeerQuery queryCudaPeerAccess(int cudaDev, const std::string& busIdA, const std::string& busIdB);

// Whether this process can export device memory through CUDA IPC at all (it cannot under
// WSL, for one). Probed once per process, on `cudaDev`; *why says what failed.
bool cudaIpcSupported(int cudaDev, std::string* why);

}  // namespace braid
