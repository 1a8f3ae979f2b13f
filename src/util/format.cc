#include "util/format.h"

#include <cctype>
#include <cstdio>

namespace braid {

std::string strFormatV(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  char small[256];
  int n = std::vsnprintf(small, sizeof(small), fmt, copy);
  va_end(copy);
  if (n < 0) return std::string(fmt);
  if (static_cast<size_t>(n) < sizeof(small)) return std::string(small, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n), '\0');
  std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  return out;
}

std::string strFormat(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string out = strFormatV(fmt, args);
  va_end(args);
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::vector<std::string> splitList(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view piece = trim(text.substr(start, end - start));
    if (!piece.empty()) out.emplace_back(piece);
    start = end + 1;
  }
  return out;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string joinInts(const std::vector<int>& values, const char* sep) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += sep;
    out += std::to_string(values[i]);
  }
  return out;
}

std::string formatRankRanges(const std::vector<int>& sortedRanks) {
  std::string out;
  size_t i = 0;
  while (i < sortedRanks.size()) {
    size_t j = i;
    while (j + 1 < sortedRanks.size() && sortedRanks[j + 1] == sortedRanks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sortedRanks[i]);
    if (j > i) out += "-" + std::to_string(sortedRanks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace braid
