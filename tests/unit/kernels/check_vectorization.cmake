# Fails unless GCC vectorises every host element loop instantiated by vectorization_probe.cc.
# Run by ctest (see CMakeLists.txt):
#   cmake -DCXX=<compiler> -DFLAGS=<CMAKE_CXX_FLAGS> -DSOURCE_DIR=<project> -DPROBE=<probe.cc>
#         -DOUT=<dir> -P check_vectorization.cmake
# The probe instantiates, per type (float, int32, double, half, bfloat16), reduceElements with
# FuncSum (6 loops: 2, 3 or 4 sources, with and without a second destination) and
# copyElements with a pre-op (2 loops), plus FuncMax<float> (6 loops): 46 loops.
set(expected_loops 46)

separate_arguments(flags UNIX_COMMAND "${FLAGS}")
# The options host_reduce.cc is built with (sources.cmake), and the report.
list(APPEND flags -std=c++20 -O3 -fopt-info-vec-all -DBRAID_NCCL_NO_CUDA
     -I${SOURCE_DIR}/src -I${SOURCE_DIR}/include)
execute_process(
  COMMAND ${CXX} ${flags} -c ${PROBE} -o ${OUT}/vectorization_probe.o
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE report)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling the probe failed (${rc}):\n${out}\n${report}")
endif()

# One "loop vectorized" line per vectorised loop, plus one per vectorised epilogue; a loop
# left scalar says "couldn't vectorize loop".
string(REGEX MATCHALL "element_loops\\.h:[0-9]+:[0-9]+: optimized: loop vectorized[^\n]*" vectorized "${report}")
string(REGEX MATCHALL "element_loops\\.h:[0-9]+:[0-9]+: missed: couldn't vectorize loop[^\n]*" missed "${report}")
list(LENGTH vectorized n_vectorized)
list(LENGTH missed n_missed)
if(n_missed GREATER 0 OR n_vectorized LESS expected_loops)
  string(REGEX MATCHALL "element_loops\\.h:[0-9]+:[0-9]+: missed: [^\n]*" reasons "${report}")
  list(REMOVE_DUPLICATES reasons)
  list(JOIN reasons "\n  " reasons)
  message(FATAL_ERROR "GCC left ${n_missed} host element loop(s) scalar (${n_vectorized} 'loop vectorized' "
                      "reports, at least ${expected_loops} expected). GCC's reasons:\n  ${reasons}")
endif()
message(STATUS "${n_vectorized} vectorisation reports, no scalar loop")
