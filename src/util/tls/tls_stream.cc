#include "util/tls/tls_stream.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "util/tls/tls_errors.h"

namespace braid {

namespace {

// The byte the accepting side sends once it accepted the connecting side's credentials.
constexpr unsigned char kAcceptToken = 0xB1;
// The content type that opens every TLS handshake record.
constexpr unsigned char kTlsHandshakeRecord = 0x16;

// What the BIO knows of its stream: the socket and where to note a socket error.
struct SocketLink {
  int fd = -1;
  std::atomic<int>* lastErrno = nullptr;
};

int bioWrite(BIO* bio, const char* data, int bytes) {
  auto* link = static_cast<SocketLink*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  while (true) {
    ssize_t n = ::send(link->fd, data, static_cast<size_t>(bytes), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return static_cast<int>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      BIO_set_retry_write(bio);
    } else {
      link->lastErrno->store(errno, std::memory_order_relaxed);
    }
    return -1;
  }
}

int bioRead(BIO* bio, char* data, int bytes) {
  auto* link = static_cast<SocketLink*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  while (true) {
    ssize_t n = ::recv(link->fd, data, static_cast<size_t>(bytes), MSG_DONTWAIT);
    if (n >= 0) return static_cast<int>(n);  // 0: the peer closed
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      BIO_set_retry_read(bio);
    } else {
      link->lastErrno->store(errno, std::memory_order_relaxed);
    }
    return -1;
  }
}

long bioCtrl(BIO* /*bio*/, int cmd, long /*num*/, void* /*ptr*/) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int bioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

int bioDestroy(BIO* bio) { return bio != nullptr ? 1 : 0; }

BIO_METHOD* socketBioMethod() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "braid socket");
    if (m != nullptr) {
      BIO_meth_set_write(m, bioWrite);
      BIO_meth_set_read(m, bioRead);
      BIO_meth_set_ctrl(m, bioCtrl);
      BIO_meth_set_create(m, bioCreate);
      BIO_meth_set_destroy(m, bioDestroy);
    }
    return m;
  }();
  return method;
}

class TlsStream final : public ByteStream {
 public:
  TlsStream(UniqueFd fd, SSL* ssl, bool connecting, bool psk)
      : fd_(std::move(fd)), ssl_(ssl), connecting_(connecting), psk_(psk) {
    link_.fd = fd_.get();
    link_.lastErrno = &lastErrno_;
    phase_.store(connecting ? Phase::Handshake : Phase::FirstByte);
    handshakeWant_.store(connecting ? POLLOUT : POLLIN);
  }
  ~TlsStream() override { SSL_free(ssl_); }
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  // Binds the socket BIO; a failure leaves the stream unusable.
  Status bind() {
    BIO* bio = socketBioMethod() ? BIO_new(socketBioMethod()) : nullptr;
    if (bio == nullptr) return Status(ncclSystemError, "OpenSSL could not make a socket BIO: " + takeOpenSslErrors());
    BIO_set_data(bio, &link_);
    SSL_set_bio(ssl_, bio, bio);
    if (connecting_) {
      SSL_set_connect_state(ssl_);
    } else {
      SSL_set_accept_state(ssl_);
    }
    return okStatus();
  }

  int fd() const override { return fd_.get(); }
  bool encrypted() const override { return true; }

  Status handshake(bool* done) override {
    std::lock_guard<std::mutex> lock(mutex_);
    *done = false;
    while (true) {
      Phase before = phase_.load();
      switch (before) {
        case Phase::FirstByte:
          BRAID_CHECK(checkFirstByte());
          break;
        case Phase::Handshake:
          BRAID_CHECK(handshakeStep());
          break;
        case Phase::Token:
          BRAID_CHECK(tokenStep());
          break;
        case Phase::Ready:
          *done = true;
          return okStatus();
        case Phase::Failed:
          return Status(ncclRemoteError, failure_);
      }
      if (phase_.load() == before) return okStatus();  // waiting for the socket
    }
  }

  Status write(const void* data, size_t bytes, size_t* moved) override {
    std::lock_guard<std::mutex> lock(mutex_);
    *moved = 0;
    if (phase_.load() != Phase::Ready) return Status(ncclInternalError, "TLS: write before the handshake completed");
    if (bytes == 0) return okStatus();
    ERR_clear_error();
    size_t written = 0;
    int rc = SSL_write_ex(ssl_, data, bytes, &written);
    if (rc == 1) {
      *moved = written;
      writeWant_.store(POLLOUT, std::memory_order_relaxed);
      return okStatus();
    }
    int error = SSL_get_error(ssl_, rc);
    if (error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ) {
      writeWant_.store(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, std::memory_order_relaxed);
      return okStatus();
    }
    return Status(ncclRemoteError, describeIoFailure(error, lastSystemError()));
  }

