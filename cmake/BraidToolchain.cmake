# Build speed: unity builds, a compiler cache and a fast linker, when the machine has them.
# None changes what is built; each can be turned off (BRAID_UNITY_BUILD=OFF,
# BRAID_CCACHE=OFF, BRAID_LINKER=default).

# Unity builds: host C/C++ sources compiled in batches of 8 per translation unit, so the
# standard library and GoogleTest headers are parsed once per batch instead of once per
# file (about half the CPU time of a full build). Sources with their own compile options
# (the -O3 element loops) stay alone. A file must therefore not define, at namespace scope,
# a name that another file of its target defines too (anonymous namespaces included).
option(BRAID_UNITY_BUILD "Compile host sources in batches (unity build)" ON)
set(CMAKE_UNITY_BUILD ${BRAID_UNITY_BUILD})
set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)

# ccache. scripts/build.sh sets its base directory to the checkout, so a clean clone in
# another directory hits the objects an earlier build on this machine left in the cache.
set(BRAID_CCACHE "AUTO" CACHE STRING "Compile through ccache: AUTO (when found), ON or OFF")
set_property(CACHE BRAID_CCACHE PROPERTY STRINGS AUTO ON OFF)
if(NOT BRAID_CCACHE STREQUAL "OFF")
  find_program(BRAID_CCACHE_PROGRAM ccache)
  if(BRAID_CCACHE_PROGRAM)
    foreach(_lang C CXX CUDA)
      if(NOT CMAKE_${_lang}_COMPILER_LAUNCHER)
        set(CMAKE_${_lang}_COMPILER_LAUNCHER ${BRAID_CCACHE_PROGRAM})
      endif()
    endforeach()
  elseif(BRAID_CCACHE STREQUAL "ON")
    message(FATAL_ERROR "BRAID_CCACHE=ON but ccache was not found (apt-get install ccache)")
  endif()
endif()

# The linker: mold, else lld, else the compiler's default. Every test program links the
# whole library's objects, so linking is a visible share of a build.
set(BRAID_LINKER "AUTO" CACHE STRING "Linker: AUTO (mold, else lld, else default), mold, lld or default")
set_property(CACHE BRAID_LINKER PROPERTY STRINGS AUTO mold lld default)
set(BRAID_LINKER_USED default)
if(BRAID_LINKER STREQUAL "AUTO")
  find_program(BRAID_MOLD_PROGRAM mold)
  find_program(BRAID_LLD_PROGRAM NAMES ld.lld)
  if(BRAID_MOLD_PROGRAM)
    set(BRAID_LINKER_USED mold)
  elseif(BRAID_LLD_PROGRAM)
    set(BRAID_LINKER_USED lld)
  endif()
elseif(NOT BRAID_LINKER STREQUAL "default")
  set(BRAID_LINKER_USED ${BRAID_LINKER})
endif()
if(NOT BRAID_LINKER_USED STREQUAL "default")
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=${BRAID_LINKER_USED}" BRAID_LINKER_WORKS_${BRAID_LINKER_USED})
  if(BRAID_LINKER_WORKS_${BRAID_LINKER_USED})
    add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fuse-ld=${BRAID_LINKER_USED}>")
  else()
    set(BRAID_LINKER_USED default)
  endif()
endif()
