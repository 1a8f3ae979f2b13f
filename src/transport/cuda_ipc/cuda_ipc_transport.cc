#include "transport/cuda_ipc/cuda_ipc_transport.h"

#if BRAID_WITH_CUDA

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>

#include "platform/cuda_check.h"
#include "platform/device_memory.h"
#include "util/byte_codec.h"
#include "util/format.h"
#include "util/host_identity.h"
#include "util/log.h"

namespace braid {

namespace {

constexpr uint32_t kHandleMagic = 0x43504942;  // "BIPC"
constexpr uint8_t kHandleVersion = 1;
constexpr uint32_t kMaxBusIdBytes = 64;
// CUDA IPC hands out handles per allocation; blocks of whole 2 MiB granules never share
// one (NCCL's CUDA_IPC_MIN), so opening a handle maps exactly this block.
constexpr size_t kIpcGranularity = size_t{2} << 20;

// Tells this process from any other, also across PID namespaces (two containers of one
// host may both have a pid 7): a pointer in a handle is usable as is only when the token
// is ours.
uint64_t processToken() {
  static const uint64_t token = [] {
    uint64_t t = 0;
    if (!randomBytes(&t, sizeof(t)).ok() || t == 0) {
      t = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
          (static_cast<uint64_t>(getpid()) << 32) ^ reinterpret_cast<uintptr_t>(&t);
    }
    return t;
  }();
  return token;
}

class CudaIpcConnector : public Connector {
 public:
  CudaIpcConnector(bool isSend, int peer, const FifoSizes& sizes, std::string via)
      : Connector(isSend, peer, std::move(via), sizes) {}

  // Receiving end: the block in this rank's device memory, zeroed (counters start at 0).
  Status allocateBlock(int cudaDev, const FifoSizes& sizes, size_t bytes) {
    BRAID_CHECK(DeviceAllocation::create(bytes, cudaDev, &block_));
    return bind(block_.data(), cudaDev, sizes);
  }
  // Sending end: the receiver's block, mapped into this process (`mapping` empty when the
  // block is in this process and `block` is the receiver's own pointer).
  Status attachBlock(uint8_t* block, IpcMapping mapping, int cudaDev, const FifoSizes& sizes) {
    mapping_ = std::move(mapping);
    return bind(block, cudaDev, sizes);
  }
  const DeviceAllocation& block() const { return block_; }
  // The receiving end owns the block; the sending end maps it (the peer's memory).
  Footprint footprint() const override { return {staging_.size(), block_.size() + state_.bytes()}; }
  static size_t blockBytes(const FifoSizes& sizes) {
    return (layoutBytes(sizes) + kIpcGranularity - 1) / kIpcGranularity * kIpcGranularity;
  }

 private:
  Status bind(uint8_t* block, int cudaDev, const FifoSizes& sizes) {
    // The host views get device addresses: see the header (never dereferenced on the host).
    bindLayout(block, sizes);
    BRAID_CHECK(ConnDeviceState::create(llStagingBytes(sizes), cudaDev, &state_));
    bindDeviceViews([](auto* address) { return address; }, state_.step(), state_.llStaging());
    return okStatus();
  }

  // Released in reverse order: the device state, then the sender's mapping, then the
  // receiver's block.
  DeviceAllocation block_;
  IpcMapping mapping_;
  ConnDeviceState state_;
};

class CudaIpcTransport : public Transport {
 public:
  explicit CudaIpcTransport(CudaIpcConfig config) : config_(std::move(config)) {}
  const char* name() const override { return "P2P/IPC"; }
  Status setupRecv(const ConnRequest& request, std::vector<uint8_t>* handle, std::unique_ptr<Connector>* out) override;
  Status connectSend(const ConnRequest& request, const std::vector<uint8_t>& handle, std::vector<uint8_t>* ack,
                     std::unique_ptr<Connector>* out) override;
  Status finishRecv(Connector& connector, const std::vector<uint8_t>& ack) override;

 private:
  size_t blockBytes() const { return CudaIpcConnector::blockBytes(config_.sizes); }

