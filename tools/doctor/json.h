// A small JSON value for braid-doctor's --json output: the report is assembled as a tree
// (objects keep their keys in insertion order, so the document reads like the text
// report) and written once at the end. Output only; the doctor never parses JSON.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace braid::doctor {

class Json {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Json() = default;
  Json(bool v) : kind_(Kind::Bool), bool_(v) {}  // NOLINT: implicit on purpose, values read naturally
  Json(int v) : kind_(Kind::Number), number_(v) {}
  Json(int64_t v) : kind_(Kind::Number), number_(static_cast<double>(v)) {}
  Json(double v) : kind_(Kind::Number), number_(v) {}
  Json(const char* v) : kind_(Kind::String), string_(v) {}
  Json(std::string v) : kind_(Kind::String), string_(std::move(v)) {}

  static Json array() { return Json(Kind::Array); }
  static Json object() { return Json(Kind::Object); }
  // An array of strings, the common case (lines of a section).
  static Json strings(const std::vector<std::string>& items);

  // Appends to an array.
  Json& push(Json value);
  // Sets a key of an object (appended; keys are not looked up, callers set each once).
  Json& set(const std::string& key, Json value);

  std::string dump() const;  // compact, one line

 private:
  explicit Json(Kind kind) : kind_(kind) {}
  void write(std::string* out) const;

  Kind kind_ = Kind::Null;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

// `text` as a JSON string literal, quotes included.
std::string jsonQuote(const std::string& text);

}  // namespace braid::doctor
