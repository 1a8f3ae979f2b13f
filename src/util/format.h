// printf-style formatting into std::string (GCC 12 has no <format>), and small string helpers
// shared by logging, errors and parsers.
#pragma once

#include <charconv>
#include <cstdarg>
#include <string>
#include <string_view>
#include <vector>

namespace braid {

std::string strFormat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string strFormatV(const char* fmt, va_list args);

// Splits on `sep`, trimming spaces around each piece; empty pieces are dropped.
std::vector<std::string> splitList(std::string_view text, char sep);
std::string_view trim(std::string_view text);
// Case-insensitive ASCII comparison.
bool equalsIgnoreCase(std::string_view a, std::string_view b);
std::string joinInts(const std::vector<int>& values, const char* sep = ",");
// Strict decimal: the whole text, no spaces, no '+'; for unsigned T no '-'; no overflow.
template <typename T>
bool parseDecimal(std::string_view text, T* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}
// "0,1,2,5,6" -> "0-2,5-6": how rank lists read in error messages.
std::string formatRankRanges(const std::vector<int>& sortedRanks);

}  // namespace braid
