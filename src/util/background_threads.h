// Threads that outlive the call that started them: bootstrap roots started by
// ncclGetUniqueId, rank 0's unique-id rendezvous server. They end by themselves (their work
// done, or their timeout); at process exit their shared stop flag is raised and they are
// joined, so none is left running while the library unloads.
#pragma once

#include <functional>

#include "util/deadline.h"

namespace braid {

void startBackgroundThread(std::function<void(const AbortFlag& stop)> body);

}  // namespace braid
