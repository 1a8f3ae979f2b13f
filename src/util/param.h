// Typed configuration parameters. Each parameter is declared once (src/core/config/params.cc
// holds Braid's table) with its name, default, bounds and a line of help; reading it
// consults EnvSource (environment, then configuration files). A malformed or out-of-range
// value is reported once, as a WARN naming the variable, the value and what is used
// instead; it is never fatal and never silently changes meaning.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace braid {

class EnvSource;

enum class ParamKind { Int, Size, String };

// The C type a parameter has in NCCL's parameter API (ncclParamGetI32, ...): integers whose
// bounds fit 32 bits are int32_t, other integers (and sizes) int64_t, text const char*.
enum class ParamType { I32, I64, Str };
const char* paramTypeName(ParamType type);  // "int32_t", "int64_t", "const char*"

class ParamBase {
 public:
  ParamBase(const char* name, ParamKind kind, const char* help);
  virtual ~ParamBase() = default;
  ParamBase(const ParamBase&) = delete;
  ParamBase& operator=(const ParamBase&) = delete;

  const char* name() const { return name_; }
  ParamKind kind() const { return kind_; }
  const char* help() const { return help_; }
  virtual std::string defaultText() const = 0;
  virtual ParamType type() const = 0;
  // The value the library uses when it reads the parameter now, as text (a rejected value
  // reads as the default), and where it comes from ("environment", a file, "default").
  virtual std::string currentText(const EnvSource& env) const = 0;
  std::string origin(const EnvSource& env) const;
  // Empty when `text` is a valid value of the parameter, else why not ("is not an integer").
  virtual std::string rejects(const std::string& text) const = 0;

  // Every parameter declared in the program, in declaration order (for documentation).
  static const std::vector<const ParamBase*>& all();
  // The parameter named `name`, or null.
  static const ParamBase* find(std::string_view name);

 protected:
  // Reports a rejected value once per (name, value) for the life of the process.
  void warnOnce(const std::string& value, const std::string& why, const std::string& used) const;

 private:
  const char* name_;
  ParamKind kind_;
  const char* help_;
};

// Integers: decimal or 0x hex, optionally negative. Size parameters also accept a K, M or
// G suffix (powers of 1024).
class IntParam : public ParamBase {
 public:
  IntParam(const char* name, int64_t defaultValue, int64_t minValue, int64_t maxValue, const char* help,
           ParamKind kind = ParamKind::Int);
  int64_t get() const;
  int64_t get(const EnvSource& env) const;
  // The value when set and valid; nullopt when unset (or rejected).
  std::optional<int64_t> getIfSet(const EnvSource& env) const;
  int64_t defaultValue() const { return default_; }
  std::string defaultText() const override;
  ParamType type() const override;
  std::string currentText(const EnvSource& env) const override { return std::to_string(get(env)); }
  std::string rejects(const std::string& text) const override;

 private:
  int64_t default_;
  int64_t min_;
  int64_t max_;
};

class StringParam : public ParamBase {
 public:
  StringParam(const char* name, const char* defaultValue, const char* help);
  std::string get() const;
  std::string get(const EnvSource& env) const;
  bool isSet() const;
  // The value when set (nullopt otherwise).
  std::optional<std::string> getIfSet(const EnvSource& env) const;
  std::string defaultText() const override { return default_; }
  ParamType type() const override { return ParamType::Str; }
  std::string currentText(const EnvSource& env) const override { return get(env); }
  std::string rejects(const std::string&) const override { return std::string(); }

 private:
  const char* default_;
};

// Parsers shared by parameters and by other places that read numbers from text.
// They accept the whole string or nothing.
bool parseInt64(const std::string& text, int64_t* out);
bool parseSize(const std::string& text, int64_t* out);  // with K/M/G suffixes

}  // namespace braid
