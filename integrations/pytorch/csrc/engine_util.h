// Argument checks and small helpers shared by the Engine's files (engine.cc,
// engine_coalesced.cc). Inline: each is a few lines.
#pragma once

#include <exception>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "braid_library.h"
#include "comm.h"

namespace braid::torch_ext {

using TensorList = std::vector<at::Tensor>;

// Braid runs on host memory here; the message says where GPU tensors go instead.
inline void checkTensor(const char* what, const at::Tensor& t, bool needContiguous = true) {
  TORCH_CHECK(t.defined(), "braid: ", what, ": a tensor is undefined");
  TORCH_CHECK(t.device().is_cpu(), "braid: ", what, ": tensors must be on the CPU, got one on ", t.device(),
              " (for GPU tensors use the 'nccl' backend, which Braid's libnccl.so.2 also serves)");
  TORCH_CHECK(t.layout() == at::kStrided, "braid: ", what, ": sparse tensors are not supported");
  if (needContiguous) {
    TORCH_CHECK(t.is_contiguous(), "braid: ", what, ": tensors must be contiguous (call .contiguous() first)");
  }
}

inline at::Tensor& single(const char* what, TensorList& tensors) {
  TORCH_CHECK(tensors.size() == 1, "braid: ", what, " takes one tensor per process, got ", tensors.size());
  checkTensor(what, tensors[0]);
  return tensors[0];
}

inline void checkRoot(const char* what, int64_t root, int size) {
  TORCH_CHECK(root >= 0 && root < size, "braid: ", what, ": root rank ", root, " is outside [0, ", size, ")");
}

inline void checkPeer(const char* what, int peer, int rank, int size) {
  TORCH_CHECK(peer >= 0 && peer < size, "braid: ", what, ": peer rank ", peer, " is outside [0, ", size, ")");
  TORCH_CHECK(peer != rank, "braid: ", what, ": rank ", rank, " cannot exchange with itself");
}

inline void checkSame(const char* what, const at::Tensor& t, const at::Tensor& like, const char* role) {
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "braid: ", what, ": ", role, " has dtype ",
              dtypeName(t.scalar_type()), " but the input has ", dtypeName(like.scalar_type()));
  TORCH_CHECK(t.numel() == like.numel(), "braid: ", what, ": ", role, " has ", t.numel(),
              " elements but the input has ", like.numel(), " (sizes must match)");
}

inline size_t bytes(const at::Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

inline char* ptr(const at::Tensor& t) { return static_cast<char*>(t.data_ptr()); }

// Calls of one Braid group; ncclGroupEnd runs even when a call inside failed.
class Group {
 public:
  Group(Comm& comm, const char* what) : comm_(comm), what_(what) { comm_.check(braidLib().ncclGroupStart(), what_); }
  ~Group() noexcept(false) {
    ncclResult_t r = braidLib().ncclGroupEnd();
    if (!std::uncaught_exceptions()) comm_.check(r, what_);
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  Comm& comm_;
  const char* what_;
};

}  // namespace braid::torch_ext
