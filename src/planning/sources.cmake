# Sources of src/planning (paths relative to src/).
list(APPEND BRAID_SOURCES
  planning/alg_selection.cc
  planning/algo_proto.cc
  planning/cpu_sharing.cc
  planning/rank_layout.cc
  planning/ring.cc
  planning/tree.cc
  planning/tuning.cc
)
