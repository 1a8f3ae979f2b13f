#include "topology/xml_attrs.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "util/format.h"

namespace braid {

bool parseNcclNumber(const std::string& raw, double* value, NumberForm* form) {
  std::string t(trim(raw));
  if (t.empty()) {
    *value = 0;
    *form = NumberForm::Empty;
    return true;
  }
  size_t digits = t[0] == '-' || t[0] == '+' ? 1 : 0;
  bool hex = t.size() > digits + 2 && t[digits] == '0' && (t[digits + 1] == 'x' || t[digits + 1] == 'X');
  errno = 0;
  char* end = nullptr;
  if (hex) {
    unsigned long long v = std::strtoull(t.c_str() + digits + 2, &end, 16);
    if (errno != 0 || end != t.c_str() + t.size() || end == t.c_str() + digits + 2) return false;
    *value = t[0] == '-' ? -static_cast<double>(v) : static_cast<double>(v);
    *form = NumberForm::Integer;
    return true;
  }
  // Decimal digits with an optional fraction or exponent; strtod alone would also take
  // "nan", "inf" and hexadecimal floats, which no topology file means.
  for (size_t i = digits; i < t.size(); ++i) {
    char c = t[i];
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return false;
  }
  double v = std::strtod(t.c_str(), &end);
  if (errno == ERANGE || end != t.c_str() + t.size() || end == t.c_str() || !std::isfinite(v)) return false;
  *value = v;
  *form =
      v == std::trunc(v) && t.find_first_of(".eE") == std::string::npos ? NumberForm::Integer : NumberForm::Fraction;
  return true;
}

const std::string* XmlAttrs::text(const char* key) {
  used_.insert(key);
  return e_.attr(key);
}

std::string XmlAttrs::str(const char* key) {
  const std::string* v = text(key);
  return v ? *v : std::string();
}

Status XmlAttrs::number(const char* key, double min, double max, double* value, NumberForm* form, bool* present) {
  const std::string* v = text(key);
  *present = v != nullptr;
  if (!v) return okStatus();
  if (!parseNcclNumber(*v, value, form)) {
    return b_.error(e_.line, strFormat("<%s %s=\"%s\">: not a number", e_.name.c_str(), key, v->c_str()));
  }
  if (*value < min || *value > max) {
    return b_.error(e_.line,
                    strFormat("<%s %s=\"%s\">: out of range [%g, %g]", e_.name.c_str(), key, v->c_str(), min, max));
  }
  return okStatus();
}

Status XmlAttrs::integer(const char* key, int64_t min, int64_t max, int64_t* out, bool emptyIsAbsent) {
  double value = 0;
  NumberForm form = NumberForm::Integer;
  bool present = false;
  // 0 is NCCL's reading of an empty value: it must pass the range check too.
  BRAID_CHECK(
      number(key, std::min<double>(static_cast<double>(min), 0), static_cast<double>(max), &value, &form, &present));
  if (!present) return okStatus();
  if (form == NumberForm::Empty) {
    if (emptyIsAbsent) {
      b_.note(strFormat("line %d: <%s %s=\"\"> is empty; counted as not given", e_.line, e_.name.c_str(), key));
      return okStatus();
    }
    if (0 < min) {
      return b_.error(e_.line, strFormat("<%s %s=\"\">: empty, and 0 is out of range [%lld, %lld]", e_.name.c_str(),
                                         key, static_cast<long long>(min), static_cast<long long>(max)));
    }
  }
  if (value < static_cast<double>(min)) {
    return b_.error(e_.line,
                    strFormat("<%s %s=\"%s\">: out of range [%lld, %lld]", e_.name.c_str(), key, e_.attr(key)->c_str(),
                              static_cast<long long>(min), static_cast<long long>(max)));
  }
  int64_t whole = static_cast<int64_t>(std::trunc(value));
  if (form == NumberForm::Fraction && static_cast<double>(whole) != value) {
    b_.note(strFormat("line %d: <%s %s=\"%s\"> is not a whole number; %lld used, as NCCL reads it", e_.line,
                      e_.name.c_str(), key, e_.attr(key)->c_str(), static_cast<long long>(whole)));
  }
  *out = whole;
  return okStatus();
}

Status XmlAttrs::integer(const char* key, int64_t min, int64_t max, int* out, bool emptyIsAbsent) {
  int64_t v = *out;
  BRAID_CHECK(integer(key, min, max, &v, emptyIsAbsent));
  *out = static_cast<int>(v);
  return okStatus();
}

Status XmlAttrs::real(const char* key, double min, double max, double* out) {
  double value = 0;
  NumberForm form = NumberForm::Integer;
  bool present = false;
  BRAID_CHECK(number(key, std::min(min, 0.0), max, &value, &form, &present));
  if (!present) return okStatus();
  if (value < min) {
    return b_.error(e_.line, strFormat("<%s %s=\"%s\">: out of range [%g, %g]", e_.name.c_str(), key,
                                       e_.attr(key)->c_str(), min, max));
  }
  *out = value;
  return okStatus();
}

std::vector<std::pair<std::string, std::string>> XmlAttrs::rest() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& kv : e_.attrs) {
    if (!used_.count(kv.first) && kv.first.find(':') == std::string::npos) out.push_back(kv);
  }
  return out;
}

}  // namespace braid
