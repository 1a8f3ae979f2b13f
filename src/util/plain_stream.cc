// Plain TCP: bytes go to the kernel as they are.
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "util/byte_stream.h"

namespace braid {

namespace {

class PlainStream final : public ByteStream {
 public:
  explicit PlainStream(UniqueFd fd) : fd_(std::move(fd)) {}

  int fd() const override { return fd_.get(); }
  bool encrypted() const override { return false; }

  Status handshake(bool* done) override {
    *done = true;
    return okStatus();
  }

  Status write(const void* data, size_t bytes, size_t* moved) override {
    *moved = 0;
    while (bytes > 0) {
      ssize_t n = ::send(fd_.get(), data, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) {
        *moved = static_cast<size_t>(n);
        return okStatus();
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return okStatus();
      return failed(errno);
    }
    return okStatus();
  }

  Status read(void* data, size_t bytes, size_t* moved, bool* closed) override {
    *moved = 0;
    *closed = false;
    while (bytes > 0) {
      ssize_t n = ::recv(fd_.get(), data, bytes, MSG_DONTWAIT);
      if (n > 0) {
        *moved = static_cast<size_t>(n);
        return okStatus();
      }
      if (n == 0) {
        *closed = true;
        return okStatus();
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return okStatus();
      return failed(errno);
    }
    return okStatus();
  }

  short pollEvents(short wanted) const override { return wanted; }
  bool hasBufferedInput() const override { return false; }
  int lastSystemError() const override { return lastErrno_.load(std::memory_order_relaxed); }

 private:
  Status failed(int err) {
    lastErrno_.store(err, std::memory_order_relaxed);
    return Status(ncclRemoteError, std::strerror(err));
  }

  UniqueFd fd_;
  std::atomic<int> lastErrno_{0};
};

}  // namespace

Stream makePlainStream(UniqueFd fd) { return std::make_unique<PlainStream>(std::move(fd)); }

}  // namespace braid
