/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): what NCCL 2.30 added to the
 * host API: the parameter API (ncclParamBind, ncclParamGet*, ncclParamGetParameter,
 * ncclParamGetAllParameterKeys, ncclParamDumpAll). (ncclTimeout and the config fields of
 * 2.30 are in nccl_types.h.).
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
#endif

/*
 * Parameters: every NCCL_* and BRAID_* variable Braid reads, by its name (the key), with
 * its value as the library uses it now. Values come from the environment, then
 * NCCL_CONF_FILE, ~/.nccl.conf and /etc/nccl.conf; see docs/environment.md for when a
 * changed value takes effect.
 */
typedef struct ncclParamHandle* ncclParamHandle_t;

/* Looks up the parameter named key; *out is a handle owned by the library, valid for the
 * life of the process (the same key always gives the same handle). Unknown key:
 * ncclInvalidArgument, *out unchanged. */
ncclResult_t ncclParamBind(ncclParamHandle_t* out, const char* key);
ncclResult_t pncclParamBind(ncclParamHandle_t* out, const char* key);

/* The current value as the parameter's own type; another type is ncclInvalidArgument. */
ncclResult_t ncclParamGetI8(ncclParamHandle_t h, int8_t* out);
ncclResult_t pncclParamGetI8(ncclParamHandle_t h, int8_t* out);
ncclResult_t ncclParamGetI16(ncclParamHandle_t h, int16_t* out);
ncclResult_t pncclParamGetI16(ncclParamHandle_t h, int16_t* out);
ncclResult_t ncclParamGetI32(ncclParamHandle_t h, int32_t* out);
ncclResult_t pncclParamGetI32(ncclParamHandle_t h, int32_t* out);
ncclResult_t ncclParamGetI64(ncclParamHandle_t h, int64_t* out);
ncclResult_t pncclParamGetI64(ncclParamHandle_t h, int64_t* out);
ncclResult_t ncclParamGetU8(ncclParamHandle_t h, uint8_t* out);
ncclResult_t pncclParamGetU8(ncclParamHandle_t h, uint8_t* out);
ncclResult_t ncclParamGetU16(ncclParamHandle_t h, uint16_t* out);
ncclResult_t pncclParamGetU16(ncclParamHandle_t h, uint16_t* out);
ncclResult_t ncclParamGetU32(ncclParamHandle_t h, uint32_t* out);
ncclResult_t pncclParamGetU32(ncclParamHandle_t h, uint32_t* out);
ncclResult_t ncclParamGetU64(ncclParamHandle_t h, uint64_t* out);
ncclResult_t pncclParamGetU64(ncclParamHandle_t h, uint64_t* out);

/* A string parameter's value; the text stays valid until this thread's next
 * ncclParamGetStr. An unset string with no default reads as "". */
ncclResult_t ncclParamGetStr(ncclParamHandle_t h, const char** out);
ncclResult_t pncclParamGetStr(ncclParamHandle_t h, const char** out);

/* The value's bytes copied into out (a string with its terminating NUL); *len is the
 * number copied. maxLen below that is ncclInvalidArgument with *len = 0. */
ncclResult_t ncclParamGet(ncclParamHandle_t h, void* out, int maxLen, int* len);
ncclResult_t pncclParamGet(ncclParamHandle_t h, void* out, int maxLen, int* len);

/* Any parameter's value as text, by key; *valueLen excludes the NUL. The text stays valid
 * until this thread's next ncclParamGetParameter. */
ncclResult_t ncclParamGetParameter(const char* key, const char** value, int* valueLen);
ncclResult_t pncclParamGetParameter(const char* key, const char** value, int* valueLen);

/* Every key, in a table valid until this thread's next call. NCCL lists only the
 * parameters its documentation publishes unless NCCL_PARAM_DUMP_ALL is true; every
 * parameter Braid reads is documented, so Braid lists them all either way. */
ncclResult_t ncclParamGetAllParameterKeys(const char*** table, int* tableLen);
ncclResult_t pncclParamGetAllParameterKeys(const char*** table, int* tableLen);

/* Logs every parameter (key, type, value, default, where the value came from) at
 * NCCL_DEBUG=INFO, subsystem ENV. */
void ncclParamDumpAll(void);
void pncclParamDumpAll(void);
