// What module.cc needs from the version-specific class: a factory that returns the
// object torch.distributed expects from a backend creator.
#pragma once

#include <chrono>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace braid::torch_ext {

// torch 1.x: a c10d::ProcessGroup whose operations run on Braid.
c10::intrusive_ptr<c10d::ProcessGroup> createProcessGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                          int size, std::chrono::milliseconds timeout);

}  // namespace braid::torch_ext
