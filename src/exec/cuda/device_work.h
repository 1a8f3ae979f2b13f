// What one kernel launch gives a block (a channel): the schedule and the collective's
// arguments. Trivially copyable: it travels as a kernel parameter.
#pragma once

#include <type_traits>

#include "kernels/algorithms/schedule_args.h"

namespace braid {

struct DeviceCollWork {
  RingSchedule ring;
  TreeSchedule tree;
  Share share;
  const void* send;
  void* recv;
  size_t segment;
  int rootIndex;
  uint64_t opArg;  // PreMulSum scalar bits or SumPostDiv divisor
  const volatile uint32_t* abortFlag;
};
static_assert(std::is_trivially_copyable<DeviceCollWork>::value, "kernel parameters must be trivially copyable");

}  // namespace braid
