# Windows and one-sided operations (paths relative to src/).
list(APPEND BRAID_SOURCES
  core/rma/lsa_team.cc
  core/rma/one_sided.cc
  core/rma/rma_board.cc
  core/rma/rma_calls.cc
  core/rma/rma_links.cc
  core/rma/rma_service.cc
  core/rma/rma_state.cc
  core/rma/rma_wire.cc
  core/rma/window.cc
  core/rma/window_ops.cc
)
