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

const IntParam kTimeout("BRAID_TIMEOUT", 0, 0, 7 * 24 * 3600,
                        "seconds an operation may wait for other ranks before it fails (0: wait as long as they live)");
const IntParam kWatchdog("BRAID_WATCHDOG", 1, 0, 1,
                         "1: ranks watch each other (a dead or aborted rank fails the others' calls at once)");

const IntParam kCommBlocking("NCCL_COMM_BLOCKING", 1, 0, 1, "0: communicator calls return ncclInProgress");
const IntParam kCgaClusterSize("NCCL_CGA_CLUSTER_SIZE", 4, 0, 8, "CUDA cluster size of kernels (sm90+)");
const IntParam kMinCtas("NCCL_MIN_CTAS", 1, 1, 64, "minimum number of channels (CTAs)");
const IntParam kMaxCtas("NCCL_MAX_CTAS", 64, 1, 64, "maximum number of channels (CTAs)");
const StringParam kNetName("NCCL_NET", "", "network backend to use: IB or Socket");
const IntParam kSplitShare("NCCL_COMM_SPLIT_SHARE_RESOURCES", 0, 0, 1, "share resources between split comms");

const IntParam kBuffSize("NCCL_BUFFSIZE", 4 << 20, 64 << 10, 1 << 30,
                         "bytes of a Simple-protocol connection buffer (8 steps)", ParamKind::Size);
const IntParam kLlBuffSize("NCCL_LL_BUFFSIZE", 512 << 10, 16 << 10, 64 << 20,
                           "bytes of an LL-protocol connection buffer (8 steps, half of it payload)", ParamKind::Size);
const IntParam kMinNChannels("NCCL_MIN_NCHANNELS", 1, 1, 64, "fewest channels a collective uses");
const IntParam kMaxNChannels("NCCL_MAX_NCHANNELS", 64, 1, 64, "most channels a collective uses");
const StringParam kAlgo("NCCL_ALGO", "",
                        "algorithms allowed: ring, tree (NCCL's grammar: ^ to exclude, func: prefixes)");
const StringParam kProto("NCCL_PROTO", "", "protocols allowed: simple, ll (NCCL's grammar)");
const IntParam kShmDisable("NCCL_SHM_DISABLE", 0, 0, 1,
                           "1: ranks of one host use the network instead of shared memory");
const IntParam kNsocksPerThread("NCCL_NSOCKS_PERTHREAD", 1, 1, 64, "sockets per helper thread of a socket connection");
const IntParam kSocketNthreads("NCCL_SOCKET_NTHREADS", 0, 0, 16, "helper threads per socket connection (0: none)");
const IntParam kSpinNs("BRAID_SPIN_NS", -1, -1, 100000000,
                       "nanoseconds a waiting rank spins before sleeping (-1: automatic by cores per rank)");

const IntParam kSingleCopy("BRAID_SINGLE_COPY", 1, 0, 1,
                           "1: large send/recv between ranks of one host copy once (process_vm_readv) when allowed");
const IntParam kSingleCopyThreshold("BRAID_SINGLE_COPY_THRESHOLD", 256 << 10, 1, int64_t{1} << 40,
                                    "bytes from which a send/recv over SHM goes by single copy", ParamKind::Size);

const StringParam kTopoFile("NCCL_TOPO_FILE", "",
                            "topology XML to use instead of detecting the machine (NCCL or hwloc format)");
const StringParam kTopoDumpFile("NCCL_TOPO_DUMP_FILE", "", "write the detected topology there, in NCCL's XML format");
const IntParam kTopoDumpFileRank("NCCL_TOPO_DUMP_FILE_RANK", 0, 0, 1 << 30, "the rank that writes NCCL_TOPO_DUMP_FILE");
const IntParam kPxnDisable("NCCL_PXN_DISABLE", 0, 0, 1,
                           "1: no PXN paths (GPU -> NVLink peer -> its NIC) in the topology");

const StringParam kDevice("BRAID_DEVICE", "auto", "auto: GPU when usable, else host memory; cpu: always host memory");

const StringParam kLauncher("BRAID_LAUNCHER", "",
                            "force the launcher braidCommInitFromEnv reads: torchrun, slurm, openmpi, mpich, env");
const StringParam kRendezvous("BRAID_RENDEZVOUS", "",
                              "where rank 0 serves the unique id: tcp://host:port or file:///shared/path");
const IntParam kRendezvousPort("BRAID_RENDEZVOUS_PORT", 0, 0, 65535,
                               "port of the unique-id rendezvous (default: derived from the launcher)");

}  // namespace braid::params
