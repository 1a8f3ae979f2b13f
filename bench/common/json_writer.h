// A small streaming JSON writer (two-space indentation), enough for the -J report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace braid::bench {

class JsonWriter {
 public:
  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  // The key of the next value, inside an object.
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);  // NaN and infinities become null
  JsonWriter& value(int64_t number);
  JsonWriter& value(uint64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();

  const std::string& text() const { return text_; }

  static std::string escape(std::string_view text);

 private:
  void beforeValue();
  void open(char bracket);
  void close(char bracket);

  std::string text_;
  std::vector<bool> hasItems_;  // per open container
  bool afterKey_ = false;
};

}  // namespace braid::bench
