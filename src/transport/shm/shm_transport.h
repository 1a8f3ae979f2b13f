// SHM: ranks of one host exchange through a shared-memory segment per connection, created
// by the receiving end (it holds the counters and both protocols' slots).
#pragma once

#include "transport/transport.h"

namespace braid {

class ShmTransport : public Transport {
 public:
  explicit ShmTransport(FifoSizes sizes) : sizes_(sizes) {}
  const char* name() const override { return "SHM"; }
  Status setupRecv(const ConnRequest& request, std::vector<uint8_t>* handle, std::unique_ptr<Connector>* out) override;
  Status connectSend(const ConnRequest& request, const std::vector<uint8_t>& handle, std::vector<uint8_t>* ack,
                     std::unique_ptr<Connector>* out) override;
  Status finishRecv(Connector& connector, const std::vector<uint8_t>& ack) override;

 private:
  FifoSizes sizes_;
};

}  // namespace braid
