#include "bootstrap/frames.h"

#include "util/socket.h"

namespace braid {

Status sendFrame(ByteStream& stream, const std::vector<uint8_t>& payload, Deadline deadline, const AbortFlag* abort,
                 const std::string& peer) {
  uint32_t length = static_cast<uint32_t>(payload.size());
  BRAID_CHECK(socketSendAll(stream, &length, sizeof(length), deadline, abort, peer));
  return socketSendAll(stream, payload.data(), payload.size(), deadline, abort, peer);
}

Status recvFrame(ByteStream& stream, size_t maxBytes, Deadline deadline, const AbortFlag* abort,
                 const std::string& peer, std::vector<uint8_t>* payload) {
  uint32_t length = 0;
  BRAID_CHECK(socketRecvAll(stream, &length, sizeof(length), deadline, abort, peer));
  if (length > maxBytes) {
    return BRAID_ERROR(ncclInternalError,
                       "%s announced a %u-byte bootstrap message (at most %zu expected): "
                       "corrupted stream or incompatible peer",
                       peer.c_str(), length, maxBytes);
  }
  payload->assign(length, 0);
  return socketRecvAll(stream, payload->data(), length, deadline, abort, peer);
}

}  // namespace braid
