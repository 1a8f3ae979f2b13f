#include "common/collective.h"

#include <cstring>

namespace braid::bench {

void CheckData::expectUnchanged() { std::memcpy(expected_, recv_, counts_.recvCount * eltSize_); }

size_t perRankCount(size_t count, size_t eltSize, int nranks) {
  const size_t perRank = count / static_cast<size_t>(nranks);
  const size_t multiple = eltSize >= 16 ? 1 : 16 / eltSize;
  return perRank - perRank % multiple;
}

}  // namespace braid::bench
