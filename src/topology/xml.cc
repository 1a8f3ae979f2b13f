#include "topology/xml.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "util/format.h"

namespace braid {

namespace {

// The first error libxml2 reports while this thread parses (its handlers are per thread).
thread_local std::string tFirstError;
thread_local int tFirstErrorLine = 0;

void collectError(void* /*userData*/, xmlErrorPtr error) {
  if (error == nullptr || !tFirstError.empty()) return;
  if (error->level < XML_ERR_ERROR) return;  // warnings do not fail a file
  std::string text = error->message ? error->message : "malformed XML";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  tFirstError = text;
  tFirstErrorLine = error->line;
}

struct DocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
struct CtxtFree {
  void operator()(xmlParserCtxt* ctxt) const { xmlFreeParserCtxt(ctxt); }
};

// "prefix:name" when the name has a namespace prefix, so that a dump writes it back as read.
std::string qualifiedName(const xmlChar* name, const xmlNs* ns) {
  std::string local = reinterpret_cast<const char*>(name);
  if (ns && ns->prefix) return reinterpret_cast<const char*>(ns->prefix) + (":" + local);
  return local;
}

void convert(xmlDoc* doc, xmlNode* node, XmlElement* out) {
  out->name = qualifiedName(node->name, node->ns);
  out->line = static_cast<int>(xmlGetLineNo(node));
  for (xmlAttr* a = node->properties; a != nullptr; a = a->next) {
    xmlChar* value = xmlNodeListGetString(doc, a->children, 1);
    out->attrs.emplace_back(qualifiedName(a->name, a->ns), value ? reinterpret_cast<const char*>(value) : "");
    xmlFree(value);
  }
  for (xmlNode* child = node->children; child != nullptr; child = child->next) {
    if (child->type != XML_ELEMENT_NODE) continue;
    out->children.emplace_back();
    convert(doc, child, &out->children.back());
  }
}

void escapeInto(const std::string& text, std::string* out) {
  for (char c : text) {
    switch (c) {
      case '&':
        *out += "&amp;";
        break;
      case '<':
        *out += "&lt;";
        break;
      case '>':
        *out += "&gt;";
        break;
      case '"':
        *out += "&quot;";
        break;
      // Parsers turn raw whitespace in attribute values into spaces; these survive.
      case '\n':
        *out += "&#10;";
        break;
      case '\r':
        *out += "&#13;";
        break;
      case '\t':
        *out += "&#9;";
        break;
      default:
        *out += c;
    }
  }
}

void writeElement(const XmlElement& e, int depth, std::string* out) {
  out->append(static_cast<size_t>(depth) * 2, ' ');
  *out += "<" + e.name;
  for (const auto& [key, value] : e.attrs) {
    *out += " " + key + "=\"";
    escapeInto(value, out);
    *out += "\"";
  }
  if (e.children.empty()) {
    *out += "/>\n";
    return;
  }
  *out += ">\n";
  for (const XmlElement& child : e.children) writeElement(child, depth + 1, out);
  out->append(static_cast<size_t>(depth) * 2, ' ');
  *out += "</" + e.name + ">\n";
}

}  // namespace

const std::string* XmlElement::attr(const std::string& key) const {
  for (const auto& [k, v] : attrs) {
    if (k == key) return &v;
  }
  return nullptr;
}

void XmlElement::set(const std::string& key, std::string value) {
  for (auto& [k, v] : attrs) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  attrs.emplace_back(key, std::move(value));
}

Status parseXml(const std::string& text, const std::string& sourceName, XmlElement* root) {
  if (text.size() > kMaxXmlBytes) {
    return BRAID_ERROR(ncclInvalidUsage, "%s: larger than %zu MiB; not a topology file", sourceName.c_str(),
                       kMaxXmlBytes >> 20);
  }
  // libxml2 wants its global state set up once before threads use it.
  static std::once_flag initialised;
  std::call_once(initialised, [] { xmlInitParser(); });
  std::unique_ptr<xmlParserCtxt, CtxtFree> ctxt(xmlNewParserCtxt());
  if (!ctxt) return BRAID_ERROR(ncclSystemError, "%s: out of memory starting the XML parser", sourceName.c_str());
  tFirstError.clear();
  tFirstErrorLine = 0;
  xmlSetStructuredErrorFunc(nullptr, collectError);
  // No network, no external DTD, no entity substitution; big line numbers for big files.
  int options = XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  std::unique_ptr<xmlDoc, DocFree> doc(
      xmlCtxtReadMemory(ctxt.get(), text.data(), static_cast<int>(text.size()), sourceName.c_str(), nullptr, options));
  xmlSetStructuredErrorFunc(nullptr, nullptr);
  if (!doc || !tFirstError.empty()) {
    std::string why = tFirstError.empty() ? "not well-formed XML" : tFirstError;
    if (tFirstErrorLine > 0) {
      return BRAID_ERROR(ncclInvalidUsage, "%s:%d: %s", sourceName.c_str(), tFirstErrorLine, why.c_str());
    }
    return BRAID_ERROR(ncclInvalidUsage, "%s: %s", sourceName.c_str(), why.c_str());
  }
  xmlNode* top = xmlDocGetRootElement(doc.get());
  if (top == nullptr) return BRAID_ERROR(ncclInvalidUsage, "%s: no root element", sourceName.c_str());
  *root = XmlElement();
  convert(doc.get(), top, root);
  return okStatus();
}

Status readTextFile(const std::string& path, std::string* text) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return BRAID_ERROR(ncclSystemError, "%s: cannot open: %s", path.c_str(), std::strerror(errno));
  text->clear();
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    text->append(buffer, n);
    if (text->size() > kMaxXmlBytes) {
      return BRAID_ERROR(ncclInvalidUsage, "%s: larger than %zu MiB; not a topology file", path.c_str(),
                         kMaxXmlBytes >> 20);
    }
  }
  if (std::ferror(file.get())) return BRAID_ERROR(ncclSystemError, "%s: read error", path.c_str());
  return okStatus();
}

Status writeTextFile(const std::string& path, const std::string& text, const char* what) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (!file) return BRAID_ERROR(ncclSystemError, "%s: cannot write the %s: %s", path.c_str(), what, strerror(errno));
  size_t written = std::fwrite(text.data(), 1, text.size(), file);
  bool closed = std::fclose(file) == 0;
  if (written != text.size() || !closed) {
    return BRAID_ERROR(ncclSystemError, "%s: cannot write the %s (disk full?)", path.c_str(), what);
  }
  return okStatus();
}

Status parseXmlFile(const std::string& path, XmlElement* root) {
  std::string text;
  BRAID_CHECK(readTextFile(path, &text));
  return parseXml(text, path, root);
}

std::string writeXml(const XmlElement& root) {
  std::string out;
  writeElement(root, 0, &out);
  return out;
}

}  // namespace braid
