#include "util/name_list.h"

#include <cstdlib>

#include "util/format.h"

namespace braid {

NameList NameList::parse(std::string_view spec) {
  NameList list;
  spec = trim(spec);
  if (!spec.empty() && spec.front() == '^') {
    list.exclude_ = true;
    spec.remove_prefix(1);
  }
  if (!spec.empty() && spec.front() == '=') {
    list.exact_ = true;
    spec.remove_prefix(1);
  }
  for (const std::string& item : splitList(spec, ',')) {
    Entry entry;
    entry.name = item;
    if (size_t colon = item.rfind(':'); colon != std::string::npos && colon + 1 < item.size()) {
      char* end = nullptr;
      long port = std::strtol(item.c_str() + colon + 1, &end, 10);
      if (*end == '\0' && port >= 0) {
        entry.name = item.substr(0, colon);
        entry.port = static_cast<int>(port);
      }
    }
    list.entries_.push_back(std::move(entry));
  }
  return list;
}

bool NameList::entryMatches(const Entry& entry, std::string_view name, int port) const {
  bool nameOk = exact_ ? name == entry.name : name.substr(0, entry.name.size()) == entry.name;
  bool portOk = entry.port < 0 || port < 0 || entry.port == port;
  return nameOk && portOk;
}

bool NameList::matches(std::string_view name, int port) const {
  if (entries_.empty()) return true;
  bool listed = false;
  for (const Entry& entry : entries_) {
    if (entryMatches(entry, name, port)) {
      listed = true;
      break;
    }
  }
  return exclude_ ? !listed : listed;
}

std::string NameList::describe() const {
  std::string out = exclude_ ? "all but " : "";
  out += exact_ ? "exactly " : "names starting with ";
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i) out += ", ";
    out += entries_[i].name;
    if (entries_[i].port >= 0) out += ":" + std::to_string(entries_[i].port);
  }
  return out;
}

}  // namespace braid
