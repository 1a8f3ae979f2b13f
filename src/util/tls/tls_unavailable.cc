// Builds without OpenSSL (BRAID_TLS=OFF, or AUTO without libssl-dev): every request for TLS
// is refused with an error that says why, never answered with plain text.
#include "util/tls/tls_security.h"

namespace braid {

bool tlsBuiltIn() { return false; }

Status createTlsSecurity(const TlsSettings& settings, SecurityRef* /*out*/) {
  return tlsNotBuiltInError(settings.origin);
}

}  // namespace braid
