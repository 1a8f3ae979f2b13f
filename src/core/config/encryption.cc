#include "core/config/encryption.h"

#include <sys/stat.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>

#include "core/config/params.h"
#include "util/format.h"
#include "util/log.h"
#include "util/tls/tls_security.h"

namespace braid {

namespace {

// A key file larger than this is not a key.
constexpr size_t kMaxPskFileBytes = 64 * 1024;

struct EncryptionState {
  std::mutex mutex;
  // ncclSetEncryption's pre-shared key, as a ready context; null when none was set.
  SecurityRef api;
  // ncclSetEncryption asked for a key this build cannot honour: every later connection
  // fails with `apiRefusal` instead of going out in plain text.
  Status apiRefusal;
  // The context made from the environment, and the settings it was made from (files
  // are re-read only when a variable changes).
  SecurityRef fromEnv;
  std::string envKey;
};

EncryptionState& state() {
  static EncryptionState s;
  return s;
}

bool certificateVariablesSet() {
  return params::kTlsCertFile.isSet() || params::kTlsKeyFile.isSet() || params::kTlsCaFile.isSet();
}

Status readPskFile(const std::string& path, std::string* psk) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return BRAID_ERROR(ncclInvalidArgument, "BRAID_TLS_PSK_FILE=%s cannot be read: %s", path.c_str(),
                       std::strerror(errno));
  }
  psk->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (psk->size() > kMaxPskFileBytes) {
    eraseSecret(psk);
    return BRAID_ERROR(ncclInvalidArgument, "BRAID_TLS_PSK_FILE=%s holds more than %zu bytes: not a key file",
                       path.c_str(), kMaxPskFileBytes);
  }
  // One line: a trailing newline (as `echo` or an editor leaves it) is not part of the key.
  if (!psk->empty() && psk->back() == '\n') psk->pop_back();
  if (!psk->empty() && psk->back() == '\r') psk->pop_back();
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && (info.st_mode & 077) != 0) {
    BRAID_WARN(
        "BRAID_TLS_PSK_FILE=%s can be read by other users (mode %03o): anyone who reads the key can join the job",
        path.c_str(), static_cast<unsigned>(info.st_mode & 0777));
  }
  return okStatus();
}

// The settings the environment asks for; *wanted false when it asks for nothing.
Status settingsFromEnvironment(TlsSettings* settings, bool* wanted) {
  *wanted = false;
  bool certificates = certificateVariablesSet();
  std::string pskFile = params::kTlsPskFile.get();
  if (certificates && !pskFile.empty()) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "BRAID_TLS_PSK_FILE and BRAID_TLS_CERT_FILE/BRAID_TLS_KEY_FILE/BRAID_TLS_CA_FILE are both set: "
                       "choose one way to authenticate");
  }
  if (!pskFile.empty()) {
    settings->auth = TlsSettings::Auth::PreSharedKey;
    settings->origin = "BRAID_TLS_PSK_FILE=" + pskFile;
    BRAID_CHECK(readPskFile(pskFile, &settings->psk));
    *wanted = true;
    return okStatus();
  }
  if (!certificates) return okStatus();
  settings->auth = TlsSettings::Auth::Certificates;
  settings->certFile = params::kTlsCertFile.get();
  settings->keyFile = params::kTlsKeyFile.get();
  settings->caFile = params::kTlsCaFile.get();
  settings->origin = "BRAID_TLS_CERT_FILE";
  std::string missing;
  if (settings->certFile.empty()) missing += " BRAID_TLS_CERT_FILE";
  if (settings->keyFile.empty()) missing += " BRAID_TLS_KEY_FILE";
  if (settings->caFile.empty()) missing += " BRAID_TLS_CA_FILE";
  if (!missing.empty()) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "TLS with certificates needs BRAID_TLS_CERT_FILE, BRAID_TLS_KEY_FILE and BRAID_TLS_CA_FILE; "
                       "missing:%s",
                       missing.c_str());
  }
  *wanted = true;
  return okStatus();
}

Status build(const TlsSettings& settings, SecurityRef* out) {
  Status made = createTlsSecurity(settings, out);
  if (!made.ok()) return BRAID_ERROR(made.code(), "%s", made.message().c_str());
  BRAID_INFO(kLogInit | kLogBootstrap, "Encryption: %s from %s for every TCP connection", (*out)->describe().c_str(),
             settings.origin.c_str());
  return okStatus();
}

