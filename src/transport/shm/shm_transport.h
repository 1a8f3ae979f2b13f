// SHM: ranks of one host exchange through a shared-memory segment per connection, created
// by the receiving end (it holds the counters and both protocols' slots). When the kernel
// allows it, large point-to-point transfers skip the FIFO: the receiver copies straight
// from the sender's buffer with process_vm_readv (single copy).
#pragma once

#include "transport/transport.h"

namespace braid {

class ShmTransport : public Transport {
 public:
  // `singleCopy`: probe and allow direct reads of the sender's memory (process_vm_readv).
  ShmTransport(FifoSizes sizes, bool singleCopy) : sizes_(sizes), singleCopy_(singleCopy) {}
  const char* name() const override { return "SHM"; }
  Status setupRecv(const ConnRequest& request, std::vector<uint8_t>* handle, std::unique_ptr<Connector>* out) override;
  Status connectSend(const ConnRequest& request, const std::vector<uint8_t>& handle, std::vector<uint8_t>* ack,
                     std::unique_ptr<Connector>* out) override;
  Status finishRecv(Connector& connector, const std::vector<uint8_t>& ack) override;

 private:
  FifoSizes sizes_;
  bool singleCopy_;
};

}  // namespace braid
