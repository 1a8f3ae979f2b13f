// An ncclComm_t for one torch.distributed process group, made through the group's store,
// and the mapping of torch's dtypes and reduce ops onto Braid's. Knows nothing of
// ProcessGroup or Work: the same code serves every torch version.
#pragma once

#include <nccl.h>

#include <atomic>
#include <chrono>
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
// complex SUM/AVG reduce the real and imaginary parts as two floats.
struct Reduction {
  ncclDataType_t type;
  ncclRedOp_t op;
  size_t countScale;  // elements of `type` per tensor element (2 for complex)
};

// torch's Python name of a dtype ("torch.int16"), for messages.
std::string dtypeName(at::ScalarType dtype);

// Braid's element type for a reduction of `dtype` with `op`; throws a c10::Error naming the
// operation, the dtype and what is supported.
Reduction reductionFor(const char* what, at::ScalarType dtype, const c10d::ReduceOp& op);

class Comm {
 public:
  // Rank 0 creates the unique id and puts it in `store`; the others wait for it there.
  // Init must finish within `timeout` or it is aborted with an error that says which step
  // did not finish.
  Comm(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

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
  ncclComm_t comm_ = nullptr;
  int rank_;
  int size_;
  mutable std::mutex mutex_;
  std::string failure_;  // empty while healthy
  std::atomic<bool> failed_{false};
};

}  // namespace braid::torch_ext
