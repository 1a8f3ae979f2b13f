#include "core/memory/cuda_vmm.h"

#include "core/memory/cuda_device.h"
#include "util/format.h"
#include "util/log.h"

#if BRAID_WITH_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

#include "platform/cuda_check.h"
#endif

namespace braid {

#if BRAID_WITH_CUDA

namespace {

// The driver functions ncclMemAlloc/ncclMemFree use, at the ABI of CUDA 12.0 (their
// signatures have not changed since 10.2).
constexpr unsigned kDriverAbiVersion = 12000;

struct DriverApi {
  PFN_cuGetErrorName_v6000 getErrorName = nullptr;
  PFN_cuDeviceGet_v2000 deviceGet = nullptr;
  PFN_cuDeviceGetAttribute_v2000 deviceGetAttribute = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 memGetAllocationGranularity = nullptr;
  PFN_cuMemCreate_v10020 memCreate = nullptr;
  PFN_cuMemRelease_v10020 memRelease = nullptr;
  PFN_cuMemAddressReserve_v10020 memAddressReserve = nullptr;
  PFN_cuMemAddressFree_v10020 memAddressFree = nullptr;
  PFN_cuMemMap_v10020 memMap = nullptr;
  PFN_cuMemUnmap_v10020 memUnmap = nullptr;
  PFN_cuMemSetAccess_v10020 memSetAccess = nullptr;
};

template <class Fn>
bool entryPoint(const char* name, Fn* fn, std::string* why) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  cudaError_t err = cudaGetDriverEntryPointByVersion(name, &address, kDriverAbiVersion, cudaEnableDefault, &found);
#else  // older toolkits: the entry point of the runtime's own version
  cudaError_t err = cudaGetDriverEntryPoint(name, &address, cudaEnableDefault, &found);
#endif
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || !address) {
    if (err != cudaSuccess) (void)cudaGetLastError();
    *why = strFormat("the driver does not provide %s (%s)", name,
                     err != cudaSuccess                                 ? cudaGetErrorName(err)
                     : found == cudaDriverEntryPointVersionNotSufficent ? "driver too old"
                                                                        : "symbol not found");
    return false;
  }
  *fn = reinterpret_cast<Fn>(address);
  return true;
}

// Loaded once per process; nullptr with *why when the driver lacks an entry point.
const DriverApi* driverApi(std::string* why) {
  static std::once_flag once;
  static DriverApi api;
  static bool loaded = false;
  static std::string failure;
  std::call_once(once, [] {
    loaded = entryPoint("cuGetErrorName", &api.getErrorName, &failure) &&
             entryPoint("cuDeviceGet", &api.deviceGet, &failure) &&
             entryPoint("cuDeviceGetAttribute", &api.deviceGetAttribute, &failure) &&
             entryPoint("cuMemGetAllocationGranularity", &api.memGetAllocationGranularity, &failure) &&
             entryPoint("cuMemCreate", &api.memCreate, &failure) &&
             entryPoint("cuMemRelease", &api.memRelease, &failure) &&
             entryPoint("cuMemAddressReserve", &api.memAddressReserve, &failure) &&
             entryPoint("cuMemAddressFree", &api.memAddressFree, &failure) &&
             entryPoint("cuMemMap", &api.memMap, &failure) && entryPoint("cuMemUnmap", &api.memUnmap, &failure) &&
             entryPoint("cuMemSetAccess", &api.memSetAccess, &failure);
  });
  if (!loaded) *why = failure;
  return loaded ? &api : nullptr;
}

Status driverFailure(const DriverApi& cu, CUresult result, const char* call, const char* file, int line) {
  const char* name = nullptr;
  if (cu.getErrorName(result, &name) != CUDA_SUCCESS || !name) name = "unknown CUresult";
  return makeError(ncclUnhandledCudaError, file, line, "%s failed: %s (%d)", call, name, static_cast<int>(result));
}

