// NET: connections through a network backend (IB verbs or sockets), driven by
// the communicator's proxy thread. Each end keeps its FIFO in its own memory; the proxy
// ships published slots to the peer's FIFO. Both protocols share the slots of a network
// connection (the receiving proxy cannot know in advance which one the next step uses).
//
// GPU mode (`cudaDev` >= 0): the FIFO block stays in host memory, where the proxy reads and
// writes it, and is registered for the device: the kernels fill and drain its slots over
// PCIe and the proxy moves them ("host-staged"; GPUDirect RDMA is not used).
#pragma once

#include "transport/net/net_backend.h"
#include "transport/net/proxy.h"
#include "transport/transport.h"
#include "util/deadline.h"

namespace braid {

// The device of a backend with `devices` devices (per rank, in the order both ends agree
// on: NCCL_IB_HCA's, or the topology's) that a connection uses: channel c of rail r takes
// device (r + c) mod devices; device 0 when the backend has none or one.
int netDeviceFor(const ConnRequest& request, int devices);

// The rail of Hier's cross-host ring of local rank `localRank` (ConnRequest::rail): its local
// index, unless the rank's device list already starts at its own (NicOrder::startsAtLocalRank:
// the topology's ranked tier, rotated by local rank), where counting from 0 lands there.
inline int hierCrossRail(bool devicesStartAtLocalRank, int localRank) {
  return devicesStartAtLocalRank ? 0 : localRank;
}

class NetTransport : public Transport {
 public:
  NetTransport(NetBackend* backend, Proxy* proxy, FifoSizes sizes, double timeoutSec, const AbortFlag* abort,
               int cudaDev = -1)
      : backend_(backend), proxy_(proxy), sizes_(sizes), timeoutSec_(timeoutSec), abort_(abort), cudaDev_(cudaDev) {}
  const char* name() const override { return "NET"; }
  Status setupRecv(const ConnRequest& request, std::vector<uint8_t>* handle, std::unique_ptr<Connector>* out) override;
  Status connectSend(const ConnRequest& request, const std::vector<uint8_t>& handle, std::vector<uint8_t>* ack,
                     std::unique_ptr<Connector>* out) override;
  Status finishRecv(Connector& connector, const std::vector<uint8_t>& ack) override;

 private:
  NetBackend* backend_;
  Proxy* proxy_;
  FifoSizes sizes_;
  double timeoutSec_;
  const AbortFlag* abort_;
  int cudaDev_;
};

}  // namespace braid
