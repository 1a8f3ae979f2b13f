// The OpenSSL side of TlsSecurity: one SSL_CTX per configuration, shared by both roles.
#include "util/tls/tls_security.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <array>
#include <cstring>

#include "util/format.h"
#include "util/tls/tls_errors.h"
#include "util/tls/tls_stream.h"

namespace braid {

namespace {

// The identity both sides name the pre-shared key by, and the HKDF label that separates
// Braid's use of the application's secret from any other use of it.
constexpr unsigned char kPskIdentity[] = "braid-psk-v1";
constexpr char kPskLabel[] = "Braid TLS 1.3 pre-shared key v1";
// The session context of every session (OpenSSL checks sessions against it).
constexpr unsigned char kSessionContext[] = "braid";
// TLS_AES_128_GCM_SHA256: the hash the pre-shared key is bound to.
constexpr unsigned char kPskCipher[] = {0x13, 0x01};
constexpr const char* kCipherSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

class TlsSecurity final : public StreamSecurity {
 public:
  explicit TlsSecurity(TlsSettings::Auth auth) : auth_(auth) {}
  ~TlsSecurity() override {
    SSL_CTX_free(ctx_);
    OPENSSL_cleanse(key_.data(), key_.size());
  }
  TlsSecurity(const TlsSecurity&) = delete;
  TlsSecurity& operator=(const TlsSecurity&) = delete;

  Status init(const TlsSettings& settings) {
    ctx_ = SSL_CTX_new(TLS_method());
    if (ctx_ == nullptr) return Status(ncclSystemError, "OpenSSL could not make a TLS context: " + takeOpenSslErrors());
    SSL_CTX_set_app_data(ctx_, this);
    bool configured = SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION) == 1 &&
                      SSL_CTX_set_ciphersuites(ctx_, kCipherSuites) == 1 && SSL_CTX_set_num_tickets(ctx_, 0) == 1;
    if (!configured) return Status(ncclSystemError, "OpenSSL refused the TLS 1.3 settings: " + takeOpenSslErrors());
    // No session cache or tickets (nothing is resumed); a peer's exit without close_notify
    // reads as the end of the stream; large writes return after each record. No read-ahead:
    // bytes OpenSSL took from the socket beyond a complete record would be invisible to
    // poll(), so waits that poll after a read could sleep on data already here.
    SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_OFF);
    // OpenSSL wants one before it accepts a session (the pre-shared key's) on a server that
    // verifies peers; nothing is ever resumed.
    SSL_CTX_set_session_id_context(ctx_, kSessionContext, sizeof(kSessionContext) - 1);
    SSL_CTX_set_options(ctx_, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_TICKET);
    SSL_CTX_clear_options(ctx_, SSL_OP_ALLOW_NO_DHE_KEX);
    SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // An encrypted key file must not make OpenSSL prompt on the terminal.
    SSL_CTX_set_default_passwd_cb(ctx_, [](char*, int, int, void*) { return 0; });
    return auth_ == TlsSettings::Auth::PreSharedKey ? initPsk(settings) : initCertificates(settings);
  }

  std::string describe() const override {
    return auth_ == TlsSettings::Auth::PreSharedKey ? "TLS 1.3 (pre-shared key)" : "TLS 1.3 (certificates)";
  }
  bool encrypted() const override { return true; }
  bool needsHandshake() const override { return true; }

  Status wrap(UniqueFd fd, bool connecting, Stream* out) const override {
    SSL* ssl = SSL_new(ctx_);
    if (ssl == nullptr) return Status(ncclSystemError, "OpenSSL could not make a connection: " + takeOpenSslErrors());
    if (auth_ == TlsSettings::Auth::Certificates) {
      // The accepting side asks for the connecting side's certificate: authentication is
      // mutual. (Both roles trust only the CA file: SSL_CTX_load_verify_locations.)
      SSL_set_verify(ssl, connecting ? SSL_VERIFY_PEER : SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    } else {
      // No certificate is trusted: a listener that offers one instead of the key is refused.
      SSL_set_verify(ssl, connecting ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
    }
    return makeTlsStream(std::move(fd), ssl, connecting, auth_ == TlsSettings::Auth::PreSharedKey, out);
  }

 private:
  Status initPsk(const TlsSettings& settings) {
    if (settings.psk.size() < kTlsMinPskBytes) {
      return Status(ncclInvalidArgument, strFormat("%s: the pre-shared key has %zu bytes; at least %zu are needed",
                                                   settings.origin.c_str(), settings.psk.size(), kTlsMinPskBytes));
    }
    EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
    EVP_KDF_CTX* kctx = kdf ? EVP_KDF_CTX_new(kdf) : nullptr;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string("digest", const_cast<char*>("SHA256"), 0),
        OSSL_PARAM_construct_octet_string("key", const_cast<char*>(settings.psk.data()), settings.psk.size()),
        OSSL_PARAM_construct_octet_string("info", const_cast<char*>(kPskLabel), sizeof(kPskLabel) - 1),
        OSSL_PARAM_construct_end()};
    int derived = kctx ? EVP_KDF_derive(kctx, key_.data(), key_.size(), params) : 0;
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
    if (derived != 1) return Status(ncclSystemError, "OpenSSL could not derive the TLS key: " + takeOpenSslErrors());
    SSL_CTX_set_psk_use_session_callback(ctx_, useSession);
    SSL_CTX_set_psk_find_session_callback(ctx_, findSession);
    return okStatus();
  }

  Status initCertificates(const TlsSettings& s) {
    if (SSL_CTX_use_certificate_chain_file(ctx_, s.certFile.c_str()) != 1) {
      return Status(ncclInvalidArgument, strFormat("BRAID_TLS_CERT_FILE=%s: cannot load a PEM certificate: %s",
                                                   s.certFile.c_str(), takeOpenSslErrors().c_str()));
    }
    if (SSL_CTX_use_PrivateKey_file(ctx_, s.keyFile.c_str(), SSL_FILETYPE_PEM) != 1) {
      if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) return keyMismatch(s);
      return Status(ncclInvalidArgument,
                    strFormat("BRAID_TLS_KEY_FILE=%s: cannot load a PEM private key (an unencrypted one is needed): %s",
                              s.keyFile.c_str(), takeOpenSslErrors().c_str()));
    }
    if (SSL_CTX_check_private_key(ctx_) != 1) return keyMismatch(s);
    if (SSL_CTX_load_verify_locations(ctx_, s.caFile.c_str(), nullptr) != 1) {
      return Status(ncclInvalidArgument, strFormat("BRAID_TLS_CA_FILE=%s: cannot load PEM CA certificates: %s",
                                                   s.caFile.c_str(), takeOpenSslErrors().c_str()));
    }
    return s.checkOwnCertificate ? checkOwnCertificate(s) : okStatus();
  }

