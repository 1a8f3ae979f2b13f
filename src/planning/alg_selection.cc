#include "planning/alg_selection.h"

#include <iterator>
#include <string_view>
#include <vector>

#include "util/format.h"

namespace braid {

namespace {

// Which collectives a row serves in NCCL (its registry), as CollFunc bits.
constexpr uint16_t funcBit(CollFunc f) { return static_cast<uint16_t>(1u << static_cast<int>(f)); }
constexpr uint16_t kAR = funcBit(CollFunc::AllReduce);
constexpr uint16_t kAG = funcBit(CollFunc::AllGather);
constexpr uint16_t kRS = funcBit(CollFunc::ReduceScatter);
constexpr uint16_t kGeneral = kAR | kAG | kRS | funcBit(CollFunc::Broadcast) | funcBit(CollFunc::Reduce);

struct Row {
  const char* name;
  uint16_t funcs;     // what the row serves in NCCL
  uint8_t braidPair;  // the pair Braid runs for it, 0: not implemented
};

constexpr uint8_t kTreeLL = pairBit(Algorithm::Tree, Protocol::LL);
constexpr uint8_t kTreeSimple = pairBit(Algorithm::Tree, Protocol::Simple);
constexpr uint8_t kRingLL = pairBit(Algorithm::Ring, Protocol::LL);
constexpr uint8_t kRingSimple = pairBit(Algorithm::Ring, Protocol::Simple);

// NCCL 2.32's registry, in its order. Braid's Tree serves AllReduce only, as NCCL's.
constexpr Row kRows[] = {
    {"TREE_LL", kAR, kTreeLL},
    {"TREE_LL128", kAR, 0},
    {"TREE_SIMPLE", kAR, kTreeSimple},
    {"RING_LL", kGeneral, kRingLL},
    {"RING_LL128", kGeneral, 0},
    {"RING_SIMPLE", kGeneral, kRingSimple},
    {"COLLNET_DIRECT_SIMPLE", kAR | kAG | kRS, 0},
    {"COLLNET_CHAIN_SIMPLE", kAR, 0},
    {"NVLS_SIMPLE", kAR | kAG | kRS, 0},
    {"NVLSTREE_SIMPLE", kAR, 0},
    {"PAT_SIMPLE", kAG | kRS, 0},
    {"SYMK_AGxLL_R", kAR, 0},
    {"SYMK_AGxLLMC_R", kAR, 0},
    {"SYMK_RSxTmaLD_AGxTmaST", kAR, 0},
    {"SYMK_RSxLD_AGxST", kAR, 0},
    {"SYMK_RSxLDMC_AGxSTMC", kAR, 0},
    {"SYMK_LL", kAG | kRS, 0},
    {"SYMK_LLMC", kAG, 0},
    {"SYMK_TmaST", kAG, 0},
    {"SYMK_ST", kAG, 0},
    {"SYMK_TmaSTMC", kAG, 0},
    {"SYMK_STMC", kAG, 0},
    {"SYMK_RailRing_LsaSTMC", kAG, 0},
    {"SYMK_TmaLD", kRS, 0},
    {"SYMK_LD", kRS, 0},
    {"SYMK_LDMC", kRS, 0},
    {"SYMK_RailA2A_LsaLD", kRS, 0},
    {"SYMK_RailA2A_LsaLDMC", kRS, 0},
};
constexpr int kNumRows = static_cast<int>(std::size(kRows));
constexpr uint64_t kAllRows = (uint64_t{1} << kNumRows) - 1;

bool startsWithIgnoreCase(std::string_view name, std::string_view tag) {
  return tag.size() <= name.size() && equalsIgnoreCase(name.substr(0, tag.size()), tag);
}

uint64_t rowsOfTag(std::string_view tag) {
  uint64_t rows = 0;
  for (int i = 0; i < kNumRows; ++i) {
    if (startsWithIgnoreCase(kRows[i].name, tag)) rows |= uint64_t{1} << i;
  }
  return rows;
}

std::string rowNames(uint64_t rows) {
  std::string out;
  for (int i = 0; i < kNumRows; ++i) {
    if (rows & (uint64_t{1} << i)) out += (out.empty() ? "" : ", ") + std::string(kRows[i].name);
  }
  return out;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

Status parseAlgSelection(const std::string& text, AlgSelection* out) {
  std::string compact;
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') compact.push_back(c);
  }
  uint64_t selected = 0;
  for (const std::string& term : split(compact, ',')) {
    if (term.empty()) {
      return BRAID_ERROR(ncclInvalidArgument, "algSelection \"%s\" has an empty term (\",\" twice or at an end)",
                         text.c_str());
    }
    uint64_t termRows = kAllRows;
    for (const std::string& factor : split(term, '+')) {
      bool negated = !factor.empty() && factor[0] == '^';
      std::string tag = negated ? factor.substr(1) : factor;
      if (tag.empty()) {
        return BRAID_ERROR(ncclInvalidArgument, "algSelection \"%s\": term \"%s\" has an empty name", text.c_str(),
                           term.c_str());
      }
      uint64_t rows = rowsOfTag(tag);
      if (rows == 0) {
        return BRAID_ERROR(ncclInvalidArgument,
                           "algSelection \"%s\": \"%s\" names no algorithm (names start one of: %s)", text.c_str(),
                           tag.c_str(), rowNames(kAllRows).c_str());
      }
      termRows &= negated ? (kAllRows & ~rows) : rows;
    }
    if (termRows == 0) {
      return BRAID_ERROR(ncclInvalidArgument, "algSelection \"%s\": term \"%s\" selects nothing", text.c_str(),
                         term.c_str());
    }
    selected |= termRows;
  }
  out->rows = selected;
  return okStatus();
}

uint8_t selectedPairs(const AlgSelection& selection, CollFunc func) {
  uint8_t pairs = 0;
  for (int i = 0; i < kNumRows; ++i) {
    if ((selection.rows & (uint64_t{1} << i)) && (kRows[i].funcs & funcBit(func))) pairs |= kRows[i].braidPair;
  }
  // Braid's own fact (algorithmApplies) has the last word, should it ever differ from NCCL's.
  uint8_t applicable = 0;
  for (Algorithm algo : {Algorithm::Ring, Algorithm::Tree}) {
    if (!algorithmApplies(func, algo)) continue;
    applicable |= pairBit(algo, Protocol::Simple) | pairBit(algo, Protocol::LL);
  }
  return pairs & applicable;
}

std::string explainUnservable(const AlgSelection& selection, CollFunc func) {
  uint64_t serving = 0;
  uint64_t available = 0;
  for (int i = 0; i < kNumRows; ++i) {
    if (!(kRows[i].funcs & funcBit(func))) continue;
    serving |= uint64_t{1} << i;
    if (kRows[i].braidPair) available |= uint64_t{1} << i;
  }
  std::string names = rowNames(selection.rows);
  if (usesP2pPath(func)) {
    return strFormat("selects %s, but %s runs on point-to-point transfers, where no algorithm applies", names.c_str(),
                     collFuncName(func));
  }
  if ((selection.rows & serving) == 0) {
    return strFormat("selects %s, none of which serves %s (in Braid %s can use %s)", names.c_str(), collFuncName(func),
                     collFuncName(func), rowNames(available).c_str());
  }
  return strFormat("selects %s for %s, which Braid does not implement (it has %s)",
                   rowNames(selection.rows & serving).c_str(), collFuncName(func), rowNames(available).c_str());
}

std::string pairNames(uint8_t pairs) {
  uint64_t rows = 0;
  for (int i = 0; i < kNumRows; ++i) {
    if (kRows[i].braidPair & pairs) rows |= uint64_t{1} << i;
  }
  return rowNames(rows);
}

}  // namespace braid
