#include "common/buffer.h"

#include <utility>

#include "common/fatal.h"
#include "nccl.h"

namespace braid::bench {

Buffer::Buffer(size_t bytes) : size_(bytes) {
  void* ptr = nullptr;
  // Never zero bytes: every rank needs a valid pointer, even for empty operations.
  BENCH_NCCL(ncclMemAlloc(&ptr, bytes > 0 ? bytes : 64));
  data_ = static_cast<char*>(ptr);
}

Buffer::~Buffer() {
  if (data_) ncclMemFree(data_);
}

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (data_) ncclMemFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace braid::bench
