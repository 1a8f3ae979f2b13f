// Heap buffers for the memory benchmarks: page-aligned, with room for an offset, and
// written once up front so that page faults never land inside a timed loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace braid::bench {

class AlignedBuffer {
 public:
  // `bytes` usable from any offset below kMaxOffset.
  explicit AlignedBuffer(size_t bytes) : bytes_(roundUp(bytes + kMaxOffset)) {
    data_.reset(static_cast<uint8_t*>(std::aligned_alloc(kPage, bytes_)));
    if (!data_) throw std::bad_alloc();
    std::memset(data_.get(), 0, bytes_);
  }

  uint8_t* at(size_t offset) const { return data_.get() + offset; }

  static constexpr size_t kMaxOffset = 64;

 private:
  static constexpr size_t kPage = 4096;
  static size_t roundUp(size_t n) { return (n + kPage - 1) / kPage * kPage; }

  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  size_t bytes_;
  std::unique_ptr<uint8_t, Free> data_;
};

}  // namespace braid::bench
