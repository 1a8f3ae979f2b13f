#include "util/text_file.h"

#include <fstream>

#include "util/format.h"

namespace braid {

bool readFirstLine(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  if (!std::getline(in, line)) return false;
  *out = std::string(trim(line));
  return true;
}

std::string readFirstLine(const std::string& path) {
  std::string line;
  return readFirstLine(path, &line) ? line : std::string();
}

}  // namespace braid
