#include "test_certificates.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace braid::test {

namespace {

constexpr long kDaySeconds = 24 * 3600;

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificates: ") + what);
}

KeyPtr newKey() {
  KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  require(key != nullptr, "EC key generation failed");
  return key;
}

void addExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  require(ext != nullptr && X509_add_ext(cert, ext, -1) == 1, "adding an extension failed");
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `name`, signed by `signer` (itself when issuer is null).
CertPtr makeCert(EVP_PKEY* key, const std::string& name, X509* issuer, EVP_PKEY* signer, long serial,
                 long notBeforeDays, long notAfterDays, bool isCa) {
  CertPtr cert(X509_new(), X509_free);
  require(cert && X509_set_version(cert.get(), 2) == 1, "X509_new failed");
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), notBeforeDays * kDaySeconds);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), notAfterDays * kDaySeconds);
  require(X509_set_pubkey(cert.get(), key) == 1, "X509_set_pubkey failed");
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : subject);
  X509* issuerCert = issuer ? issuer : cert.get();
  if (isCa) {
    addExtension(cert.get(), issuerCert, NID_basic_constraints, "critical,CA:TRUE");
    addExtension(cert.get(), issuerCert, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    addExtension(cert.get(), issuerCert, NID_basic_constraints, "CA:FALSE");
  }
  require(X509_sign(cert.get(), signer, EVP_sha256()) > 0, "X509_sign failed");
  return cert;
}

void writeCert(const std::string& path, X509* cert) {
  FILE* f = std::fopen(path.c_str(), "w");
  require(f != nullptr && PEM_write_X509(f, cert) == 1, "writing a certificate failed");
  std::fclose(f);
}

void writeKey(const std::string& path, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  require(f != nullptr && PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
          "writing a key failed");
  std::fclose(f);
}

}  // namespace

struct TestCertificates::Authority {
  KeyPtr key{nullptr, EVP_PKEY_free};
  CertPtr cert{nullptr, X509_free};
  std::string certFile;
};

TestCertificates::TestCertificates() {
  char pattern[] = "/tmp/braid-tls-test-XXXXXX";
  require(::mkdtemp(pattern) != nullptr, "mkdtemp failed");
  dir_ = pattern;
}

TestCertificates::~TestCertificates() {
  std::string command = "rm -rf '" + dir_ + "'";
  (void)!std::system(command.c_str());
}

TestCertificates::Authority& TestCertificates::authority(const std::string& name) {
  auto& slot = authorities_[name];
  if (!slot) {
    slot = std::make_unique<Authority>();
    slot->key = newKey();
    slot->cert = makeCert(slot->key.get(), name, nullptr, slot->key.get(), serial_++, -1, 3650, true);
    slot->certFile = dir_ + "/" + name + "-ca.pem";
    writeCert(slot->certFile, slot->cert.get());
  }
  return *slot;
}

CertificateFiles TestCertificates::issue(const std::string& ca, const std::string& leaf, long notBeforeDays,
                                         long notAfterDays) {
  Authority& authorityOfLeaf = authority(ca);
  KeyPtr key = newKey();
  CertPtr cert = makeCert(key.get(), leaf, authorityOfLeaf.cert.get(), authorityOfLeaf.key.get(), serial_++,
                          notBeforeDays, notAfterDays, false);
  CertificateFiles files;
  files.cert = dir_ + "/" + leaf + "-cert.pem";
  files.key = dir_ + "/" + leaf + "-key.pem";
  files.ca = authorityOfLeaf.certFile;
  writeCert(files.cert, cert.get());
  writeKey(files.key, key.get());
  return files;
}

std::string TestCertificates::writeFile(const std::string& name, const std::string& contents) const {
  std::string path = dir_ + "/" + name;
  FILE* f = std::fopen(path.c_str(), "w");
  require(f != nullptr, "writing a file failed");
  std::fwrite(contents.data(), 1, contents.size(), f);
  std::fclose(f);
  return path;
}

}  // namespace braid::test
