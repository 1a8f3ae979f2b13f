#include "comm.h"

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <c10/util/Exception.h>

#include "braid_library.h"

namespace braid::torch_ext {

namespace {

// The store given to a backend is already prefixed per process group, so one key per
// group is enough.
constexpr const char* kUniqueIdKey = "braid_unique_id";

std::string lastError(ncclComm_t comm, ncclResult_t result) {
  const char* text = braidLib().ncclGetLastError(comm);
  std::string message = text && *text ? text : braidLib().ncclGetErrorString(result);
  return message + " (" + braidLib().ncclGetErrorString(result) + ")";
}

const char* opName(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM:
      return "SUM";
    case c10d::ReduceOp::AVG:
      return "AVG";
    case c10d::ReduceOp::PRODUCT:
      return "PRODUCT";
    case c10d::ReduceOp::MIN:
      return "MIN";
    case c10d::ReduceOp::MAX:
      return "MAX";
    case c10d::ReduceOp::BAND:
      return "BAND";
    case c10d::ReduceOp::BOR:
      return "BOR";
    case c10d::ReduceOp::BXOR:
      return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM:
      return "PREMUL_SUM";
    default:
      return "UNUSED";
  }
}

std::string secondsText(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", std::chrono::duration<double>(d).count());
  return text;
}

}  // namespace

namespace {

// PREMUL_SUM (torch.distributed._make_nccl_premul_sum): sum of factor * x, for the
// floating types, as PyTorch's NCCL backend offers it.
Reduction preMulSumFor(const char* what, at::ScalarType dtype, const c10d::ReduceOp& reduceOp) {
  ncclDataType_t type;
  switch (dtype) {
    case at::kHalf:
      type = ncclFloat16;
      break;
    case at::kBFloat16:
      type = ncclBfloat16;
      break;
    case at::kFloat:
      type = ncclFloat32;
      break;
    case at::kDouble:
      type = ncclFloat64;
      break;
    default:
      TORCH_CHECK(false, "braid: ", what, ": ReduceOp.PREMUL_SUM takes float16, bfloat16, float32 or float64, not ",
                  dtypeName(dtype));
  }
  const auto* supplement = dynamic_cast<const c10d::PreMulSumSupplement*>(reduceOp.supplement_.get());
  TORCH_CHECK(supplement, "braid: ", what, ": ReduceOp.PREMUL_SUM without its factor");
  at::Tensor factor;
  if (supplement->tensor_factor.defined()) {
    TORCH_CHECK(supplement->tensor_factor.numel() == 1, "braid: ", what,
                ": the PREMUL_SUM factor must have one element, it has ", supplement->tensor_factor.numel());
    factor = supplement->tensor_factor.detach().to(at::kCPU, dtype).reshape({1}).contiguous();
  } else {
    factor = at::full({1}, supplement->double_factor, at::TensorOptions().dtype(dtype));
  }
  return {type, ncclSum, 1, factor};
}

}  // namespace

ScopedRedOp::ScopedRedOp(Comm& comm, const Reduction& reduction, const char* what) : comm_(comm), op_(reduction.op) {
  if (!reduction.premulFactor.defined()) return;
  comm_.check(braidLib().ncclRedOpCreatePreMulSum(&op_, reduction.premulFactor.data_ptr(), reduction.type,
                                                  ncclScalarHostImmediate, comm_.get()),
              what);
  created_ = true;
}

ScopedRedOp::~ScopedRedOp() {
  if (created_) braidLib().ncclRedOpDestroy(op_, comm_.get());
}

std::string dtypeName(at::ScalarType dtype) {
  switch (dtype) {
    case at::kByte:
      return "torch.uint8";
    case at::kChar:
      return "torch.int8";
    case at::kShort:
      return "torch.int16";
    case at::kInt:
      return "torch.int32";
    case at::kLong:
      return "torch.int64";
    case at::kHalf:
      return "torch.float16";
    case at::kFloat:
      return "torch.float32";
    case at::kDouble:
      return "torch.float64";
    case at::kBFloat16:
      return "torch.bfloat16";
    case at::kBool:
      return "torch.bool";
    case at::kComplexHalf:
      return "torch.complex32";
    case at::kComplexFloat:
      return "torch.complex64";
    case at::kComplexDouble:
      return "torch.complex128";
    default:
      return std::string("torch.") + c10::toString(dtype);
  }
}

