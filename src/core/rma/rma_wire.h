// What travels on a one-sided connection (rank to rank through the network backend, see
// rma_service.h): fixed-size operation records, each a message of kRmaRecordBytes with tag
// kRmaRecordTag; a put's data follows its record as one message with tag kRmaDataTag.
//
//   Hello   first record of a connection: who connects (rank) for which communicator
//           (commHash), so that the receiving side knows whose counters to move.
//   Put     `bytes` of data follow for window `window` at `offset`; with `signal`, signal
//           (context, signalIndex) counts once the data has landed.
//   Signal  counts (context, signalIndex) from the sender.
//   Goodbye last record of a connection (its sender's communicator goes): the receiving
//           side stops reading it, so the close that follows is not mistaken for a death.
//
// Little-endian, checked on decode (magic, kind, sizes): a record from a confused or
// hostile peer is an error, never a write outside a window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace braid {

constexpr size_t kRmaRecordBytes = 64;
constexpr uint32_t kRmaRecordTag = 0x524d4131;  // "RMA1"
constexpr uint32_t kRmaDataTag = 0x524d4144;    // "RMAD"

enum class RmaRecordKind : uint8_t { Hello = 1, Put = 2, Signal = 3, Goodbye = 4 };

struct RmaRecord {
  static constexpr uint32_t kMagic = 0x424d4152;  // "RAMB"
  RmaRecordKind kind = RmaRecordKind::Hello;
  bool signal = false;  // Put: count a signal after the data
  int32_t source = -1;  // the sending rank
  uint32_t context = 0;
  uint32_t signalIndex = 0;
  uint64_t commHash = 0;
  uint64_t window = 0;  // the window's id (its registration number in the communicator)
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

void encodeRmaRecord(const RmaRecord& record, uint8_t out[kRmaRecordBytes]);
// False (and why) when the bytes are not a valid record.
bool decodeRmaRecord(const uint8_t* data, size_t size, RmaRecord* out, std::string* why);

}  // namespace braid
