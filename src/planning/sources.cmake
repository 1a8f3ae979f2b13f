# Sources of src/algorithms (paths relative to src/).
list(APPEND BRAID_SOURCES
  algorithms/alg_selection.cc
  algorithms/algo_proto.cc
  algorithms/ring.cc
  algorithms/tree.cc
  algorithms/tuning.cc
)
