// NCCL 2.30's parameter API over Braid's parameter registry (util/param.h): every NCCL_*
// and BRAID_* variable the library reads, by name, with the value the library would use if
// it read the parameter now. A handle is the registry entry itself.
#include <cstring>
#include <string>
#include <vector>

#include "api/api_guard.h"
#include "braid/params.h"
#include "util/env.h"
#include "util/param.h"

using braid::ParamBase;
using braid::ParamType;
using braid::Status;
namespace api = braid::api;

// The opaque handle type of nccl.h: never defined, only converted to and from entries.
struct ncclParamHandle;

namespace {

ncclParamHandle_t handleOf(const ParamBase* param) {
  return reinterpret_cast<ncclParamHandle_t>(const_cast<ParamBase*>(param));
}

// A handle the registry handed out, or an error naming what is wrong with it.
Status entryOf(ncclParamHandle_t handle, const char* fn, const ParamBase** out) {
  if (!handle) return BRAID_ERROR(ncclInvalidArgument, "%s: handle is NULL (bind one with ncclParamBind)", fn);
  for (const ParamBase* param : ParamBase::all()) {
    if (handleOf(param) == handle) {
      *out = param;
      return braid::okStatus();
    }
  }
  return BRAID_ERROR(ncclInvalidArgument, "%s: handle %p was not made by ncclParamBind", fn,
                     static_cast<void*>(handle));
}

Status entryByKey(const char* key, const char* fn, const ParamBase** out) {
  BRAID_CHECK(api::checkPointer(key, fn, "key"));
  const ParamBase* param = ParamBase::find(key);
  if (!param) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: \"%s\" is not a parameter of Braid (ncclParamGetAllParameterKeys lists them; "
                       "docs/environment.md explains them)",
                       fn, key);
  }
  *out = param;
  return braid::okStatus();
}

const char* accessorFor(ParamType type) {
  switch (type) {
    case ParamType::I32:
      return "ncclParamGetI32";
    case ParamType::I64:
      return "ncclParamGetI64";
    case ParamType::Str:
      return "ncclParamGetStr";
  }
  return "?";
}

// A typed read: the parameter must have exactly that type, as in NCCL.
template <typename T>
ncclResult_t getTyped(const char* fn, ParamType wanted, ncclParamHandle_t handle, T* out) {
  return api::apiCall(fn, nullptr, [&]() -> Status {
    const ParamBase* param = nullptr;
    BRAID_CHECK(entryOf(handle, fn, &param));
    BRAID_CHECK(api::checkPointer(out, fn, "out"));
    if (param->type() != wanted) {
      return BRAID_ERROR(ncclInvalidArgument, "%s: %s is a %s parameter, not %s; read it with %s", fn, param->name(),
                         braid::paramTypeName(param->type()), braid::paramTypeName(wanted), accessorFor(param->type()));
    }
    int64_t value = 0;
    if (!braid::parseInt64(param->currentText(braid::EnvSource::process()), &value)) {
      return BRAID_ERROR(ncclInternalError, "%s: %s has no integer value", fn, param->name());
    }
    *out = static_cast<T>(value);
    return braid::okStatus();
  });
}

// Integer accessors of a type no Braid parameter has: the handle is checked, then the
// type is named as wrong.
template <typename T>
ncclResult_t getUnusedType(const char* fn, const char* typeName, ncclParamHandle_t handle, T* out) {
  return api::apiCall(fn, nullptr, [&]() -> Status {
    const ParamBase* param = nullptr;
    BRAID_CHECK(entryOf(handle, fn, &param));
    BRAID_CHECK(api::checkPointer(out, fn, "out"));
    return BRAID_ERROR(ncclInvalidArgument, "%s: %s is a %s parameter, not %s; read it with %s", fn, param->name(),
                       braid::paramTypeName(param->type()), typeName, accessorFor(param->type()));
  });
}

}  // namespace

