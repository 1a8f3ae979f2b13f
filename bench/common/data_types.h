// The element types and reduction operations the benchmarks sweep over, with nccl-tests'
// names (-d, -o and the table's "type" and "redop" columns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "nccl.h"

namespace braid::bench {

struct TypeInfo {
  ncclDataType_t type;
  const char* name;
  size_t size;
};

// In nccl-tests' order, which is also the order of "-d all".
inline constexpr TypeInfo kTypes[] = {
    {ncclInt8, "int8", 1},         {ncclUint8, "uint8", 1},       {ncclInt32, "int32", 4},
    {ncclUint32, "uint32", 4},     {ncclInt64, "int64", 8},       {ncclUint64, "uint64", 8},
    {ncclFloat16, "half", 2},      {ncclFloat32, "float", 4},     {ncclFloat64, "double", 8},
    {ncclBfloat16, "bfloat16", 2}, {ncclFloat8e4m3, "f8e4m3", 1}, {ncclFloat8e5m2, "f8e5m2", 1},
};

// The benchmark's operations: NCCL's built-in ones plus "mulsum", a PreMulSum operator
// (ncclRedOpCreatePreMulSum) whose scalar is 1 on even ranks and 2 on odd ones.
enum class BenchOp { kSum, kProd, kMax, kMin, kAvg, kMulSum };

inline constexpr BenchOp kAllOps[] = {BenchOp::kSum, BenchOp::kProd, BenchOp::kMax,
                                      BenchOp::kMin, BenchOp::kAvg,  BenchOp::kMulSum};

const TypeInfo& typeInfo(ncclDataType_t type);
std::optional<ncclDataType_t> typeFromName(std::string_view name);
const char* opName(BenchOp op);
std::optional<BenchOp> opFromName(std::string_view name);
bool isFloatingType(ncclDataType_t type);

// The built-in operator for `op`; kMulSum has none (the harness creates one per communicator).
ncclRedOp_t builtinOp(BenchOp op);

// Floating-point formats narrower than float, as bit patterns. Conversions from double round
// to nearest, ties to even; out-of-range values become infinity (half, bfloat16) or saturate
// to the largest finite value (both fp8 formats, as NCCL does).
enum class NarrowFormat { kHalf, kBfloat16, kE4m3, kE5m2 };

uint32_t encodeNarrow(NarrowFormat format, double value);
double decodeNarrow(NarrowFormat format, uint32_t bits);

// Writes `value` (exactly representable, or rounded as above) as one element of `type`.
void storeElement(ncclDataType_t type, double value, void* dst);

}  // namespace braid::bench
