// What the TLS part offers whether or not OpenSSL was there at build time.
#include "util/tls/tls_security.h"

namespace braid {

Status tlsNotBuiltInError(const std::string& what) {
  return Status(ncclInvalidUsage,
                what +
                    ": this Braid was built without TLS support (OpenSSL 3 was not found at build time, or "
                    "BRAID_TLS=OFF): it cannot encrypt its connections. Rebuild with libssl-dev installed "
                    "(BRAID_TLS=ON makes its absence a build error)");
}

void eraseSecret(std::string* secret) {
  volatile char* bytes = secret->data();
  for (size_t i = 0; i < secret->size(); ++i) bytes[i] = 0;
  secret->clear();
}

}  // namespace braid