Reduction reductionFor(const char* what, at::ScalarType dtype, const c10d::ReduceOp& reduceOp) {
  const c10d::ReduceOp::RedOpType op = reduceOp;
  ncclRedOp_t nccl;
  switch (op) {
    case c10d::ReduceOp::SUM:
      nccl = ncclSum;
      break;
    case c10d::ReduceOp::AVG:
      nccl = ncclAvg;
      break;
    case c10d::ReduceOp::PRODUCT:
      nccl = ncclProd;
      break;
    case c10d::ReduceOp::MIN:
      nccl = ncclMin;
      break;
    case c10d::ReduceOp::MAX:
      nccl = ncclMax;
      break;
    case c10d::ReduceOp::PREMUL_SUM:
      return preMulSumFor(what, dtype, reduceOp);
    default:
      TORCH_CHECK(false, "braid: ", what, ": ReduceOp.", opName(op),
                  " is not supported (Braid reduces with SUM, AVG, PRODUCT, MIN, MAX and PREMUL_SUM)");
  }
  switch (dtype) {
    case at::kByte:
      return {ncclUint8, nccl, 1, {}};
    case at::kChar:
      return {ncclInt8, nccl, 1, {}};
    case at::kInt:
      return {ncclInt32, nccl, 1, {}};
    case at::kLong:
      return {ncclInt64, nccl, 1, {}};
    case at::kHalf:
      return {ncclFloat16, nccl, 1, {}};
    case at::kBFloat16:
      return {ncclBfloat16, nccl, 1, {}};
    case at::kFloat:
      return {ncclFloat32, nccl, 1, {}};
    case at::kDouble:
      return {ncclFloat64, nccl, 1, {}};
    case at::kBool:
      // As PyTorch's NCCL backend: logical or/and over bytes that are 0 or 1.
      TORCH_CHECK(op != c10d::ReduceOp::AVG, "braid: ", what, ": ReduceOp.AVG is not defined for torch.bool");
      if (nccl == ncclSum) nccl = ncclMax;
      if (nccl == ncclProd) nccl = ncclMin;
      return {ncclUint8, nccl, 1, {}};
    case at::kComplexFloat:
    case at::kComplexDouble:
      TORCH_CHECK(nccl == ncclSum || nccl == ncclAvg, "braid: ", what, ": ReduceOp.", opName(op),
                  " is not defined for complex tensors (SUM and AVG are)");
      return {dtype == at::kComplexFloat ? ncclFloat32 : ncclFloat64, nccl, 2, {}};
    default:
      TORCH_CHECK(false, "braid: ", what, ": dtype ", dtypeName(dtype),
                  " cannot be reduced (Braid reduces uint8, int8, int32, int64, float16, bfloat16, float32, "
                  "float64, and bool and complex through those)");
  }
}

Comm::Comm(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout)
    : rank_(rank), size_(size) {
  TORCH_CHECK(size >= 1, "braid: world size must be at least 1 (got ", size, ")");
  TORCH_CHECK(rank >= 0 && rank < size, "braid: rank ", rank, " is outside [0, ", size, ")");
  TORCH_CHECK(store, "braid: the process group needs a store");
  const auto deadline = std::chrono::steady_clock::now() + timeout;

  ncclUniqueId id;
  if (rank == 0) {
    ncclResult_t r = braidLib().ncclGetUniqueId(&id);
    if (r != ncclSuccess) throw BraidError("braid: ncclGetUniqueId failed: " + lastError(nullptr, r));
    const auto* bytes = reinterpret_cast<const uint8_t*>(&id);
    store->set(kUniqueIdKey, std::vector<uint8_t>(bytes, bytes + sizeof(id)));
  } else {
    try {
      store->wait({kUniqueIdKey}, timeout);
    } catch (const c10::Error& e) {
      throw BraidError("braid: rank " + std::to_string(rank) + " did not get the communicator id from rank 0 within " +
                       secondsText(timeout) +
                       " (is rank 0 alive and in init_process_group(\"braid\")?): " + e.what_without_backtrace());
    }
    std::vector<uint8_t> bytes = store->get(kUniqueIdKey);
    TORCH_CHECK(bytes.size() == sizeof(id), "braid: the store holds a communicator id of ", bytes.size(),
                " bytes instead of ", sizeof(id), "; is another job using the same store?");
    std::memcpy(&id, bytes.data(), sizeof(id));
  }

  // Non-blocking init, so that it can be given up after `timeout` whatever Braid's own
  // bootstrap timeout is. Host mode for this communicator: the backend moves CPU tensors,
  // and the same process may use Braid as NCCL for its GPU tensors, so BRAID_DEVICE (which
  // would switch the whole process) is left alone.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t r = braidLib().braidCommInitRankHost(&comm_, size, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    std::string message = lastError(comm_, r);
    if (comm_) braidLib().ncclCommAbort(comm_);
    comm_ = nullptr;
    throw BraidError("braid: braidCommInitRankHost failed: " + message);
  }
  awaitReady(deadline, timeout, "init");
}

