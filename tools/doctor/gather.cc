#include "gather.h"

#include <algorithm>
#include <cstring>

namespace braid::doctor {

std::string ncclFailure(const char* what, ncclResult_t result) {
  std::string text = std::string(what) + ": " + ncclGetErrorString(result);
  const char* last = ncclGetLastError(nullptr);
  if (last && *last) text += std::string(" (") + last + ")";
  return text;
}

bool allGatherBlobs(ncclComm_t comm, const std::vector<uint8_t>& mine, std::vector<std::vector<uint8_t>>* all,
                    std::string* error) {
  int nranks = 0;
  ncclCommCount(comm, &nranks);
  std::vector<uint64_t> sizes(static_cast<size_t>(nranks));
  uint64_t mySize = mine.size();
  ncclResult_t r = ncclAllGather(&mySize, sizes.data(), 1, ncclUint64, comm, nullptr);
  if (r != ncclSuccess) {
    *error = ncclFailure("ncclAllGather of blob sizes", r);
    return false;
  }
  size_t largest = std::max<size_t>(1, *std::max_element(sizes.begin(), sizes.end()));
  std::vector<uint8_t> padded(largest, 0), gathered(largest * static_cast<size_t>(nranks));
  std::memcpy(padded.data(), mine.data(), mine.size());
  r = ncclAllGather(padded.data(), gathered.data(), largest, ncclUint8, comm, nullptr);
  if (r != ncclSuccess) {
    *error = ncclFailure("ncclAllGather of blobs", r);
    return false;
  }
  all->assign(static_cast<size_t>(nranks), {});
  for (size_t i = 0; i < all->size(); ++i) {
    size_t n = std::min<size_t>(sizes[i], largest);
    const uint8_t* begin = gathered.data() + i * largest;
    (*all)[i].assign(begin, begin + n);
  }
  return true;
}

bool commBarrier(ncclComm_t comm, std::string* error) {
  int one = 1;
  ncclResult_t r = ncclAllReduce(&one, &one, 1, ncclInt32, ncclSum, comm, nullptr);
  if (r != ncclSuccess) {
    *error = ncclFailure("barrier (ncclAllReduce)", r);
    return false;
  }
  return true;
}

}  // namespace braid::doctor
