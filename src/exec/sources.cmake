# Sources of src/exec (paths relative to src/). The host reductions are instantiated in
# one generated translation unit per element type, compiled at -O3 so that the element
# loops vectorise.
list(APPEND BRAID_SOURCES
  exec/cuda/gpu_executor.cc
  exec/cuda/p2p_batches.cc
  exec/host/channel_workers.cc
  exec/host/coll_dispatch.cc
  exec/host/direct_collectives.cc
  exec/host/host_executor.cc
  exec/host/local_collective.cc
  exec/host/p2p_engine.cc
  exec/host/window_collectives.cc
  exec/wait_report.cc
  exec/work.cc
)
set(_braid_dispatch_types
  "int8:int8_t" "uint8:uint8_t" "int32:int32_t" "uint32:uint32_t" "int64:int64_t" "uint64:uint64_t"
  "half:half" "float:float" "double:double" "bfloat16:bfloat16" "fp8e4m3:fp8e4m3" "fp8e5m2:fp8e5m2")
foreach(_pair IN LISTS _braid_dispatch_types)
  string(REPLACE ":" ";" _parts "${_pair}")
  list(GET _parts 0 BRAID_TYPE_SUFFIX)
  list(GET _parts 1 BRAID_TYPE_CXX)
  set(_generated ${CMAKE_CURRENT_BINARY_DIR}/exec/host/dispatch_${BRAID_TYPE_SUFFIX}.cc)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/host/dispatch_type.cc.in ${_generated} @ONLY)
  list(APPEND BRAID_SOURCES ${_generated})
  # Each instantiates every schedule for its type: heavy enough to be a compile job of its
  # own (a unity batch of them would leave the other core idle).
  set_source_files_properties(${_generated} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  if(NOT BRAID_SANITIZE)  # sanitizer builds check behaviour, not speed: keep them quick to build
    set_source_files_properties(${_generated} PROPERTIES COMPILE_OPTIONS "-O3")
  endif()
endforeach()
if(NOT BRAID_SANITIZE)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/host/coll_dispatch.cc PROPERTIES COMPILE_OPTIONS "-O3")
endif()
