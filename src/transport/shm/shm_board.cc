#include "transport/shm/shm_board.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "util/log.h"

namespace braid {

namespace {

// What rank 0 tells everyone: whether the segment exists, and its name.
struct SegmentNotice {
  int32_t result = ncclSuccess;
  char name[60] = {};
};

}  // namespace

Status ShmBoard::create(Bootstrap& bootstrap, size_t slotBytes, std::unique_ptr<ShmBoard>* out) {
  const int rank = bootstrap.rank();
  const int nranks = bootstrap.nranks();
  if (slotBytes == 0 || slotBytes % kCacheLine != 0) {
    return BRAID_ERROR(ncclInternalError, "board slots of %zu bytes: must be a positive multiple of %d", slotBytes,
                       kCacheLine);
  }
  auto board = std::make_unique<ShmBoard>();
  const size_t areaStride = 2 * sizeof(BoardLine) + 2 * slotBytes;
  const size_t bytes = areaStride * static_cast<size_t>(nranks);

  std::vector<SegmentNotice> notices(static_cast<size_t>(nranks));
  Status made = okStatus();
  if (rank == 0) {
    made = ShmSegment::create(bytes, &board->segment_);
    notices[0].result = made.code();
    if (made.ok()) {
      const std::string& name = board->segment_.name();
      if (name.size() >= sizeof(notices[0].name)) {
        made = BRAID_ERROR(ncclInternalError, "shared-memory name %s is too long to announce", name.c_str());
        notices[0].result = made.code();
      } else {
        std::memcpy(notices[0].name, name.c_str(), name.size());
      }
    }
  }
  BRAID_CHECK(bootstrap.allGather(notices.data(), sizeof(SegmentNotice)));
  if (notices[0].result != ncclSuccess) {
    if (rank == 0) return made;
    return BRAID_ERROR(static_cast<ncclResult_t>(notices[0].result),
                       "rank 0 could not create the shared-memory board of Direct collectives (its log says why)");
  }

  std::vector<int32_t> attached(static_cast<size_t>(nranks), ncclSuccess);
  Status mine = okStatus();
  if (rank != 0) {
    mine = ShmSegment::attach(std::string(notices[0].name, strnlen(notices[0].name, sizeof(notices[0].name))), bytes,
                              &board->segment_);
    attached[static_cast<size_t>(rank)] = mine.code();
  }
  Status gathered = bootstrap.allGather(attached.data(), sizeof(int32_t));
  // Everyone that could attach has: the name can go whatever happened.
  if (rank == 0) board->segment_.unlinkName();
  BRAID_CHECK(gathered);
  if (!mine.ok()) return mine;
  for (int r = 0; r < nranks; ++r) {
    if (attached[static_cast<size_t>(r)] != ncclSuccess) {
      return BRAID_ERROR(static_cast<ncclResult_t>(attached[static_cast<size_t>(r)]),
                         "rank %d could not attach the shared-memory board of Direct collectives (its log says why)",
                         r);
    }
  }
  BoardView& v = board->view_;
  v.base = board->segment_.data();
  v.areaStride = areaStride;
  v.slotBytes = slotBytes;
  v.nranks = nranks;
  v.rank = rank;
  v.nextOp = &board->nextOp_;
  BRAID_INFO(kLogInit | kLogShm, "Direct collectives: board of %d ranks, %zu-byte slots (%zu bytes of shared memory)",
             nranks, slotBytes, bytes);
  *out = std::move(board);
  return okStatus();
}

}  // namespace braid
