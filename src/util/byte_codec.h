// Little-endian encoding of the messages that cross process boundaries. The reader checks
// every length against what is left and against a caller-given maximum, so a truncated or
// hostile message is an error, never an out-of-bounds read.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace braid {

// Every supported platform (x86-64, aarch64, ppc64le) is little-endian; the wire format is too.
static_assert(std::endian::native == std::endian::little, "Braid's wire format assumes a little-endian host");

class ByteWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u16(uint16_t v) { raw(&v, sizeof(v)); }
  void u32(uint32_t v) { raw(&v, sizeof(v)); }
  void u64(uint64_t v) { raw(&v, sizeof(v)); }
  void i32(int32_t v) { raw(&v, sizeof(v)); }
  void raw(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
  }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void blob(const std::vector<uint8_t>& b) {
    u32(static_cast<uint32_t>(b.size()));
    raw(b.data(), b.size());
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

class ByteReader {
 public:
  ByteReader(const void* data, size_t size) : p_(static_cast<const uint8_t*>(data)), left_(size) {}
  explicit ByteReader(const std::vector<uint8_t>& v) : ByteReader(v.data(), v.size()) {}

  bool u8(uint8_t* v) { return raw(v, 1); }
  bool u16(uint16_t* v) { return raw(v, sizeof(*v)); }
  bool u32(uint32_t* v) { return raw(v, sizeof(*v)); }
  bool u64(uint64_t* v) { return raw(v, sizeof(*v)); }
  bool i32(int32_t* v) { return raw(v, sizeof(*v)); }
  bool raw(void* out, size_t n) {
    if (n > left_) return fail();
    std::memcpy(out, p_, n);
    p_ += n;
    left_ -= n;
    return true;
  }
  bool str(std::string* s, size_t maxBytes) {
    uint32_t n = 0;
    if (!u32(&n) || n > maxBytes || n > left_) return fail();
    s->assign(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
    return true;
  }
  bool blob(std::vector<uint8_t>* b, size_t maxBytes) {
    uint32_t n = 0;
    if (!u32(&n) || n > maxBytes || n > left_) return fail();
    b->assign(p_, p_ + n);
    p_ += n;
    left_ -= n;
    return true;
  }
  size_t left() const { return left_; }
  bool ok() const { return ok_; }
  // True when everything was read without error and nothing is left over.
  bool finished() const { return ok_ && left_ == 0; }

 private:
  bool fail() {
    ok_ = false;
    left_ = 0;
    return false;
  }
  const uint8_t* p_;
  size_t left_;
  bool ok_ = true;
};

}  // namespace braid
