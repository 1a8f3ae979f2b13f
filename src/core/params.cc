#include "core/params.h"

#include <climits>

namespace braid::params {

const StringParam kSocketIfname("NCCL_SOCKET_IFNAME", "",
                                "IP interfaces for bootstrap and sockets: prefixes, ^ to exclude, = for exact names");
const StringParam kSocketFamily("NCCL_SOCKET_FAMILY", "", "AF_INET or AF_INET6: only use addresses of that family");
const StringParam kCommId("NCCL_COMM_ID", "",
                          "host:port of a fixed bootstrap root, served by rank 0 instead of ncclGetUniqueId's thread");
const StringParam kHostId("NCCL_HOSTID", "", "identity of this host (ranks with equal ids share memory)");
const IntParam kBootstrapTimeout("BRAID_BOOTSTRAP_TIMEOUT", 300, 1, 7 * 24 * 3600,
                                 "seconds to wait for all ranks to join, and for each bootstrap exchange");

const IntParam kCommBlocking("NCCL_COMM_BLOCKING", 1, 0, 1, "0: communicator calls return ncclInProgress");
const IntParam kCgaClusterSize("NCCL_CGA_CLUSTER_SIZE", 4, 0, 8, "CUDA cluster size of kernels (sm90+)");
const IntParam kMinCtas("NCCL_MIN_CTAS", 1, 1, 64, "minimum number of channels (CTAs)");
const IntParam kMaxCtas("NCCL_MAX_CTAS", 64, 1, 64, "maximum number of channels (CTAs)");
const StringParam kNetName("NCCL_NET", "", "network backend to use: IB or Socket");
const IntParam kSplitShare("NCCL_COMM_SPLIT_SHARE_RESOURCES", 0, 0, 1, "share resources between split comms");

const StringParam kDevice("BRAID_DEVICE", "auto", "auto: GPU when usable, else host memory; cpu: always host memory");

const StringParam kLauncher("BRAID_LAUNCHER", "",
                            "force the launcher braidCommInitFromEnv reads: torchrun, slurm, openmpi, mpich, env");
const StringParam kRendezvous("BRAID_RENDEZVOUS", "",
                              "where rank 0 serves the unique id: tcp://host:port or file:///shared/path");
const IntParam kRendezvousPort("BRAID_RENDEZVOUS_PORT", 0, 0, 65535,
                               "port of the unique-id rendezvous (default: derived from the launcher)");

}  // namespace braid::params
