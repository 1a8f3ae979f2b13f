#include "transport/net/net_transport.h"

#include <cstdlib>
#include <cstring>
#include <thread>

#include "util/format.h"
#include "util/log.h"
#if BRAID_WITH_CUDA
#include "platform/device_memory.h"
#endif

namespace braid {

namespace {

class NetConnector : public Connector {
 public:
  NetConnector(bool isSend, int peer, const FifoSizes& sizes, NetBackend* backend, int device, bool gpuMode)
      : Connector(
            isSend, peer,
            std::string("NET/") + backend->name() + "/" + std::to_string(device) + (gpuMode ? " (host-staged)" : ""),
            sizes) {
    endpoint_.backend = backend;
    endpoint_.peerRank = peer;
    endpoint_.isSend = isSend;
    gpuMode_ = gpuMode;
  }
  // The FIFO block: counters, then kSteps slots shared by both protocols (each as large as
  // a Simple step). Separate from the constructor so that running out of memory is a Status.
  Status allocate(const FifoSizes& sizes) {
    bytes_ = sizeof(ConnShared) + static_cast<size_t>(kSteps) * sizes.simpleStepBytes;
    block_ = static_cast<uint8_t*>(std::aligned_alloc(4096, blockBytes()));
    if (!block_) {
      return BRAID_ERROR(ncclSystemError, "out of host memory for the FIFO of a network connection (%zu bytes)",
                         blockBytes());
    }
    std::memset(block_, 0, bytes_);
    auto* shared = reinterpret_cast<ConnShared*>(block_);
    FifoView simple{block_ + sizeof(ConnShared), sizes.simpleStepBytes, sizes.simpleStepBytes};
    uint32_t llBytes = sizes.llStepBytes < sizes.simpleStepBytes ? sizes.llStepBytes : sizes.simpleStepBytes;
    FifoView ll{simple.base, llBytes, sizes.simpleStepBytes};
    send_.shared = recv_.shared = shared;
    send_.simple = recv_.simple = simple;
    send_.ll = recv_.ll = ll;
    recv_.proxied = true;
    endpoint_.shared = shared;
    endpoint_.slots = simple.base;
    endpoint_.strideBytes = sizes.simpleStepBytes;
    return okStatus();
  }
  // GPU mode: registers the FIFO block (host memory: the proxy moves it) for `cudaDev`
  // and fills the device views.
  Status enableDevice(int cudaDev, const FifoSizes& sizes) {
#if BRAID_WITH_CUDA
    BRAID_CHECK(HostRegistration::create(block_, blockBytes(), cudaDev, &registration_));
    BRAID_CHECK(ConnDeviceState::create(llStagingBytes(sizes), cudaDev, &deviceState_));
    bindDeviceViews([this](auto* host) { return registration_.toDevice(host); }, deviceState_.step(),
                    deviceState_.llStaging());
    return okStatus();
#else
    (void)sizes;
    return BRAID_ERROR(ncclInvalidUsage, "network connection for CUDA device %d: this Braid was built without CUDA",
                       cudaDev);
#endif
  }

  ~NetConnector() override {
    // The proxy has stopped before connectors are freed (see Channels' destructor).
    if (endpoint_.memHandle && endpoint_.comm)
      (void)endpoint_.backend->deregisterMemory(*endpoint_.comm, endpoint_.memHandle);
    sendComm_.reset();
    recvComm_.reset();
    listen_.reset();
#if BRAID_WITH_CUDA
    registration_ = HostRegistration();  // unregistered before the block is freed
#endif
    std::free(block_);
  }

  Status attach(std::unique_ptr<NetSendComm> send, std::unique_ptr<NetRecvComm> recv, Proxy* proxy) {
    sendComm_ = std::move(send);
    recvComm_ = std::move(recv);
    NetComm* comm = sendComm_ ? static_cast<NetComm*>(sendComm_.get()) : recvComm_.get();
    endpoint_.comm = comm;
    endpoint_.peer = comm->peerDescription();
    BRAID_CHECK(endpoint_.backend->registerMemory(
        *comm, endpoint_.slots, static_cast<size_t>(kSteps) * endpoint_.strideBytes, &endpoint_.memHandle));
    listen_.reset();
    proxy->add(&endpoint_);
    proxy_ = proxy;
    return okStatus();
  }

  bool assistable(Proxy** proxy, NetEndpoint** endpoint) override {
    if (!proxy_ || gpuMode_ || !endpoint_.backend->progressFromAnyThread()) return false;
    *proxy = proxy_;
    *endpoint = &endpoint_;
    return true;
  }

