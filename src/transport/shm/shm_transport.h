// SHM: ranks of one host exchange through a shared-memory segment per connection, created
// by the receiving end (it holds the counters and both protocols' slots). When the kernel
// allows it, large point-to-point transfers skip the FIFO: the receiver copies straight
// from the sender's buffer with process_vm_readv (single copy).
//
// GPU mode (`cudaDev` >= 0): the same segment, registered by both ends for their device
// (host-pinned FIFOs the kernels reach over PCIe), with device views; the step counter and
// LL staging live in device memory. Single copy is host-mode only (a kernel cannot read
// another process's memory) and is off.
#pragma once

#include "transport/transport.h"

namespace braid {

class ShmTransport : public Transport {
 public:
  // `singleCopy`: probe and allow direct reads of the sender's memory (process_vm_readv);
  // host mode only. `cudaDev`: the communicator's device in GPU mode, -1 in host mode.
  ShmTransport(FifoSizes sizes, bool singleCopy, int cudaDev = -1)
      : sizes_(sizes), singleCopy_(singleCopy && cudaDev < 0), cudaDev_(cudaDev) {}
  const char* name() const override { return "SHM"; }
  Status setupRecv(const ConnRequest& request, std::vector<uint8_t>* handle, std::unique_ptr<Connector>* out) override;
  Status connectSend(const ConnRequest& request, const std::vector<uint8_t>& handle, std::vector<uint8_t>* ack,
                     std::unique_ptr<Connector>* out) override;
  Status finishRecv(Connector& connector, const std::vector<uint8_t>& ack) override;

 private:
  FifoSizes sizes_;
  bool singleCopy_;
  int cudaDev_;
};

}  // namespace braid
