# Sources of the IB verbs backend (paths relative to src/). Built when rdma-core's
# headers (libibverbs-dev) are found; libibverbs itself is dlopened, never linked.
list(APPEND BRAID_SOURCES
  transport/net/ib/ib_backend.cc
  transport/net/ib/ib_comm.cc
  transport/net/ib/ib_device.cc
  transport/net/ib/ib_devices.cc
  transport/net/ib/ib_gid.cc
  transport/net/ib/ib_qp.cc
  transport/net/ib/ibv_api.cc
)
