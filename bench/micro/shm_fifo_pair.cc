#include "shm_fifo_pair.h"

#include <utility>

namespace braid::bench {
namespace {

// Connector's layout code is protected: a subclass that only binds a block reuses it, so
// the benchmark cannot drift from the layout the SHM transport uses.
class InProcessConnector final : public Connector {
 public:
  InProcessConnector(bool isSend, uint8_t* block, const FifoSizes& sizes)
      : Connector(isSend, /*peer=*/0, "SHM (in-process)", sizes) {
    bindLayout(block, sizes);
  }
  static size_t bytesFor(const FifoSizes& sizes) { return layoutBytes(sizes); }
};

}  // namespace

Status ShmFifoPair::create(const FifoSizes& sizes, std::unique_ptr<ShmFifoPair>* out) {
  std::unique_ptr<ShmFifoPair> pair(new ShmFifoPair());
  BRAID_CHECK(ShmSegment::create(InProcessConnector::bytesFor(sizes), &pair->segment_));
  // Nobody attaches by name: drop it now so nothing is left in /dev/shm.
  pair->segment_.unlinkName();
  pair->sender_ = std::make_unique<InProcessConnector>(true, pair->segment_.data(), sizes);
  pair->receiver_ = std::make_unique<InProcessConnector>(false, pair->segment_.data(), sizes);
  *out = std::move(pair);
  return okStatus();
}

}  // namespace braid::bench
