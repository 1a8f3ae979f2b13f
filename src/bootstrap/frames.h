// Length-prefixed messages on an established bootstrap connection (replies from a root,
// messages after a Hello). The length is checked against a maximum before any allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/byte_stream.h"
#include "util/deadline.h"
#include "util/status.h"

namespace braid {

Status sendFrame(ByteStream& stream, const std::vector<uint8_t>& payload, Deadline deadline, const AbortFlag* abort,
                 const std::string& peer);
Status recvFrame(ByteStream& stream, size_t maxBytes, Deadline deadline, const AbortFlag* abort,
                 const std::string& peer, std::vector<uint8_t>* payload);

}  // namespace braid
