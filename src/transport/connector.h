// The host-side owner of one end of a connection: the memory behind the SendConn/RecvConn
// views the primitives use (FIFO slots, counters, LL staging, the step counter) and the
// transport resources that keep it alive (a shared-memory mapping, a network connection
// driven by the proxy). Destroying a Connector releases everything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/primitives/conn_fifo.h"

namespace braid {

// FIFO geometry of a connection, the same on both ends (NCCL_BUFFSIZE etc.).
struct FifoSizes {
  uint32_t simpleStepBytes = 512 * 1024;
  uint32_t llStepBytes = 64 * 1024;  // LL lines; payload per step is half
};

class Proxy;
struct NetEndpoint;

class Connector {
 public:
  virtual ~Connector() = default;
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;

  bool isSend() const { return isSend_; }
  int peer() const { return peer_; }
  // The host executor's views. On a CUDA IPC connector (GPU mode) their FIFO addresses are
  // device memory: host code may compare them but never dereference them.
  SendConn* sendView() { return &send_; }
  RecvConn* recvView() { return &recv_; }
  // How the data travels, for the INFO log ("SHM", "NET/Socket/0 eth0").
  const std::string& via() const { return via_; }
  // The process whose memory a receiver may read directly (0: single copy not possible).
  int singleCopyPid() const { return singleCopyPid_; }
  // Host mode, a network connection whose steps the worker may move itself beside the
  // proxy (Proxy::assist): its proxy and endpoint. False for every other connector.
  virtual bool assistable(Proxy** /*proxy*/, NetEndpoint** /*endpoint*/) { return false; }

  // Memory this end holds for the connection (ncclCommMemStats): host memory (its mapping
  // of the FIFO block or segment, the LL staging) and device memory (GPU mode).
  struct Footprint {
    size_t hostBytes = 0;
    size_t deviceBytes = 0;
  };
  virtual Footprint footprint() const { return {staging_.size(), 0}; }

  // GPU mode: the same views with addresses a CUDA kernel can use — FIFO slots and
  // counters in device memory or in host memory mapped for the device, the step counter
  // and LL staging in device memory. The executor copies them into device memory for its
  // kernels. False (and the views unset) on connectors made for host mode.
  bool hasDeviceViews() const { return hasDeviceViews_; }
  const SendConn& deviceSendView() const { return deviceSend_; }
  const RecvConn& deviceRecvView() const { return deviceRecv_; }

 protected:
  Connector(bool isSend, int peer, std::string via, const FifoSizes& sizes)
      : isSend_(isSend), peer_(peer), via_(std::move(via)), staging_(llStagingBytes(sizes)) {
    send_.step = &step_;
    recv_.step = &step_;
    send_.peer = recv_.peer = peer;
    send_.llStaging = recv_.llStaging = staging_.data();
  }

  // Points the views at a shared block laid out as: ConnShared, Simple slots, LL slots.
  void bindLayout(uint8_t* block, const FifoSizes& sizes) {
    auto* shared = reinterpret_cast<ConnShared*>(block);
    FifoView simple{block + sizeof(ConnShared), sizes.simpleStepBytes, sizes.simpleStepBytes};
    FifoView ll{simple.base + static_cast<size_t>(kSteps) * sizes.simpleStepBytes, sizes.llStepBytes,
                sizes.llStepBytes};
    send_.shared = recv_.shared = shared;
    send_.simple = recv_.simple = simple;
    send_.ll = recv_.ll = ll;
  }
  static size_t layoutBytes(const FifoSizes& sizes) {
    return sizeof(ConnShared) + static_cast<size_t>(kSteps) * (sizes.simpleStepBytes + sizes.llStepBytes);
  }
  // Bytes of the LL staging buffer of one end (host: staging_; GPU mode: device memory).
  static size_t llStagingBytes(const FifoSizes& sizes) { return sizes.llStepBytes / 2 + 16; }

  // GPU mode: the device views are the host views with every FIFO address (counters,
  // Simple and LL slots) passed through `toDevice` — the host memory's mapping for the
  // device, or the identity where the block is device memory already — and the step
  // counter and LL staging in the end's device memory. Strides, sizes, the peer and the
  // proxied flag stay the host views'.
  template <class ToDevice>
  void bindDeviceViews(ToDevice toDevice, uint64_t* deviceStep, uint8_t* deviceStaging) {
    auto translate = [&](auto& device, const auto& host) {
      device = host;
      device.shared = toDevice(host.shared);
      device.simple.base = toDevice(host.simple.base);
      device.ll.base = toDevice(host.ll.base);
      device.step = deviceStep;
      device.llStaging = deviceStaging;
    };
    translate(deviceSend_, send_);
    translate(deviceRecv_, recv_);
    hasDeviceViews_ = true;
  }

  bool isSend_;
  int peer_;
  std::string via_;
  SendConn send_;
  RecvConn recv_;
  uint64_t step_ = 0;
  std::vector<uint8_t> staging_;
  int singleCopyPid_ = 0;
  bool hasDeviceViews_ = false;
  SendConn deviceSend_;
  RecvConn deviceRecv_;
};

}  // namespace braid
