#include "topology/nvml.h"

#include <dlfcn.h>

#include <cctype>
#include <map>
#include <mutex>

#include "util/format.h"
#include "util/log.h"

namespace braid {

// A named namespace, not an anonymous one: Nvml::Api's members use these types.
namespace nvml_abi {

// The few NVML types Braid uses, with NVML's layout (nvml.h is not needed to build).
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr unsigned kNvlinkMaxLinks = 18;
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
enum NvmlNvlinkDeviceType { kNvlinkGpu = 0, kNvlinkIbmNpu = 1, kNvlinkSwitch = 2 };

std::string normaliseBusId(const char* text) {
  std::string s = text;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t colon = s.find(':');
  if (colon == 8 && s.compare(0, 4, "0000") == 0) s = s.substr(4);  // NVML's 8-digit domain
  return s;
}

}  // namespace nvml_abi

using namespace nvml_abi;

struct Nvml::Api {
  void* handle = nullptr;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*byBusId)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*computeCapability)(NvmlDevice, int*, int*) = nullptr;
  NvmlReturn (*index)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*linkState)(NvmlDevice, unsigned, int*) = nullptr;
  NvmlReturn (*remotePci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
  NvmlReturn (*remoteType)(NvmlDevice, unsigned, int*) = nullptr;  // optional (older drivers)
  std::mutex mutex;  // NVML is thread-safe, but Braid's calls are few: keep them simple
};

namespace {

template <typename F>
bool bind(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  return *out != nullptr;
}

Nvml::Api* loadApi() {
  void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    BRAID_INFO(kLogInit | kLogGraph, "NVML not loaded (%s): GPUs are described by their PCI data only", dlerror());
    return nullptr;
  }
  auto* api = new Nvml::Api();
  api->handle = handle;
  bool ok =
      bind(handle, "nvmlInit_v2", &api->init) && bind(handle, "nvmlDeviceGetHandleByPciBusId_v2", &api->byBusId) &&
      bind(handle, "nvmlDeviceGetCudaComputeCapability", &api->computeCapability) &&
      bind(handle, "nvmlDeviceGetIndex", &api->index) && bind(handle, "nvmlDeviceGetNvLinkState", &api->linkState) &&
      bind(handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &api->remotePci);
  bind(handle, "nvmlDeviceGetNvLinkRemoteDeviceType", &api->remoteType);
  NvmlReturn initResult = ok ? api->init() : -1;
  if (!ok || initResult != kNvmlSuccess) {
    BRAID_INFO(kLogInit | kLogGraph, "NVML %s: GPUs are described by their PCI data only",
               ok ? "did not initialise (no driver?)" : "lacks entry points Braid needs");
    dlclose(handle);
    delete api;
    return nullptr;
  }
  return api;
}

}  // namespace

Nvml* Nvml::get() {
  // Loaded once and kept for the life of the process, as NCCL keeps it.
  static Nvml* instance = [] {
    Api* api = loadApi();
    return api ? new Nvml(api) : nullptr;
  }();
  return instance;
}

bool Nvml::describeGpu(const std::string& busId, GpuInfo* gpu) {
  std::lock_guard<std::mutex> lock(api_->mutex);
  NvmlDevice dev = nullptr;
  if (api_->byBusId(busId.c_str(), &dev) != kNvmlSuccess) return false;
  int major = 0, minor = 0;
  if (api_->computeCapability(dev, &major, &minor) == kNvmlSuccess) gpu->sm = major * 10 + minor;
  unsigned index = 0;
  if (gpu->dev < 0 && api_->index(dev, &index) == kNvmlSuccess) gpu->dev = static_cast<int>(index);
  std::map<std::string, NvLinkDecl> links;  // by target
  for (unsigned l = 0; l < kNvlinkMaxLinks; ++l) {
    int active = 0;
    if (api_->linkState(dev, l, &active) != kNvmlSuccess || !active) continue;
    NvmlPciInfo remote{};
    if (api_->remotePci(dev, l, &remote) != kNvmlSuccess) continue;
    std::string target = normaliseBusId(remote.busId);
    auto [it, fresh] = links.try_emplace(target);
    NvLinkDecl& decl = it->second;
    decl.target = target;
    decl.count = fresh ? 1 : decl.count + 1;
    int type = -1;
    if (api_->remoteType && api_->remoteType(dev, l, &type) == kNvmlSuccess) {
      if (type == kNvlinkSwitch) decl.targetClass = 0x068000;
      if (type == kNvlinkGpu) decl.targetClass = 0x030200;
    }
  }
  for (auto& [target, decl] : links) gpu->nvlinks.push_back(decl);
  return true;
}

}  // namespace braid
