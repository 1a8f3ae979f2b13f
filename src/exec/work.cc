#include "exec/work.h"

#include "util/log.h"

namespace braid {

Status pairSelfTransfers(const std::vector<P2pWork>& p2ps, int rank,
                         std::vector<std::pair<const P2pWork*, const P2pWork*>>* pairs) {
  std::vector<const P2pWork*> sends, recvs;
  for (const P2pWork& p : p2ps) {
    if (p.peer == rank) (p.isSend ? sends : recvs).push_back(&p);
  }
  if (sends.size() != recvs.size()) {
    return BRAID_ERROR(ncclInvalidUsage, "the group has %zu ncclSend to this rank itself but %zu ncclRecv from itself",
                       sends.size(), recvs.size());
  }
  pairs->clear();
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sends[i]->bytes != recvs[i]->bytes) {
      return BRAID_ERROR(ncclInvalidUsage, "ncclSend to itself of %zu bytes meets ncclRecv from itself of %zu bytes",
                         sends[i]->bytes, recvs[i]->bytes);
    }
    pairs->emplace_back(sends[i], recvs[i]);
  }
  return okStatus();
}

}  // namespace braid
