#include "transport/net/ib/ib_qp.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

Gid remoteGid(const IbWireInfo& info) {
  Gid gid{};
  std::memcpy(gid.data(), info.gid, gid.size());
  return gid;
}

}  // namespace

Status IbQpSet::create(std::shared_ptr<IbDevice> device, const IbQpSettings& settings, int sendDepth, int recvDepth,
                       std::unique_ptr<IbQpSet>* out) {
  std::unique_ptr<IbQpSet> set(new IbQpSet(std::move(device), settings));
  const IbvApi& api = set->device_->api();
  const IbPort& port = set->device_->port();
  int nQps = std::clamp(settings.qpsPerConnection, 1, kIbMaxQpsPerConnection);
  if (port.maxQpWr > 0) {
    sendDepth = std::min(sendDepth, port.maxQpWr);
    recvDepth = std::min(recvDepth, port.maxQpWr);
  }
  int cqe = nQps * (sendDepth + recvDepth);
  if (port.maxCqe > 0) cqe = std::min(cqe, port.maxCqe);
  set->cq_ = api.createCq(set->device_->context(), cqe, nullptr, nullptr, 0);
  if (!set->cq_) {
    return BRAID_ERROR(ncclSystemError, "NET/IB: ibv_create_cq(%d entries) on %s failed: %s", cqe,
                       set->device_->name().c_str(), std::strerror(errno));
  }
  for (int i = 0; i < nQps; ++i) {
    ibv_qp_init_attr init{};
    init.send_cq = set->cq_;
    init.recv_cq = set->cq_;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = static_cast<uint32_t>(sendDepth);
    init.cap.max_recv_wr = static_cast<uint32_t>(recvDepth);
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    ibv_qp* qp = api.createQp(set->device_->pd(), &init);
    if (!qp) {
      return BRAID_ERROR(ncclSystemError, "NET/IB: ibv_create_qp (RC, %d send / %d recv WRs) on %s failed: %s",
                         sendDepth, recvDepth, set->device_->name().c_str(), std::strerror(errno));
    }
    set->qps_.push_back(qp);
    BRAID_CHECK(set->toInit(qp));
  }
  *out = std::move(set);
  return okStatus();
}

IbQpSet::~IbQpSet() {
  const IbvApi& api = device_->api();
  for (ibv_qp* qp : qps_) api.destroyQp(qp);
  if (cq_) api.destroyCq(cq_);
}

void IbQpSet::describe(IbWireInfo* info) const {
  const IbPort& port = device_->port();
  const GidChoice& gid = device_->gid();
  info->nQps = static_cast<uint32_t>(qps_.size());
  for (size_t i = 0; i < qps_.size(); ++i) info->qpn[i] = qps_[i]->qp_num;
  info->lid = port.lid;
  info->linkLayer = static_cast<uint8_t>(port.linkLayer);
  info->mtu = static_cast<uint8_t>(port.activeMtu);
  std::memcpy(info->gid, gid.gid.data(), 16);
  info->gidIndex = gid.index;
  info->roceVersion = static_cast<uint8_t>(port.linkLayer == IbLinkLayer::Ethernet ? gidTypeVersion(gid.type) : 0);
  info->family = static_cast<uint8_t>(gidFamily(gid.gid));
  std::snprintf(info->device, sizeof(info->device), "%s", device_->name().c_str());
}

Status IbQpSet::toInit(ibv_qp* qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = static_cast<uint16_t>(settings_.pkeyIndex);
  attr.port_num = static_cast<uint8_t>(device_->port().port);
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int rc = device_->api().modifyQp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc != 0) {
    return BRAID_ERROR(ncclSystemError, "NET/IB: QP %u on %s: INIT failed: %s (NCCL_IB_PKEY=%d valid?)", qp->qp_num,
                       device_->name().c_str(), std::strerror(rc), settings_.pkeyIndex);
  }
  return okStatus();
}

