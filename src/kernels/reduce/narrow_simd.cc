#include "kernels/reduce/narrow_simd.h"

#include <atomic>
#include <mutex>

#include "kernels/reduce/narrow_simd_table.h"
#include "util/log.h"

namespace braid::narrow_simd {
namespace {

// The scalar loops: no kernels.
const KernelTable kPortableTable = {SimdLevel::kNone, {}};

// The table in use; null until the first use chooses one.
std::atomic<const KernelTable*> activeTable{nullptr};
std::mutex chooseMutex;

const KernelTable* tableOrPortable(SimdLevel level) {
  const KernelTable* table = tableFor(level);
  return table != nullptr ? table : &kPortableTable;
}

const KernelTable* chooseTable() {
  std::lock_guard<std::mutex> lock(chooseMutex);
  const KernelTable* table = activeTable.load(std::memory_order_acquire);
  if (table != nullptr) return table;
  table = tableOrPortable(configuredSimdLevel());
  BRAID_INFO(kLogInit, "host reductions of half, bfloat16 and fp8: %s code (CPU features: %s)",
             table->level == SimdLevel::kNone ? "portable" : simdLevelName(table->level),
             describeCpuFeatures(cpuFeatures()).c_str());
  activeTable.store(table, std::memory_order_release);
  return table;
}

const KernelTable* currentTable() {
  const KernelTable* table = activeTable.load(std::memory_order_acquire);
  return table != nullptr ? table : chooseTable();
}

}  // namespace

const KernelTable* tableFor(SimdLevel level) {
  if (static_cast<int>(level) > static_cast<int>(supportedSimdLevel(cpuFeatures()))) return nullptr;
  switch (level) {
    case SimdLevel::kAvx512Fp16:
      return avx512Fp16Table();
    case SimdLevel::kAvx512Vbmi:
      return avx512VbmiTable();
    case SimdLevel::kAvx512Bf16:
      return avx512Bf16Table();
    case SimdLevel::kAvx512:
      return avx512Table();
    case SimdLevel::kAvx2:
      return avx2Table();
    case SimdLevel::kNone:
      return nullptr;
  }
  return nullptr;
}

Kernel activeKernel(Type type, int op) { return currentTable()->kernels[static_cast<int>(type)][op]; }

SimdLevel activeLevel() { return currentTable()->level; }

SimdLevel useLevel(SimdLevel level) {
  const SimdLevel supported = supportedSimdLevel(cpuFeatures());
  if (static_cast<int>(level) > static_cast<int>(supported)) level = supported;
  std::lock_guard<std::mutex> lock(chooseMutex);
  const KernelTable* previous = activeTable.exchange(tableOrPortable(level), std::memory_order_acq_rel);
  return previous != nullptr ? previous->level : configuredSimdLevel();
}

void resetLevel() {
  std::lock_guard<std::mutex> lock(chooseMutex);
  activeTable.store(nullptr, std::memory_order_release);
}

}  // namespace braid::narrow_simd
