# Sources of src/platform (paths relative to src/): what transport and exec both stand on
# (futex waits, shared counters, CUDA checks, device memory owners).
list(APPEND BRAID_SOURCES
  platform/asymmetric_fence.cc
  platform/futex.cc
  platform/spin_budget.cc
)
# The device memory owners call the CUDA runtime: only in builds with CUDA.
if(BRAID_CUDA_ENABLED)
  list(APPEND BRAID_SOURCES platform/device_memory.cc)
endif()
