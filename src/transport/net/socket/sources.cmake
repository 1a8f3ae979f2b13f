# Sources of the socket backend (paths relative to src/).
list(APPEND BRAID_SOURCES
  transport/net/socket/chunk_lane.cc
  transport/net/socket/chunk_pump.cc
  transport/net/socket/socket_backend.cc
  transport/net/socket/socket_connection.cc
  transport/net/socket/socket_connector.cc
  transport/net/socket/socket_listener.cc
  transport/net/socket/socket_wire.cc
)
