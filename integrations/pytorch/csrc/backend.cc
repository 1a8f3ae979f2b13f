#include "backend.h"

#include <algorithm>
#include <optional>

#include <pybind11/pybind11.h>

namespace braid::torch_ext {

BraidBackend::BraidBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                           std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size), store_(store), engine_(std::make_unique<Engine>(store, rank, size, timeout)) {
  init();
}

BraidBackend::BraidBackend(const c10::intrusive_ptr<c10d::Store>& store, std::unique_ptr<Comm> comm,
                           std::chrono::milliseconds timeout)
    : c10d::Backend(comm->rank(), comm->size()),
      store_(store),
      engine_(std::make_unique<Engine>(store, std::move(comm), timeout)) {
  init();
}

BraidBackend::~BraidBackend() {
  // Python may drop the last reference with the GIL held.
  std::optional<pybind11::gil_scoped_release> release;
  if (Py_IsInitialized() && PyGILState_Check()) release.emplace();
  engine_.reset();
}

c10::intrusive_ptr<c10d::Backend::Options> BraidBackend::getBackendOptions() {
  return c10::make_intrusive<Options>("braid", engine_->timeout());
}

c10::intrusive_ptr<c10d::Backend> BraidBackend::split(const c10::intrusive_ptr<c10d::Store>& store,
                                                      const std::vector<int>& ranks,
                                                      const c10::intrusive_ptr<Options>& opts) {
  const int me = getRank();
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  for (int r : sorted) {
    TORCH_CHECK(r >= 0 && r < getSize(), "braid: split: rank ", r, " is outside the parent group [0, ", getSize(), ")");
  }
  TORCH_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "braid: split: a rank appears twice");
  auto pos = std::find(sorted.begin(), sorted.end(), me);
  std::chrono::milliseconds timeout = opts ? opts->timeout : engine_->timeout();
  if (pos == sorted.end()) {
    performNocolorSplit();
    return nullptr;
  }
  // The groups of one split are disjoint, so each one's smallest rank names it.
  int color = sorted.front();
  int key = static_cast<int>(pos - sorted.begin());
  std::unique_ptr<Comm> child = engine_->splitComm(color, key, timeout);
  TORCH_CHECK(child, "braid: split: rank ", me, " got no communicator for color ", color);
  return c10::make_intrusive<BraidBackend>(store, std::move(child), timeout);
}

c10::intrusive_ptr<BraidBackend> BraidBackend::splitForGroup(const c10::intrusive_ptr<c10d::Store>& store,
                                                             const std::vector<int64_t>& ranks,
                                                             std::chrono::milliseconds timeout) {
  std::vector<int> asInt(ranks.begin(), ranks.end());
  auto options = c10::make_intrusive<Options>("braid", timeout);
  auto child = split(store, asInt, options);
  return c10::static_intrusive_pointer_cast<BraidBackend>(child);
}

void BraidBackend::performNocolorSplit() {
  std::unique_ptr<Comm> none = engine_->splitComm(NCCL_SPLIT_NOCOLOR, getRank(), engine_->timeout());
  TORCH_CHECK(!none, "braid: a split with no color returned a communicator");
}

}  // namespace braid::torch_ext
