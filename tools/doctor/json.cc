#include "json.h"

#include <cmath>
#include <cstdio>

namespace braid::doctor {

Json Json::strings(const std::vector<std::string>& items) {
  Json out = array();
  for (const std::string& item : items) out.push(item);
  return out;
}

Json& Json::push(Json value) {
  items_.push_back(std::move(value));
  return *this;
}

Json& Json::set(const std::string& key, Json value) {
  members_.emplace_back(key, std::move(value));
  return *this;
}

std::string jsonQuote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          // Bytes >= 0x80 pass through: host names and interface names are UTF-8 or ASCII.
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string Json::dump() const {
  std::string out;
  write(&out);
  return out;
}

void Json::write(std::string* out) const {
  switch (kind_) {
    case Kind::Null:
      *out += "null";
      return;
    case Kind::Bool:
      *out += bool_ ? "true" : "false";
      return;
    case Kind::Number: {
      // JSON has no NaN or infinity: a measurement that could not be made is null.
      if (!std::isfinite(number_)) {
        *out += "null";
        return;
      }
      char text[32];
      if (number_ == std::floor(number_) && std::fabs(number_) < 1e15) {
        std::snprintf(text, sizeof(text), "%.0f", number_);
      } else {
        std::snprintf(text, sizeof(text), "%.6g", number_);
      }
      *out += text;
      return;
    }
    case Kind::String:
      *out += jsonQuote(string_);
      return;
    case Kind::Array:
      *out += '[';
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) *out += ',';
        items_[i].write(out);
      }
      *out += ']';
      return;
    case Kind::Object:
      *out += '{';
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i) *out += ',';
        *out += jsonQuote(members_[i].first);
        *out += ':';
        members_[i].second.write(out);
      }
      *out += '}';
      return;
  }
}

}  // namespace braid::doctor
