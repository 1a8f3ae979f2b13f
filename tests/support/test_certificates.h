// Certificates made at test time (never committed): CAs and the leaves they sign, as PEM
// files in a temporary directory that goes away with the object. EC P-256 keys, so making
// a handful costs milliseconds. Validity is given in days from now, so an expired or
// not-yet-valid certificate is one argument away.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace braid::test {

struct CertificateFiles {
  std::string cert;  // PEM certificate
  std::string key;   // PEM private key (unencrypted)
  std::string ca;    // PEM certificate of the CA that signed it
};

class TestCertificates {
 public:
  TestCertificates();
  ~TestCertificates();
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  // A leaf named `leaf` signed by the CA named `ca` (made on first use), valid from
  // `notBeforeDays` to `notAfterDays` (relative to now; negative is the past).
  CertificateFiles issue(const std::string& ca, const std::string& leaf, long notBeforeDays = -1,
                         long notAfterDays = 30);
  // A file in the directory with these contents (garbage, truncated PEM, ...).
  std::string writeFile(const std::string& name, const std::string& contents) const;
  const std::string& directory() const { return dir_; }

 private:
  struct Authority;
  Authority& authority(const std::string& name);

  std::string dir_;
  std::map<std::string, std::unique_ptr<Authority>> authorities_;
  long serial_ = 1;
};

}  // namespace braid::test