  std::unique_ptr<NetListenComm> listen_;

  Footprint footprint() const override {
    Footprint f{blockBytes() + staging_.size(), 0};
#if BRAID_WITH_CUDA
    f.deviceBytes = deviceState_.bytes();
#endif
    return f;
  }

 private:
  size_t blockBytes() const { return (bytes_ + 4095) / 4096 * 4096; }

  uint8_t* block_ = nullptr;
  size_t bytes_ = 0;
#if BRAID_WITH_CUDA
  HostRegistration registration_;
  ConnDeviceState deviceState_;
#endif
  NetEndpoint endpoint_;
  Proxy* proxy_ = nullptr;
  bool gpuMode_ = false;  // the CUDA kernels publish its steps: only the proxy moves them
  std::unique_ptr<NetSendComm> sendComm_;
  std::unique_ptr<NetRecvComm> recvComm_;
};

}  // namespace

int netDeviceFor(const ConnRequest& request, int devices) {
  if (devices <= 1) return 0;
  const int64_t slot =
      static_cast<int64_t>(request.rail > 0 ? request.rail : 0) + (request.channel > 0 ? request.channel : 0);
  return static_cast<int>(slot % devices);
}

Status NetTransport::setupRecv(const ConnRequest& request, std::vector<uint8_t>* handle,
                               std::unique_ptr<Connector>* out) {
  int device = netDeviceFor(request, backend_->deviceCount());
  auto connector = std::make_unique<NetConnector>(false, request.peer, sizes_, backend_, device, cudaDev_ >= 0);
  BRAID_CHECK(connector->allocate(sizes_));
  if (cudaDev_ >= 0) BRAID_CHECK(connector->enableDevice(cudaDev_, sizes_));
  NetHandle netHandle;
  BRAID_CHECK(backend_->listen(device, &netHandle, &connector->listen_));
  handle->assign(netHandle.bytes, netHandle.bytes + kNetHandleBytes);
  *out = std::move(connector);
  return okStatus();
}

Status NetTransport::connectSend(const ConnRequest& request, const std::vector<uint8_t>& handle,
                                 std::vector<uint8_t>* ack, std::unique_ptr<Connector>* out) {
  if (handle.size() != kNetHandleBytes) {
    return BRAID_ERROR(ncclInternalError, "rank %d sent a network handle of %zu bytes", request.peer, handle.size());
  }
  int device = netDeviceFor(request, backend_->deviceCount());
  NetHandle netHandle;
  std::memcpy(netHandle.bytes, handle.data(), kNetHandleBytes);
  std::unique_ptr<NetSendComm> comm;
  Deadline deadline = Deadline::afterSeconds(timeoutSec_);
  while (!comm) {
    BRAID_CHECK(backend_->connect(device, netHandle, &comm));
    if (comm) break;
    if (aborted(abort_))
      return Status(ncclRemoteError, "aborted while connecting to rank " + std::to_string(request.peer));
    if (deadline.expired()) {
      return BRAID_ERROR(ncclRemoteError, "could not connect to rank %d through %s within %.0f s", request.peer,
                         backend_->name(), timeoutSec_);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  auto connector = std::make_unique<NetConnector>(true, request.peer, sizes_, backend_, device, cudaDev_ >= 0);
  BRAID_CHECK(connector->allocate(sizes_));
  if (cudaDev_ >= 0) BRAID_CHECK(connector->enableDevice(cudaDev_, sizes_));
  BRAID_CHECK(connector->attach(std::move(comm), nullptr, proxy_));
  ack->assign(1, 1);
  *out = std::move(connector);
  return okStatus();
}

Status NetTransport::finishRecv(Connector& base, const std::vector<uint8_t>& /*ack*/) {
  auto& connector = static_cast<NetConnector&>(base);
  std::unique_ptr<NetRecvComm> comm;
  Deadline deadline = Deadline::afterSeconds(timeoutSec_);
  while (!comm) {
    BRAID_CHECK(backend_->accept(*connector.listen_, &comm));
    if (comm) break;
    if (aborted(abort_)) return Status(ncclRemoteError, "aborted while accepting a connection");
    if (deadline.expired()) {
      return BRAID_ERROR(ncclRemoteError, "rank %d did not connect through %s within %.0f s", base.peer(),
                         backend_->name(), timeoutSec_);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return connector.attach(nullptr, std::move(comm), proxy_);
}

}  // namespace braid