  Status read(void* data, size_t bytes, size_t* moved, bool* closed) override {
    std::lock_guard<std::mutex> lock(mutex_);
    *moved = 0;
    *closed = false;
    if (phase_.load() != Phase::Ready) return Status(ncclInternalError, "TLS: read before the handshake completed");
    if (bytes == 0) return okStatus();
    ERR_clear_error();
    size_t got = 0;
    int rc = SSL_read_ex(ssl_, data, bytes, &got);
    if (rc == 1) {
      *moved = got;
      readWant_.store(POLLIN, std::memory_order_relaxed);
      return okStatus();
    }
    int error = SSL_get_error(ssl_, rc);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      readWant_.store(error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, std::memory_order_relaxed);
      return okStatus();
    }
    // A peer that exits closes its socket without a TLS close_notify: the same news as a
    // plain socket's end (the contexts set SSL_OP_IGNORE_UNEXPECTED_EOF).
    if (error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && lastSystemError() == 0)) {
      ERR_clear_error();
      *closed = true;
      return okStatus();
    }
    return Status(ncclRemoteError, describeIoFailure(error, lastSystemError()));
  }

  short pollEvents(short wanted) const override {
    if (phase_.load() != Phase::Ready) return handshakeWant_.load(std::memory_order_relaxed);
    return (wanted & POLLIN) ? readWant_.load(std::memory_order_relaxed) : writeWant_.load(std::memory_order_relaxed);
  }

  bool hasBufferedInput() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    // Without read-ahead (tls_security.cc) OpenSSL takes one record at a time from the
    // socket, so what it holds beyond the caller's last read is the rest of a decrypted record.
    return phase_.load() == Phase::Ready && SSL_pending(ssl_) > 0;
  }

  int lastSystemError() const override { return lastErrno_.load(std::memory_order_relaxed); }

 private:
  enum class Phase { FirstByte, Handshake, Token, Ready, Failed };

  // Final: every later step repeats the reason.
  Status fail(ncclResult_t code, const std::string& why) {
    phase_.store(Phase::Failed);
    failure_ = why;
    return Status(code, why);
  }

  // Accepting side: a connection that does not open with a TLS handshake record is named
  // before OpenSSL reads it (its complaint would be about version numbers).
  Status checkFirstByte() {
    unsigned char first = 0;
    ssize_t n = ::recv(fd_.get(), &first, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 1) {
      if (first != kTlsHandshakeRecord) {
        return fail(ncclRemoteError,
                    "TLS handshake failed: the peer sent plain text, not a TLS handshake (it does not use encryption: "
                    "is it configured the same way on every rank?)");
      }
      phase_.store(Phase::Handshake);
      return okStatus();
    }
    if (n == 0) {
      return fail(ncclRemoteError, "TLS handshake failed: the peer closed the connection before its handshake");
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      handshakeWant_.store(POLLIN, std::memory_order_relaxed);
      return okStatus();
    }
    lastErrno_.store(errno, std::memory_order_relaxed);
    return fail(ncclRemoteError, std::string("TLS handshake failed: ") + std::strerror(errno));
  }

  Status handshakeStep() {
    ERR_clear_error();
    int rc = SSL_do_handshake(ssl_);
    if (rc == 1) {
      // With a pre-shared key only a handshake that used it proves the peer holds it (a
      // certificate handshake cannot complete here: no certificate is loaded, and none is
      // trusted, but say so plainly if it ever did).
      if (psk_ && SSL_session_reused(ssl_) != 1) {
        return fail(ncclRemoteError, "TLS handshake failed: the peer did not use the pre-shared key");
      }
      phase_.store(Phase::Token);
      handshakeWant_.store(connecting_ ? POLLIN : POLLOUT, std::memory_order_relaxed);
      return okStatus();
    }
    int error = SSL_get_error(ssl_, rc);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      handshakeWant_.store(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, std::memory_order_relaxed);
      return okStatus();
    }
    return fail(ncclRemoteError, describeHandshakeFailure(ssl_, error, lastSystemError(), connecting_, psk_));
  }

  Status tokenStep() {
    ERR_clear_error();
    unsigned char token = kAcceptToken;
    size_t moved = 0;
    int rc = connecting_ ? SSL_read_ex(ssl_, &token, 1, &moved) : SSL_write_ex(ssl_, &token, 1, &moved);
    if (rc == 1) {
      if (connecting_ && token != kAcceptToken) {
        return fail(ncclRemoteError, "TLS handshake failed: the peer is not a Braid listener (unexpected first byte)");
      }
      phase_.store(Phase::Ready);
      return okStatus();
    }
    int error = SSL_get_error(ssl_, rc);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      handshakeWant_.store(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, std::memory_order_relaxed);
      return okStatus();
    }
    // On the connecting side this is where a refusal of our certificate arrives (an alert
    // in place of the token).
    return fail(ncclRemoteError, describeHandshakeFailure(ssl_, error, lastSystemError(), connecting_, psk_));
  }

  UniqueFd fd_;
  SSL* ssl_;
  bool connecting_;
  bool psk_;
  SocketLink link_;
  mutable std::mutex mutex_;  // one SSL call at a time (a reader and a writer may race)
  std::atomic<Phase> phase_{Phase::FirstByte};
  std::string failure_;
  std::atomic<short> handshakeWant_{POLLIN};
  std::atomic<short> readWant_{POLLIN};
  std::atomic<short> writeWant_{POLLOUT};
  std::atomic<int> lastErrno_{0};
};

}  // namespace

Status makeTlsStream(UniqueFd fd, SSL* ssl, bool connecting, bool psk, Stream* out) {
  auto stream = std::make_unique<TlsStream>(std::move(fd), ssl, connecting, psk);
  BRAID_CHECK(stream->bind());
  *out = std::move(stream);
  return okStatus();
}

}  // namespace braid
