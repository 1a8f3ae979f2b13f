#include "core/enqueue/red_op_registry.h"

#include <cstring>

#include "kernels/reduce/numeric_types.h"
#include "util/format.h"

namespace braid {

namespace {

bool isIntegerType(ncclDataType_t type) {
  return dispatchDataType(type, false, [](auto tag) { return TypeInfo<typename decltype(tag)::type>::kIsInteger; });
}

template <typename T>
T fromDouble(double value) {
  if constexpr (std::is_same_v<T, half>) {
    return toHalf(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return toBfloat16(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, fp8e4m3>) {
    return toFp8e4m3(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, fp8e5m2>) {
    return toFp8e5m2(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

}  // namespace

uint64_t scalarBitsOf(ncclDataType_t type, double value) {
  uint64_t bits = 0;
  dispatchDataType(type, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T converted = fromDouble<T>(value);
    std::memcpy(&bits, &converted, sizeof(T));
    return 0;
  });
  return bits;
}

Status RedOpRegistry::create(const void* scalar, ncclDataType_t type, ncclScalarResidence_t residence,
                             ncclRedOp_t* op) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t index = 0;
  while (index < entries_.size() && entries_[index].live) ++index;
  if (index == entries_.size()) {
    if (entries_.size() >= static_cast<size_t>(ncclMaxRedOp - ncclNumOps)) {
      return BRAID_ERROR(ncclInvalidUsage, "ncclRedOpCreatePreMulSum: too many live operators on this communicator");
    }
    entries_.emplace_back();
  }
  Entry& entry = entries_[index];
  entry.live = true;
  entry.type = type;
  entry.residence = residence;
  entry.scalarPtr = residence == ncclScalarDevice ? scalar : nullptr;
  entry.scalarBits = 0;
  if (residence == ncclScalarHostImmediate) std::memcpy(&entry.scalarBits, scalar, dataTypeSize(type));
  *op = static_cast<ncclRedOp_t>(ncclNumOps + static_cast<int>(index));
  return okStatus();
}

Status RedOpRegistry::destroy(ncclRedOp_t op) {
  std::lock_guard<std::mutex> lock(mutex_);
  int index = static_cast<int>(op) - ncclNumOps;
  if (op < ncclNumOps) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclRedOpDestroy: %d is a built-in operator, not one made by "
                       "ncclRedOpCreatePreMulSum",
                       static_cast<int>(op));
  }
  if (index < 0 || index >= static_cast<int>(entries_.size()) || !entries_[static_cast<size_t>(index)].live) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclRedOpDestroy: operator %d was not created on this communicator (or "
                       "was destroyed already)",
                       static_cast<int>(op));
  }
  entries_[static_cast<size_t>(index)].live = false;
  return okStatus();
}

Status RedOpRegistry::resolve(ncclRedOp_t op, ncclDataType_t type, int nranks, const char* fn, ResolvedOp* out) const {
  ResolvedOp resolved;
  switch (op) {
    case ncclSum:
      resolved.kind = RedOpKind::Sum;
      break;
    case ncclProd:
      resolved.kind = RedOpKind::Prod;
      break;
    case ncclMax:
      resolved.kind = RedOpKind::Max;
      break;
    case ncclMin:
      resolved.kind = RedOpKind::Min;
      break;
    case ncclAvg:
      if (isIntegerType(type)) {
        resolved.kind = RedOpKind::SumPostDiv;
        resolved.arg = static_cast<uint64_t>(nranks);
      } else {
        resolved.kind = RedOpKind::PreMulSum;
        resolved.arg = scalarBitsOf(type, 1.0 / nranks);
      }
      break;
    default: {
      std::lock_guard<std::mutex> lock(mutex_);
      int index = static_cast<int>(op) - ncclNumOps;
      if (index < 0 || index >= static_cast<int>(entries_.size()) || !entries_[static_cast<size_t>(index)].live) {
        return BRAID_ERROR(ncclInvalidArgument,
                           "%s: op=%d is neither a built-in operator nor one created by "
                           "ncclRedOpCreatePreMulSum on this communicator",
                           fn, static_cast<int>(op));
      }
      const Entry& entry = entries_[static_cast<size_t>(index)];
      if (entry.type != type) {
        return BRAID_ERROR(ncclInvalidArgument, "%s: operator %d was created for %s but the collective uses %s", fn,
                           static_cast<int>(op), dataTypeName(entry.type), dataTypeName(type));
      }
      resolved.kind = RedOpKind::PreMulSum;
      resolved.arg = entry.scalarBits;
      resolved.scalarAtRun = entry.scalarPtr;
    }
  }
  *out = resolved;
  return okStatus();
}

}  // namespace braid
