// Deterministic per-rank data for correctness checks, and the expected results.
//
// Every element is a function of (seed, rank, index), so each rank can compute any other
// rank's input, and hence the expected result of any collective, without communicating.
// Values are chosen so that every reduction is exact in every type and independent of the
// order in which the library combines ranks (nccl-tests' idea, Braid's own scheme):
//  * sum, mulsum, integer avg: integers bounded by (largest exact integer) / nranks;
//  * prod: one rank contributes an integer, a few others 2 or 1, the rest 1;
//  * max, min and the data-moving collectives: any exactly representable integer;
//  * floating-point avg (a premultiplied sum in NCCL, so rounded): only two ranks per
//    element are non-zero, which makes the result independent of the order, and the check
//    allows 2 units in the last place as nccl-tests does.
// Results are then compared bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/data_types.h"

namespace braid::bench {

class DataPattern {
 public:
  // `op` empty: data for the collectives that only move data.
  DataPattern(ncclDataType_t type, std::optional<BenchOp> op, int nranks, uint64_t seed);

  // dst[k] = element (offset + k) of `rank`'s input, for k < count.
  void fillInput(void* dst, size_t count, int rank, size_t offset) const;
  // dst[k] = the reduction over all ranks of element (offset + k) of their inputs.
  void fillReduced(void* dst, size_t count, size_t offset) const;
  // Elements of `got` that differ from `expected` (beyond the tolerance of floating avg).
  size_t countWrong(const void* got, const void* expected, size_t count) const;

  // The PreMulSum scalar of `rank` (1 on even ranks, 2 on odd ones), as an element of the type.
  static void mulSumScalar(ncclDataType_t type, int rank, void* dst);

 private:
  enum class Kind { kAny, kSum, kMulSum, kProd, kIntAvg, kFloatAvg };

  uint64_t hash(int rank, size_t index) const;
  int64_t inputValue(int rank, size_t index) const;
  int64_t boundedValue(uint64_t h, int rank, size_t index, int64_t perRank, bool allowNegative) const;
  int64_t reducedInteger(size_t index) const;
  double floatAverage(size_t index) const;
  void store(void* dst, size_t k, int64_t value) const;

  ncclDataType_t type_;
  std::optional<BenchOp> op_;
  Kind kind_;
  int nranks_;
  uint64_t seed_;
  size_t eltSize_;
  bool floating_;
  int64_t exactMax_;  // every integer up to this is exact in the type
  bool signed_;       // negative values allowed
  int64_t prodBase_;  // prod: the one rank's factor is in [1, prodBase_]
  int prodTwos_;      // prod: how many other ranks may contribute a factor of 2
};

}  // namespace braid::bench