  static Status keyMismatch(const TlsSettings& s) {
    return Status(ncclInvalidArgument, strFormat("BRAID_TLS_KEY_FILE=%s is not the key of BRAID_TLS_CERT_FILE=%s: %s",
                                                 s.keyFile.c_str(), s.certFile.c_str(), takeOpenSslErrors().c_str()));
  }

  // Our own certificate must pass the check every peer will make: say so here, on the rank
  // whose files are wrong, rather than as refusals on all the others.
  Status checkOwnCertificate(const TlsSettings& s) {
    X509_STORE_CTX* check = X509_STORE_CTX_new();
    STACK_OF(X509)* chain = nullptr;
    SSL_CTX_get0_chain_certs(ctx_, &chain);
    bool verified =
        check && X509_STORE_CTX_init(check, SSL_CTX_get_cert_store(ctx_), SSL_CTX_get0_certificate(ctx_), chain) == 1 &&
        X509_verify_cert(check) == 1;
    int error = check ? X509_STORE_CTX_get_error(check) : X509_V_ERR_UNSPECIFIED;
    X509_STORE_CTX_free(check);
    ERR_clear_error();
    if (verified) return okStatus();
    return Status(ncclInvalidArgument,
                  strFormat("BRAID_TLS_CERT_FILE=%s does not verify against BRAID_TLS_CA_FILE=%s: %s (peers would "
                            "refuse it)",
                            s.certFile.c_str(), s.caFile.c_str(), X509_verify_cert_error_string(error)));
  }

  // A session that holds the derived key, as TLS 1.3 resumes one; made per handshake.
  SSL_SESSION* pskSession(SSL* ssl) const {
    const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, kPskCipher);
    SSL_SESSION* session = SSL_SESSION_new();
    if (session == nullptr || cipher == nullptr || SSL_SESSION_set_protocol_version(session, TLS1_3_VERSION) != 1 ||
        SSL_SESSION_set_cipher(session, cipher) != 1 ||
        SSL_SESSION_set1_id_context(session, kSessionContext, sizeof(kSessionContext) - 1) != 1 ||
        SSL_SESSION_set1_master_key(session, key_.data(), key_.size()) != 1) {
      SSL_SESSION_free(session);
      return nullptr;
    }
    return session;
  }

  static const TlsSecurity* of(SSL* ssl) {
    return static_cast<const TlsSecurity*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  }

  static int useSession(SSL* ssl, const EVP_MD* /*md*/, const unsigned char** id, size_t* idLen,
                        SSL_SESSION** session) {
    *id = kPskIdentity;
    *idLen = sizeof(kPskIdentity) - 1;
    *session = of(ssl)->pskSession(ssl);
    return *session != nullptr ? 1 : 0;
  }

  static int findSession(SSL* ssl, const unsigned char* id, size_t idLen, SSL_SESSION** session) {
    *session = nullptr;
    if (idLen != sizeof(kPskIdentity) - 1 || CRYPTO_memcmp(id, kPskIdentity, idLen) != 0) return 1;  // unknown: none
    *session = of(ssl)->pskSession(ssl);
    return *session != nullptr ? 1 : 0;
  }

  TlsSettings::Auth auth_;
  SSL_CTX* ctx_ = nullptr;
  std::array<unsigned char, 32> key_{};
};

}  // namespace

bool tlsBuiltIn() { return true; }

Status createTlsSecurity(const TlsSettings& settings, SecurityRef* out) {
  auto security = std::make_shared<TlsSecurity>(settings.auth);
  BRAID_CHECK(security->init(settings));
  *out = std::move(security);
  return okStatus();
}

}  // namespace braid