void Comm::awaitReady(std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout,
                      const std::string& what) {
  for (;;) {
    ncclResult_t state = ncclInProgress;
    ncclResult_t r = braidLib().ncclCommGetAsyncError(comm_, &state);
    if (r != ncclSuccess) state = r;
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) {
      std::string message = lastError(comm_, state);
      braidLib().ncclCommAbort(comm_);
      comm_ = nullptr;
      throw BraidError("braid: rank " + std::to_string(rank_) + " could not join the communicator of " +
                       std::to_string(size_) + " ranks (" + what + "): " + message);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      braidLib().ncclCommAbort(comm_);
      comm_ = nullptr;
      throw BraidError("braid: rank " + std::to_string(rank_) + ": the communicator of " + std::to_string(size_) +
                       " ranks (" + what + ") was not complete within the process group's timeout of " +
                       secondsText(timeout) + " (did every rank call init_process_group(\"braid\")?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::unique_ptr<Comm> Comm::split(int color, int key, std::chrono::milliseconds timeout) {
  checkHealthy("split");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  // A rank that is in no new group gets no communicator to poll: it takes part in the
  // parent's exchange in a blocking call, which ends when the members have made theirs.
  config.blocking = color == NCCL_SPLIT_NOCOLOR ? 1 : 0;
  ncclComm_t child = nullptr;
  ncclResult_t r = braidLib().ncclCommSplit(comm_, color, key, &child, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    std::string message = lastError(comm_, r);
    if (child) braidLib().ncclCommAbort(child);
    throw BraidError("braid: ncclCommSplit failed on rank " + std::to_string(rank_) + ": " + message);
  }
  if (!child) return nullptr;
  int childRank = -1, childSize = 0;
  // Rank and size are known once the split completed; poll with the child as a Comm.
  std::unique_ptr<Comm> result(new Comm(child, rank_, size_));
  result->awaitReady(deadline, timeout, "split of color " + std::to_string(color));
  if (braidLib().ncclCommUserRank(child, &childRank) != ncclSuccess ||
      braidLib().ncclCommCount(child, &childSize) != ncclSuccess) {
    throw BraidError("braid: the communicator split from rank " + std::to_string(rank_) +
                     " cannot say its rank and size: " + lastError(child, ncclInvalidUsage));
  }
  result->rank_ = childRank;
  result->size_ = childSize;
  return result;
}

Comm::~Comm() {
  if (!comm_) return;
  // A failed communicator may have peers that are gone: abort rather than finalize.
  if (failed_.load()) {
    braidLib().ncclCommAbort(comm_);
  } else if (braidLib().ncclCommDestroy(comm_) != ncclSuccess) {
    braidLib().ncclCommAbort(comm_);
  }
}

void Comm::check(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return;
  std::string message =
      std::string("braid: ") + what + " failed on rank " + std::to_string(rank_) + ": " + lastError(comm_, result);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) failure_ = message;
  }
  failed_.store(true);
  throw BraidError(message);
}

std::string Comm::markFailed(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_.empty()) failure_ = reason;
  failed_.store(true);
  return failure_;
}

void Comm::checkHealthy(const char* what) const {
  if (!failed_.load()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  throw BraidError(std::string("braid: ") + what + ": the communicator failed earlier and cannot be used: " + failure_);
}

}  // namespace braid::torch_ext