Status securityFromEnvironment(EncryptionState& s, SecurityRef* out) {
  TlsSettings settings;
  bool wanted = false;
  Status read = settingsFromEnvironment(&settings, &wanted);
  if (!read.ok() || !wanted) {
    eraseSecret(&settings.psk);
    *out = plainSecurity();
    return read;
  }
  // The files' names (never the key) tell whether the context already made still fits.
  std::string key = settings.auth == TlsSettings::Auth::PreSharedKey
                        ? settings.origin
                        : settings.certFile + "\n" + settings.keyFile + "\n" + settings.caFile;
  Status made = okStatus();
  if (!s.fromEnv || key != s.envKey) {
    s.fromEnv.reset();
    made = build(settings, &s.fromEnv);
    if (made.ok()) s.envKey = key;
  }
  eraseSecret(&settings.psk);
  BRAID_CHECK(made);
  *out = s.fromEnv;
  return okStatus();
}

}  // namespace

Status setEncryption(const ncclEncryptionConfig_t* config) {
  ncclEncryptionConfig_t request = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  if (config != nullptr) {
    if (config->magic != NCCL_API_MAGIC) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "ncclSetEncryption: config->magic is 0x%x: the config was not initialized with "
                         "NCCL_ENCRYPTION_CONFIG_INITIALIZER",
                         config->magic);
    }
    if (config->size < offsetof(ncclEncryptionConfig_t, mode) + sizeof(int)) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "ncclSetEncryption: config->size is %zu, too small for any version of "
                         "ncclEncryptionConfig_t (corrupted, or not from NCCL_ENCRYPTION_CONFIG_INITIALIZER)",
                         config->size);
    }
    // A caller's struct may be older (smaller) or newer (larger): read what both have.
    std::memcpy(&request, config, std::min(config->size, sizeof(request)));
  }
  EncryptionState& s = state();
  if (request.mode == NCCL_ENCRYPTION_MODE_NONE) {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.api.reset();
    s.apiRefusal = okStatus();
    BRAID_INFO(kLogInit, "ncclSetEncryption: no pre-shared key%s",
               certificateVariablesSet() || params::kTlsPskFile.isSet() ? " (BRAID_TLS_* still apply)" : "");
    return okStatus();
  }
  if (request.mode != NCCL_ENCRYPTION_MODE_PSK) {
    return BRAID_ERROR(
        ncclInvalidArgument,
        "ncclSetEncryption: mode %d is not NCCL_ENCRYPTION_MODE_NONE (0) or NCCL_ENCRYPTION_MODE_PSK (1)",
        request.mode);
  }
  if (request.psk == nullptr) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclSetEncryption: NCCL_ENCRYPTION_MODE_PSK needs config->psk");
  }
  TlsSettings settings;
  settings.auth = TlsSettings::Auth::PreSharedKey;
  settings.origin = "ncclSetEncryption";
  settings.psk.assign(request.psk);
  if (settings.psk.size() < kTlsMinPskBytes) {
    size_t length = settings.psk.size();
    eraseSecret(&settings.psk);
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclSetEncryption: config->psk has %zu bytes; a pre-shared key needs at least %zu (use a "
                       "high-entropy secret, the same on every rank)",
                       length, kTlsMinPskBytes);
  }
  if (certificateVariablesSet() || params::kTlsPskFile.isSet()) {
    eraseSecret(&settings.psk);
    return BRAID_ERROR(ncclInvalidUsage,
                       "ncclSetEncryption: a pre-shared key while BRAID_TLS_%s is set: choose one way to "
                       "authenticate (unset the variables, or do not call ncclSetEncryption)",
                       params::kTlsPskFile.isSet() ? "PSK_FILE" : "CERT_FILE/KEY_FILE/CA_FILE");
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!tlsBuiltIn()) {
    eraseSecret(&settings.psk);
    s.api.reset();
    s.apiRefusal = tlsNotBuiltInError("ncclSetEncryption(NCCL_ENCRYPTION_MODE_PSK)");
    return BRAID_ERROR(s.apiRefusal.code(), "%s", s.apiRefusal.message().c_str());
  }
  SecurityRef made;
  Status built = build(settings, &made);
  eraseSecret(&settings.psk);
  BRAID_CHECK(built);
  s.api = std::move(made);
  s.apiRefusal = okStatus();
  return okStatus();
}

Status currentSocketSecurity(SecurityRef* out) {
  EncryptionState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.apiRefusal.ok()) {
    return BRAID_ERROR(s.apiRefusal.code(), "%s (no connection is made in plain text instead)",
                       s.apiRefusal.message().c_str());
  }
  if (s.api) {
    *out = s.api;
    return okStatus();
  }
  return securityFromEnvironment(s, out);
}

}  // namespace braid
