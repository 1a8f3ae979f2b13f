#include "transport/net/ib/ibv_api.h"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <mutex>

#include "util/format.h"
#include "util/log.h"

namespace braid {

int IbvApi::queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const {
  // Same logic as ___ibv_query_port in verbs.h: the extended op when the provider has it
  // (it fills the whole, newer struct), else the compat entry point on a zeroed struct.
  verbs_context* vctx = verbs_get_ctx_op(context, query_port);
  if (!vctx) {
    std::memset(attr, 0, sizeof(*attr));
    return queryPortCompat(context, port, attr);
  }
  return vctx->query_port(context, port, attr, sizeof(*attr));
}

namespace {

struct Loaded {
  IbvApi api;
  Status status;
};

template <typename Fn>
bool bind(void* library, const char* symbol, Fn* slot, std::string* missing) {
  void* address = dlsym(library, symbol);
  if (!address) {
    if (!missing->empty()) *missing += ", ";
    *missing += symbol;
    return false;
  }
  *slot = reinterpret_cast<Fn>(address);
  return true;
}

Status load(const char* libraryName, IbvApi* api) {
  // RTLD_NODELETE: providers and QPs may outlive any one user; never unload.
  void* library = dlopen(libraryName, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!library) {
    const char* why = dlerror();
    return Status(ncclSystemError, strFormat("cannot load %s (%s); is rdma-core's libibverbs1 installed?", libraryName,
                                             why ? why : "unknown reason"));
  }
  std::string missing;
  bind(library, "ibv_get_device_list", &api->getDeviceList, &missing);
  bind(library, "ibv_free_device_list", &api->freeDeviceList, &missing);
  bind(library, "ibv_get_device_name", &api->getDeviceName, &missing);
  bind(library, "ibv_open_device", &api->openDevice, &missing);
  bind(library, "ibv_close_device", &api->closeDevice, &missing);
  bind(library, "ibv_query_device", &api->queryDevice, &missing);
  bind(library, "ibv_query_port", &api->queryPortCompat, &missing);
  bind(library, "ibv_query_gid", &api->queryGid, &missing);
  bind(library, "ibv_alloc_pd", &api->allocPd, &missing);
  bind(library, "ibv_dealloc_pd", &api->deallocPd, &missing);
  bind(library, "ibv_reg_mr", &api->regMr, &missing);
  bind(library, "ibv_dereg_mr", &api->deregMr, &missing);
  bind(library, "ibv_create_cq", &api->createCq, &missing);
  bind(library, "ibv_destroy_cq", &api->destroyCq, &missing);
  bind(library, "ibv_create_qp", &api->createQp, &missing);
  bind(library, "ibv_modify_qp", &api->modifyQp, &missing);
  bind(library, "ibv_destroy_qp", &api->destroyQp, &missing);
  bind(library, "ibv_wc_status_str", &api->wcStatusStr, &missing);
  if (!missing.empty()) {
    return Status(ncclSystemError, strFormat("%s lacks %s (too old a libibverbs?)", libraryName, missing.c_str()));
  }
  return okStatus();
}

}  // namespace

Status loadIbvApi(const IbvApi** out, const char* libraryName) {
  static std::mutex mutex;
  static std::map<std::string, Loaded>* loaded = new std::map<std::string, Loaded>();  // never freed: outlives users
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded->find(libraryName);
  if (it == loaded->end()) {
    Loaded entry;
    entry.status = load(libraryName, &entry.api);
    it = loaded->emplace(libraryName, std::move(entry)).first;
  }
  *out = it->second.status.ok() ? &it->second.api : nullptr;
  return it->second.status;
}

std::string ibvStatusText(const IbvApi* api, int status) {
  if (api && api->wcStatusStr) return api->wcStatusStr(static_cast<ibv_wc_status>(status));
  return "work completion status " + std::to_string(status);
}

}  // namespace braid