BRAID_API(ncclResult_t, ncclParamBind, ncclParamHandle_t* out, const char* key) {
  return api::apiCall("ncclParamBind", nullptr, [&]() -> Status {
    BRAID_CHECK(api::checkPointer(out, "ncclParamBind", "out"));
    const ParamBase* param = nullptr;
    BRAID_CHECK(entryByKey(key, "ncclParamBind", &param));
    *out = handleOf(param);
    return braid::okStatus();
  });
}

BRAID_API(ncclResult_t, ncclParamGetI8, ncclParamHandle_t h, int8_t* out) {
  return getUnusedType("ncclParamGetI8", "int8_t", h, out);
}
BRAID_API(ncclResult_t, ncclParamGetI16, ncclParamHandle_t h, int16_t* out) {
  return getUnusedType("ncclParamGetI16", "int16_t", h, out);
}
BRAID_API(ncclResult_t, ncclParamGetI32, ncclParamHandle_t h, int32_t* out) {
  return getTyped("ncclParamGetI32", ParamType::I32, h, out);
}
BRAID_API(ncclResult_t, ncclParamGetI64, ncclParamHandle_t h, int64_t* out) {
  return getTyped("ncclParamGetI64", ParamType::I64, h, out);
}
BRAID_API(ncclResult_t, ncclParamGetU8, ncclParamHandle_t h, uint8_t* out) {
  return getUnusedType("ncclParamGetU8", "uint8_t", h, out);
}
BRAID_API(ncclResult_t, ncclParamGetU16, ncclParamHandle_t h, uint16_t* out) {
  return getUnusedType("ncclParamGetU16", "uint16_t", h, out);
}
BRAID_API(ncclResult_t, ncclParamGetU32, ncclParamHandle_t h, uint32_t* out) {
  return getUnusedType("ncclParamGetU32", "uint32_t", h, out);
}
BRAID_API(ncclResult_t, ncclParamGetU64, ncclParamHandle_t h, uint64_t* out) {
  return getUnusedType("ncclParamGetU64", "uint64_t", h, out);
}

BRAID_API(ncclResult_t, ncclParamGetStr, ncclParamHandle_t h, const char** out) {
  return api::apiCall("ncclParamGetStr", nullptr, [&]() -> Status {
    const char* fn = "ncclParamGetStr";
    const ParamBase* param = nullptr;
    BRAID_CHECK(entryOf(h, fn, &param));
    BRAID_CHECK(api::checkPointer(out, fn, "out"));
    if (param->type() != ParamType::Str) {
      return BRAID_ERROR(ncclInvalidArgument, "%s: %s is a %s parameter, not text; read it with %s", fn, param->name(),
                         braid::paramTypeName(param->type()), accessorFor(param->type()));
    }
    thread_local std::string text;  // valid until this thread's next call, as NCCL documents
    text = param->currentText(braid::EnvSource::process());
    *out = text.c_str();
    return braid::okStatus();
  });
}

BRAID_API(ncclResult_t, ncclParamGet, ncclParamHandle_t h, void* out, int maxLen, int* len) {
  if (len) *len = 0;
  return api::apiCall("ncclParamGet", nullptr, [&]() -> Status {
    const char* fn = "ncclParamGet";
    const ParamBase* param = nullptr;
    BRAID_CHECK(entryOf(h, fn, &param));
    BRAID_CHECK(api::checkPointer(out, fn, "out"));
    BRAID_CHECK(api::checkPointer(len, fn, "len"));
    std::string text = param->currentText(braid::EnvSource::process());
    // The value's own bytes: the integer of the parameter's type, or the text with its NUL.
    std::vector<char> bytes;
    int64_t value = 0;
    if (param->type() == ParamType::Str) {
      bytes.assign(text.begin(), text.end());
      bytes.push_back('\0');
    } else if (braid::parseInt64(text, &value)) {
      int32_t narrow = static_cast<int32_t>(value);
      const char* raw = param->type() == ParamType::I32 ? reinterpret_cast<const char*>(&narrow)
                                                        : reinterpret_cast<const char*>(&value);
      bytes.assign(raw, raw + (param->type() == ParamType::I32 ? sizeof(narrow) : sizeof(value)));
    } else {
      return BRAID_ERROR(ncclInternalError, "%s: %s has no integer value", fn, param->name());
    }
    if (maxLen < 0 || static_cast<size_t>(maxLen) < bytes.size()) {
      return BRAID_ERROR(ncclInvalidArgument, "%s: %s needs %zu bytes (%s) but maxLen is %d", fn, param->name(),
                         bytes.size(), braid::paramTypeName(param->type()), maxLen);
    }
    std::memcpy(out, bytes.data(), bytes.size());
    *len = static_cast<int>(bytes.size());
    return braid::okStatus();
  });
}

