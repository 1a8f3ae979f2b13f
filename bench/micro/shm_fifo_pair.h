// One direction of an SHM connection with both ends in this process: a shared-memory
// segment laid out by transport/connector.h (ConnShared, Simple slots, LL slots) and two
// Connectors bound to it, the sender's and the receiver's, each with its own step counter
// and LL staging as two ranks' connectors have. The benchmarks then time the FIFO protocol
// itself over real shared memory, with no communicator, bootstrap or handshake around it.
#pragma once

#include <memory>

#include "transport/connector.h"
#include "transport/shm/shm_segment.h"
#include "util/status.h"

namespace braid::bench {

class ShmFifoPair {
 public:
  static Status create(const FifoSizes& sizes, std::unique_ptr<ShmFifoPair>* out);

  SendConn& send() { return *sender_->sendView(); }
  RecvConn& recv() { return *receiver_->recvView(); }

 private:
  ShmFifoPair() = default;

  ShmSegment segment_;
  std::unique_ptr<Connector> sender_;
  std::unique_ptr<Connector> receiver_;
};

}  // namespace braid::bench
