#include "topology/graph_xml.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "topology/xml_attrs.h"
#include "util/format.h"

namespace braid {

namespace {

// NCCL's kvDictLinkType: the path types a graph may name.
constexpr struct {
  const char* name;
  PathType type;
} kGraphTypes[] = {{"LOC", PathType::LOC}, {"NVL", PathType::NVL}, {"NVB", PathType::NVB},
                   {"PIX", PathType::PIX}, {"PXB", PathType::PXB}, {"P2C", PathType::P2C},
                   {"PXN", PathType::PXN}, {"PHB", PathType::PHB}, {"SYS", PathType::SYS}};

bool graphType(const std::string& text, PathType* out) {
  for (const auto& t : kGraphTypes) {
    if (text == t.name) {
      *out = t.type;
      return true;
    }
  }
  return false;
}

// A device number as NCCL writes it: "0x1a" hexadecimal, else decimal.
bool deviceNumber(const std::string& raw, int* out) {
  std::string t(trim(raw));
  if (t.empty()) return false;
  bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(t.c_str() + (hex ? 2 : 0), &end, hex ? 16 : 10);
  if (errno != 0 || end != t.c_str() + t.size() || v < 0 || v > (1 << 24)) return false;
  *out = static_cast<int>(v);
  return true;
}

class GraphLoader {
 public:
  GraphLoader(const std::string& source, const TopoGraph& topo) : b_(source), topo_(topo), gpus_(topo.gpus()) {}

  const std::vector<std::string>& notes() const { return b_.notes(); }

  Status load(const XmlElement& root, std::vector<SearchGraph>* out) {
    if (root.name != "graphs") {
      return b_.error(root.line,
                      strFormat("root element <%s>, expected <graphs> (NCCL's graph format)", root.name.c_str()));
    }
    for (const XmlElement& e : root.children) {
      if (e.name != "graph") continue;
      SearchGraph g;
      BRAID_CHECK(loadGraph(e, &g));
      out->push_back(std::move(g));
    }
    return okStatus();
  }

 private:
  Status loadGraph(const XmlElement& e, SearchGraph* g) {
    XmlAttrs a(e, b_);
    BRAID_CHECK(a.integer("id", 0, 64, &g->id));
    BRAID_CHECK(a.integer("pattern", 1, 6, &g->pattern));
    BRAID_CHECK(a.integer("crossnic", 0, 2, &g->crossNic));
    BRAID_CHECK(a.integer("samechannels", 0, 1, &g->sameChannels));
    int nChannels = -1;
    BRAID_CHECK(a.integer("nchannels", 0, 64, &nChannels));
    BRAID_CHECK(a.real("speedintra", 0, 1e6, &g->bwIntra));
    BRAID_CHECK(a.real("speedinter", 0, 1e6, &g->bwInter));
    BRAID_CHECK(a.real("latencyinter", 0, 1e9, &g->latencyInter));
    for (const char* key : {"typeintra", "typeinter"}) {
      const std::string* v = e.attr(key);
      if (!v) continue;
      PathType* type = std::strcmp(key, "typeintra") == 0 ? &g->typeIntra : &g->typeInter;
      if (!graphType(std::string(trim(*v)), type)) {
        return b_.error(e.line, strFormat("<graph %s=\"%s\">: not a path type (LOC, NVL, NVB, PIX, PXB, P2C, PXN, "
                                          "PHB, SYS)",
                                          key, v->c_str()));
      }
    }
    g->fromFile = true;
    for (const XmlElement& c : e.children) {
      if (c.name != "channel") continue;
      TopoChannel ch;
      BRAID_CHECK(loadChannel(c, &ch));
      g->channels.push_back(std::move(ch));
    }
    if (nChannels >= 0 && nChannels != static_cast<int>(g->channels.size())) {
      b_.note(strFormat("line %d: <graph nchannels=\"%d\"> lists %zu channel(s); the channels listed are used", e.line,
                        nChannels, g->channels.size()));
    }
    return okStatus();
  }

