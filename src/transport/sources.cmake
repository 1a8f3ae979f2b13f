# Sources of src/transport (paths relative to src/).
include(transport/net/socket/sources.cmake)
if(BRAID_IB_ENABLED)
  include(transport/net/ib/sources.cmake)
endif()
list(APPEND BRAID_SOURCES
  transport/connection_setup.cc
  transport/cuda_ipc/cuda_ipc_transport.cc
  transport/shm/shm_board.cc
  transport/shm/shm_segment.cc
  transport/shm/shm_transport.cc
  transport/net/backend_choice.cc
  transport/net/net_transport.cc
  transport/net/proxy.cc
)
