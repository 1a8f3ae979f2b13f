// A transport connects the two ends of a connection between ranks. Setup is a three-step
// handshake carried by the bootstrap (see connection_setup.h): the receiving end creates
// its resources and produces a handle; the sending end uses the handle to attach and
// answers with an acknowledgement; the receiving end finishes (SHM unlinks its segment
// name, NET accepts the connection).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "transport/connector.h"
#include "util/status.h"

namespace braid {

// Why a connection exists; part of the bootstrap tags of its handshake.
enum class ConnPurpose : uint8_t {
  Ring = 1,       // channel ring: send to next, receive from previous
  TreeUp = 2,     // tree: child -> parent (reduce)
  TreeDown = 3,   // tree: parent -> child (broadcast)
  P2p = 4,        // send/recv and the collectives built on them
  HierLocal = 5,  // Hier: the ring over the ranks of one host
  HierCross = 6,  // Hier: the ring over the ranks of one local index across hosts
};

struct ConnRequest {
  ConnPurpose purpose = ConnPurpose::Ring;
  int channel = 0;
  int peer = -1;
  bool isSend = false;
  // Where a backend with several devices per rank (IB HCAs) starts counting channels for
  // this connection: 0 for connections whose two ends may sit at different positions on
  // their hosts (channel c takes device c), the local index for Hier's cross-host rings
  // (whose ranks all have that index), so that local rank j drives the j-th device and the
  // host's ranks spread over its devices. Both ends must give the same value.
  int rail = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual Status setupRecv(const ConnRequest& request, std::vector<uint8_t>* handle,
                           std::unique_ptr<Connector>* out) = 0;
  virtual Status connectSend(const ConnRequest& request, const std::vector<uint8_t>& handle, std::vector<uint8_t>* ack,
                             std::unique_ptr<Connector>* out) = 0;
  virtual Status finishRecv(Connector& connector, const std::vector<uint8_t>& ack) = 0;
};

}  // namespace braid
