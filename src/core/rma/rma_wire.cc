#include "core/rma/rma_wire.h"

#include <cstdio>
#include <cstring>

#include "util/byte_codec.h"

namespace braid {

namespace {

std::string immediateHex(uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", value);
  return text;
}

}  // namespace

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

namespace {

constexpr uint32_t kRmaImmKindShift = 30;
constexpr uint32_t kRmaImmPayloadMask = (uint32_t{1} << kRmaImmKindShift) - 1;
constexpr uint32_t kRmaImmSignalMask = (uint32_t{1} << kRmaImmediateSignalBits) - 1;
constexpr uint32_t kRmaImmContextMask = (uint32_t{1} << kRmaImmediateContextBits) - 1;

}  // namespace

bool rmaImmediateFits(int contexts, int signals, int nranks) {
  return contexts >= 1 && signals >= 1 && nranks >= 1 && static_cast<uint64_t>(contexts) <= kRmaImmContextMask + 1 &&
         static_cast<uint64_t>(signals) <= kRmaImmSignalMask + 1 &&
         static_cast<uint64_t>(nranks) <= kRmaImmPayloadMask + 1;
}

uint32_t encodeRmaImmediate(const RmaImmediate& imm) {
  uint32_t payload = 0;
  if (imm.kind == RmaImmediateKind::Signal) {
    payload = (imm.context & kRmaImmContextMask) << kRmaImmediateSignalBits | (imm.signalIndex & kRmaImmSignalMask);
  } else if (imm.kind == RmaImmediateKind::Hello) {
    payload = static_cast<uint32_t>(imm.source) & kRmaImmPayloadMask;
  }
  return static_cast<uint32_t>(imm.kind) << kRmaImmKindShift | payload;
}

bool decodeRmaImmediate(uint32_t value, RmaImmediate* out, std::string* why) {
  RmaImmediate imm;
  imm.kind = static_cast<RmaImmediateKind>(value >> kRmaImmKindShift);
  uint32_t payload = value & kRmaImmPayloadMask;
  switch (imm.kind) {
    case RmaImmediateKind::Signal:
      imm.context = payload >> kRmaImmediateSignalBits;
      imm.signalIndex = payload & kRmaImmSignalMask;
      break;
    case RmaImmediateKind::Hello:
      imm.source = static_cast<int32_t>(payload);
      break;
    case RmaImmediateKind::Data:
    case RmaImmediateKind::Goodbye:
      if (payload != 0) {
        *why = "a one-sided immediate value 0x" + immediateHex(value) + " with bits its kind does not use";
        return false;
      }
      break;
  }
  *out = imm;
  return true;
}

}  // namespace braid
