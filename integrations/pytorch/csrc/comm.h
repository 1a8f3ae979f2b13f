// An ncclComm_t for one torch.distributed process group, made through the group's store,
// and the mapping of torch's dtypes and reduce ops onto Braid's. Knows nothing of
// ProcessGroup or Work: the same code serves every torch version.
#pragma once

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>

namespace braid::torch_ext {

// Thrown for a failed Braid call; the message is Braid's ncclGetLastError sentence.
class BraidError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A reduction as Braid runs it: bool SUM is a uint8 MAX (as in PyTorch's NCCL backend),
// complex SUM/AVG reduce the real and imaginary parts as two floats, PREMUL_SUM is Braid's
// ncclRedOpCreatePreMulSum with the factor converted to the reduced type.
struct Reduction {
  ncclDataType_t type;
  ncclRedOp_t op;
  size_t countScale;        // elements of `type` per tensor element (2 for complex)
  at::Tensor premulFactor;  // PREMUL_SUM only: one element of the reduced type, on the CPU
};

// torch's Python name of a dtype ("torch.int16"), for messages.
std::string dtypeName(at::ScalarType dtype);

// Braid's element type for a reduction of `dtype` with `op`; throws a c10::Error naming the
// operation, the dtype and what is supported.
Reduction reductionFor(const char* what, at::ScalarType dtype, const c10d::ReduceOp& op);

class Comm;

// The ncclRedOp_t of a Reduction for one call on `comm`: PREMUL_SUM's op is created for
// the call and destroyed after it, the others are Braid's built-in ops.
class ScopedRedOp {
 public:
  ScopedRedOp(Comm& comm, const Reduction& reduction, const char* what);
  ~ScopedRedOp();
  ScopedRedOp(const ScopedRedOp&) = delete;
  ScopedRedOp& operator=(const ScopedRedOp&) = delete;
  ncclRedOp_t get() const { return op_; }

 private:
  Comm& comm_;
  ncclRedOp_t op_;
  bool created_ = false;
};

class Comm {
 public:
  // Rank 0 creates the unique id and puts it in `store`; the others wait for it there.
  // Init must finish within `timeout` or it is aborted with an error that says which step
  // did not finish.
  Comm(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // ncclCommSplit of this communicator (every rank of it calls this, in the same order
  // relative to its other operations): the member of the ranks with `color`, ordered by
  // `key`, or null for NCCL_SPLIT_NOCOLOR. A member's split must finish within `timeout`.
  std::unique_ptr<Comm> split(int color, int key, std::chrono::milliseconds timeout);

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  // Throws BraidError when `result` is an error (and remembers the communicator as failed:
  // later calls fail at once with the first reason).
  void check(ncclResult_t result, const char* what);
  // Records a failure seen outside Braid (a peer that stopped answering); returns the
  // message that later calls will repeat.
  std::string markFailed(const std::string& reason);
  // Throws the first failure again, if there was one.
  void checkHealthy(const char* what) const;

 private:
  Comm(ncclComm_t comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  // Polls a non-blocking init or split of comm_ until it completes, fails, or `deadline`
  // passes (then aborts it); `what` names the step in the error.
  void awaitReady(std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout,
                  const std::string& what);

  ncclComm_t comm_ = nullptr;
  int rank_;
  int size_;
  mutable std::mutex mutex_;
  std::string failure_;  // empty while healthy
  std::atomic<bool> failed_{false};
};

}  // namespace braid::torch_ext
