// ncclCollConfig_t.algSelection (NCCL 2.31): which (algorithm, protocol) pairs one call may
// use, in NCCL's grammar:
//   "ring"                    every row whose name starts with RING (any case)
//   "ring_simple,tree_simple" ',' joins terms (either)
//   "ring+^ring_ll128"        '+' joins factors of a term (both); '^' negates a factor
// Names are NCCL's registry rows (TREE_LL, RING_SIMPLE, NVLS_SIMPLE, PAT_SIMPLE, SYMK_...);
// a tag selects every row it is a prefix of. Braid runs the Ring and Tree rows of its
// Simple and LL protocols; the others are known (so that a selection naming them is read
// as NCCL reads it) and reported as not implemented.
#pragma once

#include <cstdint>
#include <string>

#include "planning/algo_proto.h"
#include "util/status.h"

namespace braid {

// One bit per (algorithm, protocol) pair Braid runs.
constexpr uint8_t pairBit(Algorithm algo, Protocol proto) {
  return static_cast<uint8_t>(1u << (static_cast<int>(algo) * kNumProtocols + static_cast<int>(proto)));
}
constexpr uint8_t kAllPairs = (1u << (kNumAlgorithms * kNumProtocols)) - 1;

struct AlgSelection {
  uint64_t rows = 0;  // NCCL registry rows selected (bit i: row i)
};

// Parses `text`. A syntax error or an unknown name is ncclInvalidArgument naming it.
Status parseAlgSelection(const std::string& text, AlgSelection* out);

// The pairs of `selection` that Braid can run for `func` (0: none).
uint8_t selectedPairs(const AlgSelection& selection, CollFunc func);

// Why `selection` cannot serve `func` (call when selectedPairs is 0): the rows it names,
// and whether they do not apply to the function or are not implemented by Braid.
std::string explainUnservable(const AlgSelection& selection, CollFunc func);

// "RING_LL, TREE_SIMPLE": the names of a pair mask, for messages.
std::string pairNames(uint8_t pairs);

}  // namespace braid
