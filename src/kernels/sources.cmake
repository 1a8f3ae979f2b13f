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
