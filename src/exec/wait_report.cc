#include "exec/wait_report.h"

#include "util/log.h"

namespace braid {

std::string waitingFor(const Connector& connector, const std::string& peer) {
  if (connector.isSend()) return "for " + peer + " to take the data sent to it (" + connector.via() + ")";
  return "for data from " + peer + " (" + connector.via() + ")";
}

Status timedOut(ncclResult_t result, const std::string& subject, double timeoutSec, int channel,
                const std::string& waiting) {
  return BRAID_ERROR(result,
                     "%s did not complete within BRAID_TIMEOUT=%g s: channel %d was waiting %s; that rank is stuck, "
                     "stopped or much slower than this one",
                     subject.c_str(), timeoutSec, channel, waiting.c_str());
}

}  // namespace braid
