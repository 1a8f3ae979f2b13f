// Test data and reference results for the collective correctness matrix.
//
// Inputs are small integers chosen so that every partial result of the reductions is
// exactly representable in the element type, whatever order the library reduces in: sums
// use values 0..3 (0..1 for fp8), products 1..2 (powers of two), so ring, tree and any
// channel split must give exactly the reference. Integer types use 1..5 and wrap-around
// arithmetic, computed here in uint64 and truncated. Averages are not exact (they scale by
// 1/nranks before summing, as NCCL does) and are compared with a tolerance per type.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/reduce/numeric_types.h"
#include "nccl.h"

namespace braid::test {

enum class TestOp { Sum, Prod, Max, Min, Avg, PreMulSum, PreMulSumAtRun };
constexpr TestOp kAllOps[] = {TestOp::Sum, TestOp::Prod,      TestOp::Max,           TestOp::Min,
                              TestOp::Avg, TestOp::PreMulSum, TestOp::PreMulSumAtRun};
inline const char* testOpName(TestOp op) {
  const char* names[] = {"sum", "prod", "max", "min", "avg", "premulsum", "premulsum(device)"};
  return names[static_cast<int>(op)];
}
constexpr double kPreMulScalar = 2.0;

inline bool isIntegerType(ncclDataType_t t) { return t <= ncclUint64; }
inline bool isFp8(ncclDataType_t t) { return t == ncclFloat8e4m3 || t == ncclFloat8e5m2; }

// The value of element i on rank r, as a double (exactly representable in the type).
inline double inputValue(ncclDataType_t type, TestOp op, int r, size_t i) {
  if (isIntegerType(type)) return static_cast<double>((static_cast<size_t>(r) * 7 + i * 13) % 5 + 1);
  if (op == TestOp::Prod) return 1.0 + static_cast<double>((static_cast<size_t>(r) + i) % 2);
  if (isFp8(type)) return static_cast<double>((static_cast<size_t>(r) + i * 3) % 2);
  return static_cast<double>((static_cast<size_t>(r) * 3 + i) % 4);
}

// Writes `value` into element i of a buffer of `type`.
inline void storeValue(ncclDataType_t type, void* buffer, size_t i, double value) {
  dispatchDataType(type, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (std::is_same_v<T, half>) {
      v = toHalf(static_cast<float>(value));
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      v = toBfloat16(static_cast<float>(value));
    } else if constexpr (std::is_same_v<T, fp8e4m3>) {
      v = toFp8e4m3(static_cast<float>(value));
    } else if constexpr (std::is_same_v<T, fp8e5m2>) {
      v = toFp8e5m2(static_cast<float>(value));
    } else if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(value)));
    } else {
      v = static_cast<T>(value);
    }
    std::memcpy(static_cast<uint8_t*>(buffer) + i * sizeof(T), &v, sizeof(T));
    return 0;
  });
}

inline double loadValue(ncclDataType_t type, const void* buffer, size_t i) {
  return dispatchDataType(type, 0.0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    std::memcpy(&v, static_cast<const uint8_t*>(buffer) + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || std::is_same_v<T, fp8e4m3> ||
                  std::is_same_v<T, fp8e5m2>) {
      return static_cast<double>(toFloat(v));
    } else {
      return static_cast<double>(v);
    }
  });
}

// Integer results as the element type holds them (wrap-around), as a double.
inline double wrapInteger(ncclDataType_t type, uint64_t bits) {
  switch (type) {
    case ncclInt8:
      return static_cast<int8_t>(bits);
    case ncclUint8:
      return static_cast<uint8_t>(bits);
    case ncclInt32:
      return static_cast<int32_t>(bits);
    case ncclUint32:
      return static_cast<uint32_t>(bits);
    case ncclInt64:
      return static_cast<double>(static_cast<int64_t>(bits));
    default:
      return static_cast<double>(bits);
  }
}

// The reduction of element i over all ranks, as the type holds it.
inline double reducedValue(ncclDataType_t type, TestOp op, int nranks, size_t i,
                           double (*value)(ncclDataType_t, TestOp, int, size_t) = inputValue) {
  if (isIntegerType(type)) {
    uint64_t acc = op == TestOp::Prod ? 1 : 0;
    double best = value(type, op, 0, i);
    for (int r = 0; r < nranks; ++r) {
      uint64_t x = static_cast<uint64_t>(value(type, op, r, i));
      acc = op == TestOp::Prod ? acc * x : acc + x;
      best = op == TestOp::Max ? std::max(best, value(type, op, r, i)) : std::min(best, value(type, op, r, i));
    }
    if (op == TestOp::Max || op == TestOp::Min) return best;
    if (op == TestOp::PreMulSum || op == TestOp::PreMulSumAtRun) return wrapInteger(type, acc * 2);
    if (op == TestOp::Avg) return std::trunc(wrapInteger(type, acc) / nranks);
    return wrapInteger(type, acc);
  }
  double acc = op == TestOp::Prod ? 1 : 0;
  double best = value(type, op, 0, i);
  for (int r = 0; r < nranks; ++r) {
    double x = value(type, op, r, i);
    acc = op == TestOp::Prod ? acc * x : acc + x;
    best = op == TestOp::Max ? std::max(best, x) : std::min(best, x);
  }
  if (op == TestOp::Max || op == TestOp::Min) return best;
  if (op == TestOp::PreMulSum || op == TestOp::PreMulSumAtRun) return acc * kPreMulScalar;
  if (op == TestOp::Avg) return acc / nranks;
  return acc;
}

// How far a result may be from the reference: exact, except for floating-point averages.
inline double tolerance(ncclDataType_t type, TestOp op, double expected) {
  if (op != TestOp::Avg || isIntegerType(type)) return 0;
  double relative = 1e-12;
  switch (type) {
    case ncclFloat32:
      relative = 1e-6;
      break;
    case ncclFloat16:
      relative = 4e-3;
      break;
    case ncclBfloat16:
      relative = 3e-2;
      break;
    case ncclFloat8e4m3:
      relative = 0.25;
      break;
    case ncclFloat8e5m2:
      relative = 0.5;
      break;
    default:
      break;
  }
  return relative * std::max(1.0, std::fabs(expected));
}

// The communicator's operator for `op`: a built-in one, or a PreMulSum operator created
// with `scalarValue` (kept in `scalar`, which must outlive it; ncclScalarDevice for
// PreMulSumAtRun). `*created` is the creation's result (ncclSuccess for built-ins).
inline ncclRedOp_t testRedOp(ncclComm_t comm, TestOp op, ncclDataType_t type, double scalarValue,
                             std::vector<uint8_t>* scalar, ncclResult_t* created) {
  *created = ncclSuccess;
  switch (op) {
    case TestOp::Sum:
      return ncclSum;
    case TestOp::Prod:
      return ncclProd;
    case TestOp::Max:
      return ncclMax;
    case TestOp::Min:
      return ncclMin;
    case TestOp::Avg:
      return ncclAvg;
    default:
      break;
  }
  scalar->assign(8, 0);
  storeValue(type, scalar->data(), 0, scalarValue);
  ncclRedOp_t redop = ncclSum;
  ncclScalarResidence_t residence = op == TestOp::PreMulSum ? ncclScalarHostImmediate : ncclScalarDevice;
  *created = ncclRedOpCreatePreMulSum(&redop, scalar->data(), type, residence, comm);
  return redop;
}

}  // namespace braid::test