  CudaIpcConfig config_;
};

Status CudaIpcTransport::setupRecv(const ConnRequest& request, std::vector<uint8_t>* handle,
                                   std::unique_ptr<Connector>* out) {
  auto connector = std::make_unique<CudaIpcConnector>(false, request.peer, config_.sizes, "P2P/IPC");
  Status allocated = connector->allocateBlock(config_.cudaDev, config_.sizes, blockBytes());
  if (!allocated.ok()) {
    return allocated.addContext(strFormat("allocating the P2P connection from rank %d (%zu bytes on GPU %d)",
                                          request.peer, blockBytes(), config_.cudaDev));
  }
  cudaIpcMemHandle_t ipc;
  BRAID_CHECK(exportIpcHandle(connector->block(), &ipc));
  ByteWriter w;
  w.u32(kHandleMagic);
  w.u8(kHandleVersion);
  w.raw(&ipc, sizeof(ipc));
  w.u64(processToken());
  w.i32(static_cast<int32_t>(getpid()));
  w.i32(config_.cudaDev);
  w.str(config_.busId);
  w.u64(connector->block().size());
  w.u64(reinterpret_cast<uint64_t>(connector->block().data()));
  *handle = w.take();
  *out = std::move(connector);
  return okStatus();
}

Status CudaIpcTransport::connectSend(const ConnRequest& request, const std::vector<uint8_t>& handle,
                                     std::vector<uint8_t>* ack, std::unique_ptr<Connector>* out) {
  ByteReader r(handle);
  uint32_t magic = 0;
  uint8_t version = 0;
  if (!r.u32(&magic) || magic != kHandleMagic || !r.u8(&version) || version != kHandleVersion) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "rank %d did not set up this connection for P2P/IPC while this rank did: the two ranks judged "
                       "peer access between their GPUs differently (different CUDA_VISIBLE_DEVICES, NCCL_TOPO_FILE "
                       "or Braid versions?); set NCCL_P2P_DISABLE=1 on all ranks to use shared memory",
                       request.peer);
  }
  cudaIpcMemHandle_t ipc;
  uint64_t token = 0, bytes = 0, pointer = 0;
  int32_t pid = 0, peerDev = -1;
  std::string peerBus;
  if (!r.raw(&ipc, sizeof(ipc)) || !r.u64(&token) || !r.i32(&pid) || !r.i32(&peerDev) ||
      !r.str(&peerBus, kMaxBusIdBytes) || !r.u64(&bytes) || !r.u64(&pointer) || !r.finished()) {
    return BRAID_ERROR(ncclInternalError, "rank %d sent a malformed P2P/IPC connection handle", request.peer);
  }
  if (bytes != blockBytes()) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "rank %d's P2P connection block has %llu bytes, this rank expects %zu (different "
                       "NCCL_BUFFSIZE/NCCL_LL_BUFFSIZE settings across ranks?)",
                       request.peer, static_cast<unsigned long long>(bytes), blockBytes());
  }
  bool sameProcess = token == processToken() && pid == static_cast<int32_t>(getpid());
  auto connector = std::make_unique<CudaIpcConnector>(true, request.peer, config_.sizes,
                                                      sameProcess ? "P2P/IPC (same process)" : "P2P/IPC");
  std::string where =
      strFormat("rank %d's connection memory (GPU %d, %s, pid %d)", request.peer, peerDev, peerBus.c_str(), pid);
  if (sameProcess) {
    Status enabled = enablePeerAccess(config_.cudaDev, peerDev);
    if (!enabled.ok()) {
      return enabled.addContext(strFormat("letting GPU %d reach %s (set NCCL_P2P_DISABLE=1 to use shared memory)",
                                          config_.cudaDev, where.c_str()));
    }
    BRAID_CHECK(
        connector->attachBlock(reinterpret_cast<uint8_t*>(pointer), IpcMapping(), config_.cudaDev, config_.sizes));
  } else {
    IpcMapping mapping;
    Status opened = IpcMapping::open(ipc, config_.cudaDev, &mapping);
    if (!opened.ok()) {
      return opened.addContext(
          strFormat("opening %s from GPU %d through CUDA IPC (set NCCL_P2P_DISABLE=1 to use "
                    "shared memory)",
                    where.c_str(), config_.cudaDev));
    }
    uint8_t* block = mapping.data();
    BRAID_CHECK(connector->attachBlock(block, std::move(mapping), config_.cudaDev, config_.sizes));
  }
  ack->assign(1, 1);
  *out = std::move(connector);
  return okStatus();
}

