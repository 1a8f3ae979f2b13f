// The queue pairs of one connection end, and what the two ends tell each other to connect
// them. Every connection is NCCL_IB_QPS_PER_CONNECTION reliable-connected (RC) QPs sharing
// one completion queue, brought up INIT -> RTR -> RTS: on RoCE with a GRH (the peer's GID,
// our chosen GID index, hop limit 255, NCCL_IB_TC), on InfiniBand by LID (NCCL_IB_SL);
// ack timeout NCCL_IB_TIMEOUT, retry count NCCL_IB_RETRY_CNT, partition key index
// NCCL_IB_PKEY.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "transport/net/ib/ib_device.h"
#include "transport/net/net_backend.h"
#include "util/status.h"

namespace braid {

constexpr int kIbMaxQpsPerConnection = 16;

// What a connection carries: NetBackend's receiver-driven send/receive, or (one-sided
// operations) only the sender's RDMA writes with immediate, all on its first QP.
constexpr uint32_t kIbModeSendRecv = 0;
constexpr uint32_t kIbModeWrites = 1;

struct IbQpSettings {
  int timeout = 20;          // NCCL_IB_TIMEOUT: 4.096 us x 2^timeout
  int retryCount = 7;        // NCCL_IB_RETRY_CNT
  int trafficClass = 0;      // NCCL_IB_TC
  int serviceLevel = 0;      // NCCL_IB_SL
  int pkeyIndex = 0;         // NCCL_IB_PKEY
  int qpsPerConnection = 1;  // NCCL_IB_QPS_PER_CONNECTION
};

// One end's description, sent over the setup socket (both ends run the same build, so a
// fixed layout of fixed-size fields; the magic and version reject anything else).
struct IbWireInfo {
  static constexpr uint32_t kMagic = 0x42524942;  // "BRIB"
  static constexpr uint32_t kVersion = 1;
  uint32_t magic = kMagic;
  uint32_t version = kVersion;
  uint64_t cookie = 0;  // the listener's, from its handle: strangers are turned away
  uint32_t nQps = 0;
  uint32_t qpn[kIbMaxQpsPerConnection] = {};
  uint16_t lid = 0;
  uint8_t linkLayer = 0;  // IbLinkLayer
  uint8_t mtu = 0;        // ibv_mtu
  uint8_t gid[16] = {};
  int32_t gidIndex = 0;
  uint8_t roceVersion = 0;  // 1, 2 or 0 (unknown / IB)
  uint8_t family = 0;       // AF_INET / AF_INET6 of the GID
  uint8_t pad[2] = {};
  uint64_t fifoAddr = 0;  // sender only: its clear-to-send FIFO
  uint32_t fifoRkey = 0;
  uint32_t mode = 0;  // sender only: kIbModeSendRecv, or kIbModeWrites (net_rdma.h's connectForWrites)
  char device[32] = {};
};
static_assert(std::is_trivially_copyable_v<IbWireInfo>);

class IbQpSet {
 public:
  // Creates the CQ and `settings.qpsPerConnection` QPs in INIT. `sendDepth`/`recvDepth`
  // are the work requests each QP may have outstanding.
  static Status create(std::shared_ptr<IbDevice> device, const IbQpSettings& settings, int sendDepth, int recvDepth,
                       std::unique_ptr<IbQpSet>* out);
  ~IbQpSet();
  IbQpSet(const IbQpSet&) = delete;
  IbQpSet& operator=(const IbQpSet&) = delete;

  // Fills the QP numbers and addressing of this end.
  void describe(IbWireInfo* info) const;
  // Checks the peer's description (magic, QP count, link layer; WARNs when the RoCE
  // versions or address families differ) and moves every QP to RTR then RTS.
  Status connect(const IbWireInfo& remote, const std::string& peer);

  IbDevice& device() const { return *device_; }
  const std::shared_ptr<IbDevice>& sharedDevice() const { return device_; }
  ibv_cq* cq() const { return cq_; }
  int size() const { return static_cast<int>(qps_.size()); }
  ibv_qp* qp(int i) const { return qps_[static_cast<size_t>(i)]; }

 private:
  IbQpSet(std::shared_ptr<IbDevice> device, const IbQpSettings& settings)
      : device_(std::move(device)), settings_(settings) {}
  Status toInit(ibv_qp* qp);
  Status toRtr(ibv_qp* qp, uint32_t remoteQpn, const IbWireInfo& remote);
  Status toRts(ibv_qp* qp);

  std::shared_ptr<IbDevice> device_;
  IbQpSettings settings_;
  ibv_cq* cq_ = nullptr;
  std::vector<ibv_qp*> qps_;
};

}  // namespace braid
