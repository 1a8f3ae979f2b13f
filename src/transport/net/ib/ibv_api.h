// libibverbs, loaded at run time. Braid never links against libibverbs: it dlopens
// "libibverbs.so.1" the first time the IB backend is wanted and looks up the few entry
// points it needs into an IbvApi table, so that libnccl.so.2 loads on any machine and
// falls back to sockets (with an INFO line saying why) where rdma-core is absent.
//
// Only types and inline helpers come from <infiniband/verbs.h>. Posting work requests and
// polling completions are inline in that header (they call through the context's ops), so
// the data path needs no symbols; everything else goes through this table.
#pragma once

#include <infiniband/verbs.h>

#include <string>

#include "util/status.h"

namespace braid {

struct IbvApi {
  ibv_device** (*getDeviceList)(int* count) = nullptr;
  void (*freeDeviceList)(ibv_device** list) = nullptr;
  const char* (*getDeviceName)(ibv_device* device) = nullptr;
  ibv_context* (*openDevice)(ibv_device* device) = nullptr;
  int (*closeDevice)(ibv_context* context) = nullptr;
  int (*queryDevice)(ibv_context* context, ibv_device_attr* attr) = nullptr;
  // The exported compat entry point; use queryPort() below, which prefers the extended op.
  int (*queryPortCompat)(ibv_context* context, uint8_t port, ibv_port_attr* attr) = nullptr;
  int (*queryGid)(ibv_context* context, uint8_t port, int index, ibv_gid* gid) = nullptr;
  ibv_pd* (*allocPd)(ibv_context* context) = nullptr;
  int (*deallocPd)(ibv_pd* pd) = nullptr;
  ibv_mr* (*regMr)(ibv_pd* pd, void* addr, size_t length, int access) = nullptr;
  int (*deregMr)(ibv_mr* mr) = nullptr;
  ibv_cq* (*createCq)(ibv_context* context, int cqe, void* cqContext, ibv_comp_channel* channel,
                      int compVector) = nullptr;
  int (*destroyCq)(ibv_cq* cq) = nullptr;
  ibv_qp* (*createQp)(ibv_pd* pd, ibv_qp_init_attr* attr) = nullptr;
  int (*modifyQp)(ibv_qp* qp, ibv_qp_attr* attr, int mask) = nullptr;
  int (*destroyQp)(ibv_qp* qp) = nullptr;
  const char* (*wcStatusStr)(ibv_wc_status status) = nullptr;

  // ibv_query_port as the header's inline wrapper does it, without its symbol.
  int queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const;
};

// Loads the table once per process. On failure returns ncclSystemError with the reason
// (library missing, symbol missing) and keeps returning it; never crashes. `libraryName`
// is for tests (a library that does not exist, or lacks symbols).
Status loadIbvApi(const IbvApi** out, const char* libraryName = "libibverbs.so.1");

// Text of a work-completion status ("transport retry counter exceeded"), also when the
// table could not provide ibv_wc_status_str.
std::string ibvStatusText(const IbvApi* api, int status);

}  // namespace braid