Status CudaIpcTransport::finishRecv(Connector& connector, const std::vector<uint8_t>& ack) {
  if (ack.size() != 1) {
    return BRAID_ERROR(ncclInternalError, "rank %d sent a malformed P2P/IPC acknowledgement", connector.peer());
  }
  return okStatus();
}

}  // namespace

Status createCudaIpcTransport(const CudaIpcConfig& config, std::unique_ptr<Transport>* out) {
  *out = std::make_unique<CudaIpcTransport>(config);
  return okStatus();
}

CudaPeerQuery queryCudaPeerAccess(int cudaDev, const std::string& busIdA, const std::string& busIdB) {
  CudaPeerQuery query;
  CudaDeviceScope scope;
  Status entered = scope.enter(cudaDev);
  if (!entered.ok()) {
    (void)cudaGetLastError();
    query.access = CudaPeerAccess::No;
    query.detail = "cannot make GPU " + std::to_string(cudaDev) + " current: " + entered.message();
    return query;
  }
  int a = -1, b = -1;
  if (cudaDeviceGetByPCIBusId(&a, busIdA.c_str()) != cudaSuccess ||
      cudaDeviceGetByPCIBusId(&b, busIdB.c_str()) != cudaSuccess) {
    (void)cudaGetLastError();  // expected when a GPU is not visible here; leave no error behind
    query.detail = "this process does not see both GPUs";
    return query;
  }
  if (a == b) {
    query.access = CudaPeerAccess::Yes;
    query.detail = "same device";
    return query;
  }
  int ab = 0, ba = 0;
  cudaError_t err = cudaDeviceCanAccessPeer(&ab, a, b);
  if (err == cudaSuccess) err = cudaDeviceCanAccessPeer(&ba, b, a);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    query.access = CudaPeerAccess::No;
    query.detail =
        strFormat("cudaDeviceCanAccessPeer between devices %d and %d failed: %s", a, b, cudaGetErrorName(err));
    return query;
  }
  query.access = ab && ba ? CudaPeerAccess::Yes : CudaPeerAccess::No;
  query.detail = strFormat("CUDA reports %speer access between devices %d and %d", ab && ba ? "" : "no ", a, b);
  return query;
}

bool cudaIpcSupported(int cudaDev, std::string* why) {
  static std::once_flag once;
  static bool supported = false;
  static std::string reason;
  std::call_once(once, [cudaDev] {
    // Probed once, on the first asker's device: IPC support is a property of the platform.
    // Only the export itself answers the question: a failed allocation (a full GPU) says
    // nothing about IPC and must not make this rank choose differently from its peers;
    // the connection's own allocation will report it.
    DeviceAllocation probe;
    supported = true;
    if (DeviceAllocation::create(kIpcGranularity, cudaDev, &probe).ok()) {
      cudaIpcMemHandle_t handle;
      Status exported = exportIpcHandle(probe, &handle);
      supported = exported.ok();
      if (!supported) reason = "CUDA IPC is not available here (" + exported.message() + ")";
    }
    (void)cudaGetLastError();
  });
  if (!supported && why) *why = reason;
  return supported;
}

}  // namespace braid

#else  // !BRAID_WITH_CUDA

namespace braid {

Status createCudaIpcTransport(const CudaIpcConfig& config, std::unique_ptr<Transport>* out) {
  out->reset();
  return BRAID_ERROR(ncclInvalidUsage, "P2P/IPC for CUDA device %d: this Braid was built without CUDA", config.cudaDev);
}

CudaPeerQuery queryCudaPeerAccess(int, const std::string&, const std::string&) {
  return {CudaPeerAccess::Unknown, "Braid was built without CUDA"};
}

bool cudaIpcSupported(int, std::string* why) {
  if (why) *why = "Braid was built without CUDA";
  return false;
}

}  // namespace braid

#endif
