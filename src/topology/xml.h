// A small XML document model over libxml2: elements with their attributes (in order), their
// children and the line they start on, so that every complaint about a file can name the
// line. Parsing never loads external entities or DTDs and refuses oversized input.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace braid {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<XmlElement> children;
  int line = 0;

  // The attribute's value, or nullptr when absent.
  const std::string* attr(const std::string& key) const;
  void set(const std::string& key, std::string value);
};

constexpr size_t kMaxXmlBytes = 16u << 20;

// Parses `text`; `sourceName` names it in errors ("topo.xml:12: ...").
Status parseXml(const std::string& text, const std::string& sourceName, XmlElement* root);
// Reads and parses a file (at most kMaxXmlBytes).
Status parseXmlFile(const std::string& path, XmlElement* root);
// Reads a whole file (at most kMaxXmlBytes) into `text`.
Status readTextFile(const std::string& path, std::string* text);
// Writes `text` to `path` (replacing it); `what` names the contents in errors ("topology").
Status writeTextFile(const std::string& path, const std::string& text, const char* what);
// Serialises with two-space indentation and an XML declaration-free header, as NCCL writes.
std::string writeXml(const XmlElement& root);

}  // namespace braid
