#include "util/stream_security.h"

namespace braid {

namespace {

class PlainSecurity final : public StreamSecurity {
 public:
  std::string describe() const override { return "plain TCP"; }
  bool encrypted() const override { return false; }
  bool needsHandshake() const override { return false; }
  Status wrap(UniqueFd fd, bool /*connecting*/, Stream* out) const override {
    *out = makePlainStream(std::move(fd));
    return okStatus();
  }
};

}  // namespace

SecurityRef plainSecurity() {
  static const SecurityRef plain = std::make_shared<PlainSecurity>();
  return plain;
}

}  // namespace braid
