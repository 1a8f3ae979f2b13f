// Attribute values of NCCL's topology XML, read as NCCL reads them. NCCL parses integers
// with strtol(text, NULL, 0) and reals with strtof, so every form its own dumps and
// hand-edited files contain loads: decimal ("16"), hexadecimal ("0x030200"), fractions
// ("latency=\"0.000000\"": an integer attribute keeps the whole part) and empty strings
// (link_speed="", which NCCL reads as 0). What NCCL would silently turn into 0 but no
// tool writes ("abc", "12abc") stays an error naming the file and line, as does a value
// outside the attribute's range.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "topology/graph.h"
#include "topology/xml.h"
#include "util/status.h"

namespace braid {

enum class NumberForm : uint8_t { Integer, Fraction, Empty };

// Parses `text` (spaces around it allowed): false when it is not a number at all.
// "010" is ten: decimal, not C's octal (NCCL never writes a leading zero).
bool parseNcclNumber(const std::string& text, double* value, NumberForm* form);

// Reads the attributes of one element, checking each, and keeps those it does not know.
class XmlAttrs {
 public:
  XmlAttrs(const XmlElement& e, TopoBuilder& b) : e_(e), b_(b) {}

  const std::string* text(const char* key);
  std::string str(const char* key);
  // Absent: *out untouched. Present: a number in [min, max] (a fraction keeps its whole
  // part), else an error naming the line. An empty value is NCCL's 0, unless
  // `emptyIsAbsent` (an identity such as a device number, which 0 would make collide):
  // then *out stays untouched and a note says so.
  Status integer(const char* key, int64_t min, int64_t max, int64_t* out, bool emptyIsAbsent = false);
  Status integer(const char* key, int64_t min, int64_t max, int* out, bool emptyIsAbsent = false);
  Status real(const char* key, double min, double max, double* out);
  // The attributes nobody asked for, to write back on dump. Namespaced attributes are
  // dropped: their declarations are not kept, so a dump could not be read back.
  std::vector<std::pair<std::string, std::string>> rest() const;

 private:
  Status number(const char* key, double min, double max, double* value, NumberForm* form, bool* present);

  const XmlElement& e_;
  TopoBuilder& b_;
  std::set<std::string> used_;
};

}  // namespace braid