#define BRAID_CU_CHECK(cu, call)                                                        \
  do {                                                                                  \
    CUresult braid_cu_result_ = (call);                                                 \
    if (braid_cu_result_ != CUDA_SUCCESS) {                                             \
      return ::braid::driverFailure((cu), braid_cu_result_, #call, __FILE__, __LINE__); \
    }                                                                                   \
  } while (0)

// A release during cleanup or free: logged, not returned (the first failure is the news).
void warnDriverRelease(const DriverApi& cu, CUresult result, const char* call) {
  if (result == CUDA_SUCCESS || result == CUDA_ERROR_DEINITIALIZED) return;
  const char* name = nullptr;
  if (cu.getErrorName(result, &name) != CUDA_SUCCESS || !name) name = "unknown CUresult";
  BRAID_WARN("%s failed: %s; continuing", call, name);
}

CUmemAllocationProp allocationProp(CUdevice device, bool posixFd) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = posixFd ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  return prop;
}

// Asks the driver and the runtime what core/memory/device_alloc_plan.h decides from.
Status gatherFacts(const DriverApi* cu, int device, CUdevice* cuDevice, DeviceAllocFacts* out) {
  DeviceAllocFacts facts;
  facts.device = device;
  int count = 0;
  BRAID_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    int access = 0;
    bool ok = d != device && cudaDeviceCanAccessPeer(&access, d, device) == cudaSuccess && access;
    if (d != device && !ok) (void)cudaGetLastError();
    facts.peerAccess.push_back(ok);
  }
  BRAID_CU_CHECK(*cu, cu->deviceGet(cuDevice, device));
  int vmm = 0, posixFd = 0;
  BRAID_CU_CHECK(*cu, cu->deviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, *cuDevice));
  facts.vmmSupported = vmm != 0;
  if (facts.vmmSupported) {
    BRAID_CU_CHECK(*cu, cu->deviceGetAttribute(
                            &posixFd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, *cuDevice));
    facts.posixFdSupported = posixFd != 0;
    CUmemAllocationProp prop = allocationProp(*cuDevice, facts.posixFdSupported);
    BRAID_CU_CHECK(*cu,
                   cu->memGetAllocationGranularity(&facts.granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  }
  *out = std::move(facts);
  return okStatus();
}

// The VMM steps; on failure undoes those already done.
Status vmmAllocate(const DriverApi& cu, CUdevice cuDevice, const DeviceAllocFacts& facts, const DeviceAllocPlan& plan,
                   DeviceAllocation* out) {
  CUmemAllocationProp prop = allocationProp(cuDevice, plan.posixFdHandle);
  CUmemGenericAllocationHandle handle = 0;
  BRAID_CU_CHECK(cu, cu.memCreate(&handle, plan.bytes, &prop, 0));
  CUdeviceptr address = 0;
  CUresult result = cu.memAddressReserve(&address, plan.bytes, facts.granularity, 0, 0);
  if (result != CUDA_SUCCESS) {
    warnDriverRelease(cu, cu.memRelease(handle), "cuMemRelease");
    return driverFailure(cu, result, "cuMemAddressReserve", __FILE__, __LINE__);
  }
  result = cu.memMap(address, plan.bytes, 0, handle, 0);
  if (result != CUDA_SUCCESS) {
    warnDriverRelease(cu, cu.memAddressFree(address, plan.bytes), "cuMemAddressFree");
    warnDriverRelease(cu, cu.memRelease(handle), "cuMemRelease");
    return driverFailure(cu, result, "cuMemMap", __FILE__, __LINE__);
  }
  std::vector<CUmemAccessDesc> access;
  for (int d : plan.accessible) {
    CUdevice target = 0;
    result = cu.deviceGet(&target, d);
    if (result != CUDA_SUCCESS) break;
    CUmemAccessDesc desc = {};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = target;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    access.push_back(desc);
  }
  const char* failed = "cuDeviceGet";
  if (result == CUDA_SUCCESS) {
    result = cu.memSetAccess(address, plan.bytes, access.data(), access.size());
    failed = "cuMemSetAccess";
  }
  if (result != CUDA_SUCCESS) {
    warnDriverRelease(cu, cu.memUnmap(address, plan.bytes), "cuMemUnmap");
    warnDriverRelease(cu, cu.memAddressFree(address, plan.bytes), "cuMemAddressFree");
    warnDriverRelease(cu, cu.memRelease(handle), "cuMemRelease");
    return driverFailure(cu, result, failed, __FILE__, __LINE__);
  }
  out->ptr = reinterpret_cast<void*>(address);
  out->handle = static_cast<uint64_t>(handle);
  return okStatus();
}

}  // namespace