BRAID_API(ncclResult_t, ncclParamGetParameter, const char* key, const char** value, int* valueLen) {
  return api::apiCall("ncclParamGetParameter", nullptr, [&]() -> Status {
    const char* fn = "ncclParamGetParameter";
    BRAID_CHECK(api::checkPointer(value, fn, "value"));
    BRAID_CHECK(api::checkPointer(valueLen, fn, "valueLen"));
    const ParamBase* param = nullptr;
    BRAID_CHECK(entryByKey(key, fn, &param));
    thread_local std::string text;  // valid until this thread's next call
    text = param->currentText(braid::EnvSource::process());
    *value = text.c_str();
    *valueLen = static_cast<int>(text.size());
    return braid::okStatus();
  });
}

BRAID_API(ncclResult_t, ncclParamGetAllParameterKeys, const char*** table, int* tableLen) {
  return api::apiCall("ncclParamGetAllParameterKeys", nullptr, [&]() -> Status {
    const char* fn = "ncclParamGetAllParameterKeys";
    BRAID_CHECK(api::checkPointer(table, fn, "table"));
    BRAID_CHECK(api::checkPointer(tableLen, fn, "tableLen"));
    // Every parameter Braid reads is documented (docs/environment.md), so the list is the
    // same with and without NCCL_PARAM_DUMP_ALL.
    thread_local std::vector<const char*> keys;
    keys.clear();
    for (const ParamBase* param : ParamBase::all()) keys.push_back(param->name());
    *table = keys.data();
    *tableLen = static_cast<int>(keys.size());
    return braid::okStatus();
  });
}

BRAID_API(void, ncclParamDumpAll, void) {
  (void)api::apiCall("ncclParamDumpAll", nullptr, [&]() -> Status {
    const braid::EnvSource& env = braid::EnvSource::process();
    for (const ParamBase* param : ParamBase::all()) {
      BRAID_INFO(braid::kLogEnv, "%s (%s) = \"%s\" from %s; default \"%s\": %s", param->name(),
                 braid::paramTypeName(param->type()), param->currentText(env).c_str(), param->origin(env).c_str(),
                 param->defaultText().c_str(), param->help());
    }
    return braid::okStatus();
  });
}

// braid/params.h: a value set by the program, ahead of the environment and the files.
extern "C" __attribute__((visibility("default"))) ncclResult_t braidParamSet(const char* key, const char* value) {
  return api::apiCall("braidParamSet", nullptr, [&]() -> Status {
    const ParamBase* param = nullptr;
    BRAID_CHECK(entryByKey(key, "braidParamSet", &param));
    if (std::strcmp(param->name(), "NCCL_CONF_FILE") == 0) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "braidParamSet: NCCL_CONF_FILE is read from the environment alone (it names the first "
                         "configuration file, read once)");
    }
    if (value && *value) {
      if (std::string why = param->rejects(value); !why.empty()) {
        return BRAID_ERROR(ncclInvalidArgument, "braidParamSet: %s=%s %s", param->name(), value, why.c_str());
      }
      braid::EnvSource::setByProgram(param->name(), std::string(value));
    } else {
      braid::EnvSource::setByProgram(param->name(), std::nullopt);
    }
    BRAID_INFO(braid::kLogEnv, "%s %s by braidParamSet", param->name(),
               value && *value ? ("set to \"" + std::string(value) + "\"").c_str() : "unset");
    return braid::okStatus();
  });
}
