#include "util/param.h"

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <set>

#include "util/env.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

std::vector<const ParamBase*>& registry() {
  static std::vector<const ParamBase*> params;
  return params;
}

}  // namespace

ParamBase::ParamBase(const char* name, ParamKind kind, const char* help) : name_(name), kind_(kind), help_(help) {
  registry().push_back(this);
}

const std::vector<const ParamBase*>& ParamBase::all() { return registry(); }

const ParamBase* ParamBase::find(std::string_view name) {
  for (const ParamBase* param : registry()) {
    if (name == param->name()) return param;
  }
  return nullptr;
}

std::string ParamBase::origin(const EnvSource& env) const { return env.origin(name_); }

const char* paramTypeName(ParamType type) {
  switch (type) {
    case ParamType::I32:
      return "int32_t";
    case ParamType::I64:
      return "int64_t";
    case ParamType::Str:
      return "const char*";
  }
  return "?";
}

void ParamBase::warnOnce(const std::string& value, const std::string& why, const std::string& used) const {
  static std::mutex mutex;
  static std::set<std::string> reported;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!reported.insert(std::string(name_) + "=" + value).second) return;
  }
  BRAID_WARN("%s=%s %s; using %s", name_, value.c_str(), why.c_str(), used.c_str());
}

bool parseInt64(const std::string& text, int64_t* out) {
  std::string_view body = trim(text);
  if (body.empty()) return false;
  std::string copy(body);
  bool hex = copy.size() > 2 && copy[0] == '0' && (copy[1] == 'x' || copy[1] == 'X');
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(copy.c_str(), &end, hex ? 16 : 10);
  if (errno != 0 || end == copy.c_str() || *end != '\0') return false;
  *out = value;
  return true;
}

bool parseSize(const std::string& text, int64_t* out) {
  std::string body(trim(text));
  if (body.empty()) return false;
  int shift = 0;
  switch (body.back()) {
    case 'k':
    case 'K':
      shift = 10;
      break;
    case 'm':
    case 'M':
      shift = 20;
      break;
    case 'g':
    case 'G':
      shift = 30;
      break;
    default:
      break;
  }
  if (shift) body.pop_back();
  if (body.size() > 1 && (body.back() == 'i' || body.back() == 'I')) return false;
  int64_t value = 0;
  if (!parseInt64(body, &value)) return false;
  if (shift && (value < 0 || value > (INT64_MAX >> shift))) return false;
  *out = value << shift;
  return true;
}

IntParam::IntParam(const char* name, int64_t defaultValue, int64_t minValue, int64_t maxValue, const char* help,
                   ParamKind kind)
    : ParamBase(name, kind, help), default_(defaultValue), min_(minValue), max_(maxValue) {}

std::string IntParam::defaultText() const { return std::to_string(default_); }

ParamType IntParam::type() const {
  bool fits32 = min_ >= INT32_MIN && max_ <= INT32_MAX && default_ >= INT32_MIN && default_ <= INT32_MAX;
  return kind() == ParamKind::Int && fits32 ? ParamType::I32 : ParamType::I64;
}

std::string IntParam::rejects(const std::string& text) const {
  int64_t value = 0;
  bool parsed = kind() == ParamKind::Size ? parseSize(text, &value) : parseInt64(text, &value);
  if (!parsed)
    return kind() == ParamKind::Size ? "is not a size (bytes, optionally with K, M or G)" : "is not an integer";
  if (value < min_ || value > max_) {
    return strFormat("is outside [%lld, %lld]", static_cast<long long>(min_), static_cast<long long>(max_));
  }
  return std::string();
}

std::optional<int64_t> IntParam::getIfSet(const EnvSource& env) const {
  std::optional<std::string> text = env.get(name());
  if (!text) return std::nullopt;
  if (std::string why = rejects(*text); !why.empty()) {
    warnOnce(*text, why, "the default " + std::to_string(default_));
    return std::nullopt;
  }
  int64_t value = 0;
  if (kind() == ParamKind::Size) {
    parseSize(*text, &value);
  } else {
    parseInt64(*text, &value);
  }
  return value;
}

int64_t IntParam::get(const EnvSource& env) const { return getIfSet(env).value_or(default_); }
int64_t IntParam::get() const { return get(EnvSource::process()); }

StringParam::StringParam(const char* name, const char* defaultValue, const char* help)
    : ParamBase(name, ParamKind::String, help), default_(defaultValue) {}

std::string StringParam::get(const EnvSource& env) const { return env.get(name()).value_or(default_); }
std::string StringParam::get() const { return get(EnvSource::process()); }
bool StringParam::isSet() const { return EnvSource::process().get(name()).has_value(); }
std::optional<std::string> StringParam::getIfSet(const EnvSource& env) const { return env.get(name()); }

}  // namespace braid