Status IbQpSet::toRtr(ibv_qp* qp, uint32_t remoteQpn, const IbWireInfo& remote) {
  const IbPort& port = device_->port();
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(std::min<int>(port.activeMtu, remote.mtu));
  attr.dest_qp_num = remoteQpn;
  attr.rq_psn = 0;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = static_cast<uint8_t>(port.port);
  attr.ah_attr.sl = static_cast<uint8_t>(settings_.serviceLevel);
  if (port.linkLayer == IbLinkLayer::Ethernet) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid, 16);
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(device_->gid().index);
    attr.ah_attr.grh.hop_limit = 255;
    attr.ah_attr.grh.traffic_class = static_cast<uint8_t>(settings_.trafficClass);
  } else {
    attr.ah_attr.dlid = remote.lid;
  }
  int rc = device_->api().modifyQp(qp, &attr,
                                   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (rc != 0) {
    return BRAID_ERROR(ncclSystemError,
                       "NET/IB: QP %u on %s: RTR toward %s QP %u failed: %s (no route to GID %s from GID index %d?)",
                       qp->qp_num, device_->name().c_str(), remote.device, remoteQpn, std::strerror(rc),
                       gidToString(remoteGid(remote)).c_str(), device_->gid().index);
  }
  return okStatus();
}

Status IbQpSet::toRts(ibv_qp* qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = static_cast<uint8_t>(settings_.timeout);
  attr.retry_cnt = static_cast<uint8_t>(settings_.retryCount);
  attr.rnr_retry = 7;
  attr.sq_psn = 0;
  attr.max_rd_atomic = 1;
  int rc = device_->api().modifyQp(
      qp, &attr,
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  if (rc != 0) {
    return BRAID_ERROR(ncclSystemError, "NET/IB: QP %u on %s: RTS failed: %s", qp->qp_num, device_->name().c_str(),
                       std::strerror(rc));
  }
  return okStatus();
}

Status IbQpSet::connect(const IbWireInfo& remote, const std::string& peer) {
  if (remote.magic != IbWireInfo::kMagic || remote.version != IbWireInfo::kVersion) {
    return BRAID_ERROR(ncclRemoteError, "NET/IB: %s sent a connection setup this build does not speak (magic 0x%x v%u)",
                       peer.c_str(), remote.magic, remote.version);
  }
  if (remote.nQps != qps_.size()) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "NET/IB: %s uses %u QPs per connection, this side %zu: set NCCL_IB_QPS_PER_CONNECTION the same "
                       "on every rank",
                       peer.c_str(), remote.nQps, qps_.size());
  }
  const IbPort& port = device_->port();
  if (remote.linkLayer != static_cast<uint8_t>(port.linkLayer)) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "NET/IB: %s (%s) and this side (%s) have different link layers (InfiniBand vs RoCE); they "
                       "cannot be connected: choose ports with NCCL_IB_HCA",
                       peer.c_str(), remote.device, device_->name().c_str());
  }
  if (port.linkLayer == IbLinkLayer::Ethernet) {
    IbWireInfo local;
    describe(&local);
    if (remote.roceVersion != local.roceVersion || remote.family != local.family) {
      BRAID_WARN(
          "NET/IB: %s uses GID index %d (%s, RoCE v%d, %s) but this side (%s) uses GID index %d (%s, RoCE v%d, %s): "
          "RoCE peers with different versions or address families usually time out (completion error 12). Set "
          "NCCL_IB_ROCE_VERSION_NUM / NCCL_IB_ADDR_FAMILY (or NCCL_IB_GID_INDEX) the same on every node.",
          peer.c_str(), remote.gidIndex, gidToString(remoteGid(remote)).c_str(), remote.roceVersion,
          remote.family == AF_INET ? "IPv4" : "IPv6", device_->name().c_str(), local.gidIndex,
          gidToString(device_->gid().gid).c_str(), local.roceVersion, local.family == AF_INET ? "IPv4" : "IPv6");
    }
  }
  for (size_t i = 0; i < qps_.size(); ++i) {
    BRAID_CHECK(toRtr(qps_[i], remote.qpn[i], remote));
    BRAID_CHECK(toRts(qps_[i]));
  }
  return okStatus();
}

}  // namespace braid
