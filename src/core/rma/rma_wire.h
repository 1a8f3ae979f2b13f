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
//
// Where the backend writes into remote memory itself (RDMA write with immediate,
// transport/net/net_rdma.h), the same operations are 32-bit immediate values instead:
//
//   bits 31-30  kind: Data (a piece of a put that does not signal), Signal (the last piece
//               of a put, or ncclSignal: count one signal), Hello, Goodbye
//   Signal:     bits 29-16 context, bits 15-0 signal index
//   Hello:      bits 29-0 the sending rank
//   Data, Goodbye: the other bits are 0
//
// The put's data is the write itself; the window address and key come from the window's
// registration, so nothing else travels.
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

enum class RmaImmediateKind : uint32_t { Data = 0, Signal = 1, Hello = 2, Goodbye = 3 };

struct RmaImmediate {
  RmaImmediateKind kind = RmaImmediateKind::Data;
  uint32_t context = 0;      // Signal
  uint32_t signalIndex = 0;  // Signal
  int32_t source = -1;       // Hello
};

constexpr int kRmaImmediateContextBits = 14;
constexpr int kRmaImmediateSignalBits = 16;
constexpr int kRmaImmediateRankBits = 30;

// Whether every (context, signal index) of a communicator with this many of each, and every
// rank of `nranks`, fits an immediate value.
bool rmaImmediateFits(int contexts, int signals, int nranks);
// The immediate of `imm`; its fields must fit (rmaImmediateFits).
uint32_t encodeRmaImmediate(const RmaImmediate& imm);
// False (and why) when `value` is not an immediate encodeRmaImmediate makes.
bool decodeRmaImmediate(uint32_t value, RmaImmediate* out, std::string* why);

void encodeRmaRecord(const RmaRecord& record, uint8_t out[kRmaRecordBytes]);
// False (and why) when the bytes are not a valid record.
bool decodeRmaRecord(const uint8_t* data, size_t size, RmaRecord* out, std::string* why);

}  // namespace braid
