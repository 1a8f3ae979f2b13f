// Fuzz target: every decoder of bytes that arrive from other processes — the bootstrap's
// hello, join request, slice join and join reply, the unique id, socket addresses in wire
// form, the socket transport's connection handle (several addresses), and the watchdog's
// frames. None may crash, read out of bounds or loop; a
// successful decode must survive a re-encode.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bootstrap/unique_id.h"
#include "bootstrap/wire.h"
#include "core/health/watchdog_frame.h"
#include "transport/net/socket/socket_wire.h"
#include "util/socket_address.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace braid;
  std::vector<uint8_t> bytes(data, data + size);

  if (size >= Hello::kBytes) (void)Hello::decode(data);

  JoinRequest request;
  if (decodeJoinRequest(bytes, &request).ok()) {
    JoinRequest again;
    if (!decodeJoinRequest(encodeJoinRequest(request), &again).ok()) __builtin_trap();
  }
  SliceJoin slice;
  if (decodeSliceJoin(bytes, &slice).ok()) {
    SliceJoin again;
    if (!decodeSliceJoin(encodeSliceJoin(slice), &again).ok()) __builtin_trap();
  }
  JoinReply reply;
  (void)decodeJoinReply(bytes, 1 << 16, &reply);

  ncclUniqueId id{};
  std::memcpy(&id, data, size < sizeof(id) ? size : sizeof(id));
  UniqueIdContents contents;
  (void)decodeUniqueId(id, &contents);

  if (size >= SocketAddress::kWireBytes) {
    SocketAddress address;
    if (SocketAddress::fromWire(data, &address)) (void)address.toString();
  }
  NetHandle netHandle;
  std::memcpy(netHandle.bytes, data, size < kNetHandleBytes ? size : kNetHandleBytes);
  SocketHandle socketHandle;
  if (decodeSocketHandle(netHandle, &socketHandle)) {
    if (socketHandle.addresses.empty() || socketHandle.addresses.size() > kSocketHandleMaxAddresses) __builtin_trap();
    NetHandle again;
    encodeSocketHandle(socketHandle, &again);
    SocketHandle back;
    if (!decodeSocketHandle(again, &back) || back.addresses != socketHandle.addresses) __builtin_trap();
  }
  if (size >= sizeof(WatchdogFrame)) {
    WatchdogFrame frame;
    std::memcpy(&frame, data, sizeof(frame));
    (void)validateWatchdogFrame(frame, 1 + static_cast<int>(size % 4096), frame.commHash ^ (size & 1));
  }
  return 0;
}
