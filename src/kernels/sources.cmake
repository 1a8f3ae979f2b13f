# Sources of src/kernels (paths relative to src/).
list(APPEND BRAID_SOURCES
  kernels/reduce/host_reduce.cc
)

# The host element loops (kernels/reduce/element_loops.h) are written for GCC's
# auto-vectoriser, which GCC 12 runs with a useful cost model only at -O3 (at -O2 it skips
# loops with a run-time trip count or a run-time alias check, i.e. all of them). Debug
# builds keep their -O0, and sanitizer builds their -O1 (cmake/BraidSanitizers.cmake).
if(NOT BRAID_SANITIZE)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/reduce/host_reduce.cc PROPERTIES
    COMPILE_OPTIONS "$<$<NOT:$<CONFIG:Debug>>:-O3>")
endif()

# The vector kernels of the narrow floats (reduce/narrow_simd.h). Their functions carry
# target attributes, so the files need no -m flags; but the instruction sets they enable
# include FMA, and GCC contracts a * b + c into an FMA even in ISO C++ mode (changing the
# rounding), so they are compiled without contraction. Each defines the macros that
# reduce/narrow_simd_loops.h is instantiated with, so they stay out of unity batches.
set(_braid_narrow_simd_sources
  ${CMAKE_CURRENT_LIST_DIR}/reduce/narrow_simd_avx2.cc
  ${CMAKE_CURRENT_LIST_DIR}/reduce/narrow_simd_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/reduce/narrow_simd_avx512_bf16.cc
  ${CMAKE_CURRENT_LIST_DIR}/reduce/narrow_simd_avx512_vbmi.cc
  ${CMAKE_CURRENT_LIST_DIR}/reduce/narrow_simd_avx512_fp16.cc)
list(APPEND BRAID_SOURCES kernels/reduce/narrow_simd.cc ${_braid_narrow_simd_sources})
set_source_files_properties(${_braid_narrow_simd_sources} PROPERTIES
  SKIP_UNITY_BUILD_INCLUSION ON
  COMPILE_OPTIONS "-ffp-contract=off")