Status cudaDeviceAlloc(int device, size_t bytes, DeviceAllocation* out) {
  DeviceBinding binding;  // the allocating device current, the caller's restored after
  BRAID_CHECK(binding.bind(device));
  std::string whyNoVmm;
  const DriverApi* cu = driverApi(&whyNoVmm);
  DeviceAllocFacts facts;
  facts.device = device;
  CUdevice cuDevice = 0;
  if (cu) {
    BRAID_CHECK(gatherFacts(cu, device, &cuDevice, &facts));
  } else {
    facts.whyNoVmm = whyNoVmm;
  }
  DeviceAllocPlan plan;
  BRAID_CHECK(planDeviceAllocation(bytes, facts, &plan));
  DeviceAllocation allocation;
  allocation.device = device;
  allocation.bytes = plan.bytes;
  allocation.method = plan.method;
  if (plan.method == DeviceAllocMethod::Vmm) {
    BRAID_CHECK(vmmAllocate(*cu, cuDevice, facts, plan, &allocation));
  } else {
    BRAID_CUDA_CHECK(cudaMalloc(&allocation.ptr, plan.bytes));
  }
  std::string why = plan.method == DeviceAllocMethod::Vmm ? std::string()
                    : !facts.whyNoVmm.empty()             ? " (no virtual memory API: " + facts.whyNoVmm + ")"
                                                          : " (the device has no virtual memory management)";
  BRAID_INFO(kLogAlloc, "ncclMemAlloc: %zu bytes (%zu asked) of device memory on CUDA device %d at %p through %s%s",
             allocation.bytes, bytes, device, allocation.ptr, plan.describe().c_str(), why.c_str());
  *out = allocation;
  return okStatus();
}

Status cudaDeviceFree(const DeviceAllocation& allocation) {
  DeviceBinding binding;
  BRAID_CHECK(binding.bind(allocation.device));
  if (allocation.method == DeviceAllocMethod::CudaMalloc) {
    BRAID_CUDA_CHECK(cudaFree(allocation.ptr));
  } else {
    std::string why;
    const DriverApi* cu = driverApi(&why);
    if (!cu) return BRAID_ERROR(ncclInternalError, "ncclMemFree: the driver API is gone: %s", why.c_str());
    auto address = reinterpret_cast<CUdeviceptr>(allocation.ptr);
    auto handle = static_cast<CUmemGenericAllocationHandle>(allocation.handle);
    BRAID_CU_CHECK(*cu, cu->memUnmap(address, allocation.bytes));
    BRAID_CU_CHECK(*cu, cu->memRelease(handle));
    BRAID_CU_CHECK(*cu, cu->memAddressFree(address, allocation.bytes));
  }
  BRAID_INFO(kLogAlloc, "ncclMemFree: %zu bytes of device memory on CUDA device %d at %p freed", allocation.bytes,
             allocation.device, allocation.ptr);
  return okStatus();
}

#else  // !BRAID_WITH_CUDA

Status cudaDeviceAlloc(int device, size_t, DeviceAllocation*) {
  return BRAID_ERROR(ncclInvalidUsage, "ncclMemAlloc on CUDA device %d: this Braid was built without CUDA", device);
}

Status cudaDeviceFree(const DeviceAllocation& allocation) {
  return BRAID_ERROR(ncclInvalidUsage, "ncclMemFree of %p: this Braid was built without CUDA", allocation.ptr);
}

#endif

}  // namespace braid
