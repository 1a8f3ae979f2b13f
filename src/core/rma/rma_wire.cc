#include "core/rma/rma_wire.h"

#include <cstring>

#include "util/byte_codec.h"

namespace braid {

void encodeRmaRecord(const RmaRecord& record, uint8_t out[kRmaRecordBytes]) {
  ByteWriter w;
  w.u32(RmaRecord::kMagic);
  w.u8(static_cast<uint8_t>(record.kind));
  w.u8(record.signal ? 1 : 0);
  w.u16(0);
  w.i32(record.source);
  w.u32(record.context);
  w.u32(record.signalIndex);
  w.u64(record.commHash);
  w.u64(record.window);
  w.u64(record.offset);
  w.u64(record.bytes);
  std::memset(out, 0, kRmaRecordBytes);
  std::memcpy(out, w.bytes().data(), w.bytes().size());
}

bool decodeRmaRecord(const uint8_t* data, size_t size, RmaRecord* out, std::string* why) {
  if (size != kRmaRecordBytes) {
    *why =
        "a one-sided record of " + std::to_string(size) + " bytes (expected " + std::to_string(kRmaRecordBytes) + ")";
    return false;
  }
  ByteReader r(data, size);
  uint32_t magic = 0;
  uint8_t kind = 0, signal = 0;
  uint16_t reserved = 0;
  RmaRecord record;
  bool read = r.u32(&magic) && r.u8(&kind) && r.u8(&signal) && r.u16(&reserved) && r.i32(&record.source) &&
              r.u32(&record.context) && r.u32(&record.signalIndex) && r.u64(&record.commHash) &&
              r.u64(&record.window) && r.u64(&record.offset) && r.u64(&record.bytes);
  if (!read || magic != RmaRecord::kMagic) {
    *why = "not a one-sided record (bad magic)";
    return false;
  }
  if (kind < static_cast<uint8_t>(RmaRecordKind::Hello) || kind > static_cast<uint8_t>(RmaRecordKind::Goodbye) ||
      signal > 1 || reserved != 0) {
    *why = "a one-sided record of unknown kind " + std::to_string(kind);
    return false;
  }
  record.kind = static_cast<RmaRecordKind>(kind);
  record.signal = signal == 1;
  if (record.source < 0) {
    *why = "a one-sided record from rank " + std::to_string(record.source);
    return false;
  }
  *out = record;
  return true;
}

}  // namespace braid