  Status loadChannel(const XmlElement& e, TopoChannel* ch) {
    int nets = 0;
    for (const XmlElement& sub : e.children) {
      const std::string* devText = sub.attr("dev");
      const std::string* rankText = sub.attr("rank");
      int dev = -1;
      if (sub.name == "gpu" && rankText) {
        int rank = -1;
        if (!deviceNumber(*rankText, &rank) || rank >= static_cast<int>(gpus_.size())) {
          return b_.error(sub.line, strFormat("<gpu rank=\"%s\">: not a rank of this topology's %zu GPU(s)",
                                              rankText->c_str(), gpus_.size()));
        }
        ch->gpus.push_back(gpus_[static_cast<size_t>(rank)]);
        continue;
      }
      if (sub.name != "gpu" && sub.name != "net") continue;
      if (!devText || !deviceNumber(*devText, &dev)) {
        return b_.error(sub.line, strFormat("<%s dev=\"%s\">: not a device number", sub.name.c_str(),
                                            devText ? devText->c_str() : ""));
      }
      if (sub.name == "gpu") {
        int node = -1;
        for (int g : gpus_) {
          if (topo_.nodes[static_cast<size_t>(g)].gpu.dev == dev) node = g;
        }
        if (node < 0)
          return b_.error(sub.line, strFormat("<gpu dev=\"%s\">: no such GPU in the topology", devText->c_str()));
        ch->gpus.push_back(node);
      } else {
        int node = -1;
        for (int n : topo_.nets()) {
          if (topo_.nodes[static_cast<size_t>(n)].net.dev == dev) node = n;
        }
        // A port the topology lacks matters only across nodes; the search checks it there.
        (nets++ == 0 ? ch->netIn : ch->netOut) = node;
      }
    }
    return okStatus();
  }

  TopoBuilder b_;  // for its error and note forms
  const TopoGraph& topo_;
  std::vector<int> gpus_;
};

std::string deviceText(int dev) { return dev == 0 ? std::string("0") : strFormat("0x%x", dev); }

std::string number(double v) { return strFormat("%g", static_cast<double>(static_cast<float>(v))); }

const char* typeText(PathType t) {
  for (const auto& k : kGraphTypes) {
    if (k.type == t) return k.name;
  }
  return "SYS";
}

XmlElement graphElement(const TopoGraph& topo, const SearchGraph& g, bool withNets) {
  XmlElement e;
  e.name = "graph";
  e.set("id", std::to_string(g.id));
  e.set("pattern", std::to_string(g.pattern));
  e.set("crossnic", std::to_string(g.crossNic));
  e.set("nchannels", std::to_string(g.channels.size()));
  e.set("speedintra", number(g.bwIntra));
  e.set("speedinter", number(g.bwInter));
  e.set("latencyinter", number(g.latencyInter));
  e.set("typeintra", typeText(g.typeIntra));
  e.set("typeinter", typeText(g.typeInter));
  e.set("samechannels", std::to_string(g.sameChannels));
  auto port = [&](int net) {
    XmlElement p;
    p.name = "net";
    p.set("dev", deviceText(net >= 0 ? topo.nodes[static_cast<size_t>(net)].net.dev : 0));
    return p;
  };
  for (const TopoChannel& ch : g.channels) {
    XmlElement c;
    c.name = "channel";
    if (withNets) c.children.push_back(port(ch.netIn));
    for (int gpu : ch.gpus) {
      XmlElement x;
      x.name = "gpu";
      x.set("dev", deviceText(topo.nodes[static_cast<size_t>(gpu)].gpu.dev));
      c.children.push_back(std::move(x));
    }
    if (withNets) c.children.push_back(port(ch.netOut));
    e.children.push_back(std::move(c));
  }
  return e;
}

}  // namespace

Status loadNcclGraphs(const XmlElement& root, const std::string& sourceName, const TopoGraph& topology,
                      std::vector<SearchGraph>* out, std::vector<std::string>* notes) {
  out->clear();
  GraphLoader loader(sourceName, topology);
  Status s = loader.load(root, out);
  if (notes) *notes = loader.notes();
  return s;
}

Status readNcclGraphFile(const std::string& path, const TopoGraph& topology, std::vector<SearchGraph>* out,
                         std::vector<std::string>* notes) {
  XmlElement root;
  BRAID_CHECK(parseXmlFile(path, &root));
  return loadNcclGraphs(root, path, topology, out, notes);
}

std::string dumpNcclGraphs(const TopoGraph& topology, const TopoSearchResult& result) {
  XmlElement root;
  root.name = "graphs";
  root.set("version", "1");
  bool withNets = result.nNodes > 1;
  root.children.push_back(graphElement(topology, result.ring, withNets));
  root.children.push_back(graphElement(topology, result.tree, withNets));
  return writeXml(root);
}

Status writeNcclGraphFile(const TopoGraph& topology, const TopoSearchResult& result, const std::string& path) {
  return writeTextFile(path, dumpNcclGraphs(topology, result), "graphs");
}

}  // namespace braid
