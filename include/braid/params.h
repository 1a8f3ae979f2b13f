/*
 * Braid extension: set a parameter from the program.
 *
 * NCCL's parameter API (ncclParamBind, ncclParamGet*, ...) reads parameters; it has no
 * setter, and ncclParamBind only looks one up. braidParamSet gives a parameter a value that
 * takes precedence over the environment and the configuration files, for the rest of the
 * process (or until it is set again; value NULL or "" removes it, as an empty variable is unset). The value is checked
 * as the parameter's own (an integer within its bounds, a size with K/M/G, any text for a string parameter); a bad one,
 * or a key that is no parameter, is ncclInvalidArgument naming it.
 *
 * The library uses the value from its next reading of the parameter: at the next
 * communicator creation (split and shrink included) for most, when a communicator first
 * needs the network for the IB ones, at the next ncclResetDebugInit for NCCL_DEBUG*
 * (docs/environment.md says which is which). Communicators that exist keep what they
 * read. ncclParamGet* and ncclParamDumpAll show the value, its origin "braidParamSet".
 * NCCL_CONF_FILE is read from the environment alone and cannot be set this way.
 */
#ifndef BRAID_PARAMS_H_
#define BRAID_PARAMS_H_

#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

ncclResult_t braidParamSet(const char* key, const char* value);

#ifdef __cplusplus
}
#endif

#endif /* BRAID_PARAMS_H_ */
