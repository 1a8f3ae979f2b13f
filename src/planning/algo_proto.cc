#include "planning/algo_proto.h"

#include <iterator>
#include <string_view>

#include "util/format.h"

namespace braid {

namespace {

constexpr int kNotImplemented = -1;

// A name of the setting's vocabulary: NCCL knows all of them, Braid implements those with
// a value.
struct KnownName {
  const char* name;
  int value;  // Algorithm or Protocol value, or kNotImplemented
};

constexpr KnownName kAlgorithmNames[] = {
    {"Tree", static_cast<int>(Algorithm::Tree)},
    {"Ring", static_cast<int>(Algorithm::Ring)},
    {"Direct", static_cast<int>(Algorithm::Direct)},
    {"Hier", static_cast<int>(Algorithm::Hier)},
    {"CollNetDirect", kNotImplemented},
    {"CollNetChain", kNotImplemented},
    {"NVLS", kNotImplemented},
    {"NVLSTree", kNotImplemented},
    {"PAT", kNotImplemented},
};

constexpr KnownName kProtocolNames[] = {
    {"LL", static_cast<int>(Protocol::LL)},
    {"LL128", kNotImplemented},
    {"Simple", static_cast<int>(Protocol::Simple)},
};

constexpr const char* kCollFuncNames[kNumCollFuncs] = {
    "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce", "SendRecv", "AlltoAll", "Gather", "Scatter"};

// What differs between NCCL_ALGO and NCCL_PROTO.
struct SettingKind {
  const char* variable;  // "NCCL_ALGO"
  const char* noun;      // "algorithm"
  const KnownName* names;
  int nNames;
  uint8_t all;
  // Algorithms do not apply to the p2p functions, so an algorithm setting ignores them.
  bool skipsP2p;
};

const KnownName* findName(const SettingKind& kind, std::string_view name) {
  for (int i = 0; i < kind.nNames; ++i) {
    if (equalsIgnoreCase(kind.names[i].name, name)) return &kind.names[i];
  }
  return nullptr;
}

int findFunction(std::string_view name) {
  for (int f = 0; f < kNumCollFuncs; ++f) {
    if (equalsIgnoreCase(kCollFuncNames[f], name)) return f;
  }
  return -1;
}

std::string maskNames(const SettingKind& kind, uint8_t mask) {
  std::string out;
  for (int i = 0; i < kind.nNames; ++i) {
    int value = kind.names[i].value;
    if (value == kNotImplemented || !(mask & (1u << value))) continue;
    if (!out.empty()) out += ", ";
    out += kind.names[i].name;
  }
  return out;
}

void warn(std::vector<std::string>* warnings, std::string message) {
  if (warnings) warnings->push_back(std::move(message));
}

// The mask one clause's list selects ("ring,tree" or "^tree").
uint8_t parseClauseList(const SettingKind& kind, std::string_view list, std::vector<std::string>* warnings) {
  list = trim(list);
  bool exclude = !list.empty() && list.front() == '^';
  if (exclude) list.remove_prefix(1);
  uint8_t listed = 0;
  for (const std::string& item : splitList(list, ',')) {
    const KnownName* known = findName(kind, item);
    if (!known) {
      warn(warnings, strFormat("%s: unknown %s '%s'; ignored", kind.variable, kind.noun, item.c_str()));
    } else if (known->value == kNotImplemented) {
      // Excluding what Braid never runs is already honoured, so only a request to use it
      // deserves a warning (NCCL_ALGO=^NVLS is a common, harmless setting).
      if (!exclude) {
        warn(warnings, strFormat("%s lists %s, which Braid does not implement; ignored", kind.variable, known->name));
      }
    } else {
      listed |= static_cast<uint8_t>(1u << known->value);
    }
  }
  return exclude ? static_cast<uint8_t>(kind.all & ~listed) : listed;
}

void parseSetting(const SettingKind& kind, const std::string& text, uint8_t* masks,
                  std::vector<std::string>* warnings) {
  for (int f = 0; f < kNumCollFuncs; ++f) masks[f] = kind.all;
  for (const std::string& clause : splitList(text, ';')) {
    std::string_view list = clause;
    int target = -1;  // -1: every function
    if (size_t colon = clause.find(':'); colon != std::string::npos) {
      std::string_view function = trim(std::string_view(clause).substr(0, colon));
      list = std::string_view(clause).substr(colon + 1);
      target = findFunction(function);
      if (target < 0) {
        warn(warnings, strFormat("%s: unknown function '%.*s' in '%s'; that clause is ignored", kind.variable,
                                 static_cast<int>(function.size()), function.data(), clause.c_str()));
        continue;
      }
      if (kind.skipsP2p && usesP2pPath(static_cast<CollFunc>(target))) {
        warn(warnings, strFormat("%s: %s runs on the p2p path, where no %s applies; '%s' is ignored", kind.variable,
                                 kCollFuncNames[target], kind.noun, clause.c_str()));
        continue;
      }
    }
    uint8_t mask = parseClauseList(kind, list, warnings);
    for (int f = 0; f < kNumCollFuncs; ++f) {
      if (target < 0 || target == f) masks[f] = mask;
    }
  }

  // A function left with nothing Braid can run would make the setting unusable; NCCL
  // errors out there, Braid runs with its defaults and says so.
  std::vector<std::string> emptied;
  int relevant = 0;
  for (int f = 0; f < kNumCollFuncs; ++f) {
    bool ignored = kind.skipsP2p && usesP2pPath(static_cast<CollFunc>(f));
    if (!ignored) ++relevant;
    if (masks[f] != 0) continue;
    masks[f] = kind.all;
    if (!ignored) emptied.push_back(kCollFuncNames[f]);
  }
  if (emptied.empty()) return;
  std::string which;
  if (static_cast<int>(emptied.size()) == relevant) {
    which = "any function";
  } else {
    for (const std::string& name : emptied) which += (which.empty() ? "" : ", ") + name;
  }
  warn(warnings, strFormat("%s=%s leaves nothing Braid implements for %s; using every %s (%s) there instead",
                           kind.variable, text.c_str(), which.c_str(), kind.noun, maskNames(kind, kind.all).c_str()));
}

const SettingKind kAlgoKind = {
    "NCCL_ALGO", "algorithm", kAlgorithmNames, static_cast<int>(std::size(kAlgorithmNames)), kAllAlgorithms, true};
const SettingKind kProtoKind = {"NCCL_PROTO",  "protocol", kProtocolNames, static_cast<int>(std::size(kProtocolNames)),
                                kAllProtocols, false};

}  // namespace

const char* algorithmName(Algorithm algo) {
  switch (algo) {
    case Algorithm::Ring:
      return "Ring";
    case Algorithm::Tree:
      return "Tree";
    case Algorithm::Direct:
      return "Direct";
    case Algorithm::Hier:
      return "Hier";
  }
  return "?";
}

const char* protocolName(Protocol proto) {
  switch (proto) {
    case Protocol::Simple:
      return "Simple";
    case Protocol::LL:
      return "LL";
  }
  return "?";
}

const char* collFuncName(CollFunc func) {
  int f = static_cast<int>(func);
  return f < kNumCollFuncs ? kCollFuncNames[f] : "?";
}

bool usesP2pPath(CollFunc func) {
  switch (func) {
    case CollFunc::SendRecv:
    case CollFunc::AlltoAll:
    case CollFunc::Gather:
    case CollFunc::Scatter:
      return true;
    default:
      return false;
  }
}

uint8_t applicableAlgorithms(CollFunc func) {
  if (usesP2pPath(func)) return 0;
  const uint8_t everywhere = algorithmBit(Algorithm::Ring) | algorithmBit(Algorithm::Direct);
  if (func == CollFunc::AllReduce) return everywhere | algorithmBit(Algorithm::Tree) | algorithmBit(Algorithm::Hier);
  return everywhere;
}

bool algorithmApplies(CollFunc func, Algorithm algo) { return applicableAlgorithms(func) & algorithmBit(algo); }

bool pairApplies(Algorithm algo, Protocol proto) { return algo != Algorithm::Direct || proto == Protocol::Simple; }

AlgoProtoPolicy::AlgoProtoPolicy() {
  for (int f = 0; f < kNumCollFuncs; ++f) {
    algorithms[f] = kAllAlgorithms;
    protocols[f] = kAllProtocols;
  }
}

bool AlgoProtoPolicy::allowsAlgorithm(CollFunc func, Algorithm algo) const {
  return algorithms[static_cast<int>(func)] & algorithmBit(algo);
}

bool AlgoProtoPolicy::allowsProtocol(CollFunc func, Protocol proto) const {
  return protocols[static_cast<int>(func)] & protocolBit(proto);
}

uint8_t AlgoProtoPolicy::usableAlgorithms(CollFunc func) const {
  uint8_t applicable = applicableAlgorithms(func) & static_cast<uint8_t>(~unavailable);
  uint8_t usable = algorithms[static_cast<int>(func)] & applicable;
  return usable ? usable : applicable;
}

uint8_t AlgoProtoPolicy::usableProtocols(CollFunc func) const {
  uint8_t usable = protocols[static_cast<int>(func)] & kAllProtocols;
  return usable ? usable : kAllProtocols;
}

bool AlgoProtoPolicy::forcedOntoUnavailable(CollFunc func) const {
  const uint8_t allowed = algorithms[static_cast<int>(func)];
  uint8_t applicable = applicableAlgorithms(func) & static_cast<uint8_t>(~unavailable);
  if (!applicable || (allowed & applicable)) return false;
  return (allowed & applicableAlgorithms(func) & unavailable) != 0;
}

std::string AlgoProtoPolicy::explainInapplicable(CollFunc func) const {
  const uint8_t allowed = algorithms[static_cast<int>(func)];
  uint8_t applicable = applicableAlgorithms(func) & static_cast<uint8_t>(~unavailable);
  if (!applicable || (allowed & applicable)) return "";
  if (forcedOntoUnavailable(func)) {
    return strFormat("NCCL_ALGO=%s cannot run %s on this communicator (%s); using %s", algoSetting.c_str(),
                     collFuncName(func), unavailableWhy.c_str(), maskNames(kAlgoKind, applicable).c_str());
  }
  return strFormat("NCCL_ALGO=%s does not apply to %s; using %s", algoSetting.c_str(), collFuncName(func),
                   maskNames(kAlgoKind, applicable).c_str());
}

Status parseAlgoPolicy(const std::string& text, AlgoProtoPolicy* out, std::vector<std::string>* warnings) {
  if (!out) return BRAID_ERROR(ncclInternalError, "parseAlgoPolicy: no policy to fill");
  out->algoSetting = text;
  parseSetting(kAlgoKind, text, out->algorithms, warnings);
  return okStatus();
}

Status parseProtoPolicy(const std::string& text, AlgoProtoPolicy* out, std::vector<std::string>* warnings) {
  if (!out) return BRAID_ERROR(ncclInternalError, "parseProtoPolicy: no policy to fill");
  out->protoSetting = text;
  parseSetting(kProtoKind, text, out->protocols, warnings);
  return okStatus();
}

}  // namespace braid
