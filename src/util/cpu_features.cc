#include "util/cpu_features.h"

#include <mutex>
#include <set>

#include "util/format.h"
#include "util/log.h"
#include "util/param.h"

namespace braid {
namespace {

const StringParam kSimd("BRAID_SIMD", "auto",
                        "vector instructions the host-mode reductions of half, bfloat16 and fp8 may use: auto, "
                        "avx512_vbmi, avx512_bf16, avx512, avx2 or none (portable code; the results are the same "
                        "bits)");

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's detection also checks (xgetbv) that the OS saves the AVX and AVX-512 registers.
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.f16c = __builtin_cpu_supports("f16c");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
  f.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
  f.avx512fp16 = __builtin_cpu_supports("avx512fp16");
  f.gfni = __builtin_cpu_supports("gfni");
#endif
  return f;
}

// Reports each rejected or unsupported value once per process (the level is read at every
// reselection, and a log line per collective would be noise).
bool firstReport(const std::string& key) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard<std::mutex> lock(mutex);
  return reported.insert(key).second;
}

}  // namespace

const CpuFeatures& cpuFeatures() {
  static const CpuFeatures features = detect();
  return features;
}

SimdLevel supportedSimdLevel(const CpuFeatures& f) {
  if (f.avx512f && f.avx512bw && f.avx512vl && f.f16c) {
    if (!f.avx512bf16) return SimdLevel::kAvx512;
    if (!f.avx512vbmi) return SimdLevel::kAvx512Bf16;
    return f.avx512fp16 && f.gfni ? SimdLevel::kAvx512Fp16 : SimdLevel::kAvx512Vbmi;
  }
  if (f.avx2 && f.f16c) return SimdLevel::kAvx2;
  return SimdLevel::kNone;
}

const char* simdLevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::kNone:
      return "none";
    case SimdLevel::kAvx2:
      return "avx2";
    case SimdLevel::kAvx512:
      return "avx512";
    case SimdLevel::kAvx512Bf16:
      return "avx512_bf16";
    case SimdLevel::kAvx512Vbmi:
      return "avx512_vbmi";
    case SimdLevel::kAvx512Fp16:
      return "avx512_fp16";
  }
  return "unknown";
}

std::string describeCpuFeatures(const CpuFeatures& f) {
  std::string out;
  auto add = [&out](bool present, const char* name) {
    if (!present) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(f.f16c, "f16c");
  add(f.avx2, "avx2");
  add(f.avx512f, "avx512f");
  add(f.avx512bw, "avx512bw");
  add(f.avx512vl, "avx512vl");
  add(f.avx512bf16, "avx512_bf16");
  add(f.avx512vbmi, "avx512_vbmi");
  add(f.avx512fp16, "avx512_fp16");
  add(f.gfni, "gfni");
  return out.empty() ? "none" : out;
}

bool parseSimdLevel(const std::string& text, SimdLevel* level, bool* isAuto) {
  const std::string_view word = trim(text);
  *isAuto = false;
  if (equalsIgnoreCase(word, "auto")) {
    *isAuto = true;
    return true;
  }
  for (SimdLevel candidate : kSimdLevels) {
    if (equalsIgnoreCase(word, simdLevelName(candidate))) {
      *level = candidate;
      return true;
    }
  }
  return false;
}

SimdLevel configuredSimdLevel() {
  const CpuFeatures& features = cpuFeatures();
  const SimdLevel supported = supportedSimdLevel(features);
  const std::string text = kSimd.get();
  SimdLevel wanted = supported;
  bool isAuto = true;
  if (!parseSimdLevel(text, &wanted, &isAuto)) {
    if (firstReport("invalid " + text)) {
      BRAID_WARN(
          "BRAID_SIMD=%s is not one of auto, avx512_fp16, avx512_vbmi, avx512_bf16, avx512, avx2, none; using auto "
          "(%s on this CPU)",
          text.c_str(), simdLevelName(supported));
    }
    return supported;
  }
  if (isAuto) return supported;
  if (static_cast<int>(wanted) > static_cast<int>(supported)) {
    if (firstReport("unsupported " + text)) {
      BRAID_INFO(kLogInit | kLogEnv, "BRAID_SIMD=%s: this CPU lacks it (it has: %s); using %s", text.c_str(),
                 describeCpuFeatures(features).c_str(), simdLevelName(supported));
    }
    return supported;
  }
  return wanted;
}

}  // namespace braid
