#include "core/config/params.h"

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

const StringParam kTlsCertFile("BRAID_TLS_CERT_FILE", "",
                               "PEM certificate (chain) this process presents; with the key and CA files: TLS with "
                               "mutual certificate authentication for every TCP connection");
const StringParam kTlsKeyFile("BRAID_TLS_KEY_FILE", "", "PEM private key of BRAID_TLS_CERT_FILE (unencrypted)");
const StringParam kTlsCaFile("BRAID_TLS_CA_FILE", "",
                             "PEM CA certificate(s): a peer is accepted only with a certificate they signed");
const StringParam kTlsPskFile("BRAID_TLS_PSK_FILE", "",
                              "file holding the pre-shared key (at least 32 bytes): TLS as with ncclSetEncryption, "
                              "for programs that do not call it");

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
const IntParam kShrinkShare("NCCL_COMM_SHRINK_SHARE_RESOURCES", 0, 0, 1, "share resources between shrunk comms");
const IntParam kGraphMixing("NCCL_GRAPH_MIXING_SUPPORT", 1, 0, 1,
                            "overrides ncclConfig_t.graphUsageMode: 1 sets 2 (graphs mixed with other work), 0 sets 0");
const IntParam kGraphStreamOrdering("NCCL_GRAPH_STREAM_ORDERING", 1, 0, 1,
                                    "overrides ncclConfig_t.graphStreamOrdering (0 needs graphUsageMode 0 or 1)");
const IntParam kLaunchOrderImplicit("NCCL_LAUNCH_ORDER_IMPLICIT", 0, 0, 1,
                                    "overrides ncclConfig_t.launchOrderImplicit");
const IntParam kNumRmaCtx("NCCL_NUM_RMA_CTX", 1, 0, 1024,
                          "overrides ncclConfig_t.numRmaCtx: one-sided contexts per communicator (0: no RMA)");
const IntParam kRmaEagerInit("NCCL_RMA_EAGER_INIT", 0, 0, 1, "overrides ncclConfig_t.rmaEagerInit");
const IntParam kMaxP2pPeers("NCCL_MAX_P2P_PEERS", 0, 1, 1 << 30,
                            "overrides ncclConfig_t.maxP2pPeers: peers a rank talks to at once by point-to-point");

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
const IntParam kP2pDisable("NCCL_P2P_DISABLE", 0, 0, 1,
                           "1: GPUs of one host never use CUDA IPC (P2P); shared memory instead (GPU mode)");
const StringParam kP2pLevel("NCCL_P2P_LEVEL", "",
                            "farthest GPU path that uses P2P: LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS or "
                            "0-5 (default PXB; SYS on AMD when 2 GPUs or fewer are used)");
const IntParam kNsocksPerThread("NCCL_NSOCKS_PERTHREAD", 1, 1, 64, "sockets per helper thread of a socket connection");
const IntParam kSocketNthreads("NCCL_SOCKET_NTHREADS", 0, 0, 16, "helper threads per socket connection (0: none)");
const IntParam kSpinNs("BRAID_SPIN_NS", -1, -1, 100000000,
                       "nanoseconds a waiting rank spins before sleeping (-1: automatic by cores per rank)");

const IntParam kSingleCopy("BRAID_SINGLE_COPY", 1, 0, 1,
                           "1: large send/recv between ranks of one host copy once (process_vm_readv) when allowed");
const IntParam kSingleCopyThreshold("BRAID_SINGLE_COPY_THRESHOLD", 256 << 10, 1, int64_t{1} << 40,
                                    "bytes from which a send/recv over SHM goes by single copy", ParamKind::Size);

const IntParam kIbDisable("NCCL_IB_DISABLE", 0, 0, 1, "1: never use the IB verbs backend (sockets instead)");
const StringParam kIbHca("NCCL_IB_HCA", "",
                         "IB/RoCE ports to use: name[:port] prefixes, = for exact names, ^ to exclude (all ACTIVE)");
const IntParam kIbGidIndex("NCCL_IB_GID_INDEX", -1, -1, 65535, "RoCE GID index to use (-1: chosen automatically)");
const StringParam kIbAddrFamily("NCCL_IB_ADDR_FAMILY", "AF_INET",
                                "address family the automatic GID choice prefers: AF_INET or AF_INET6");
const StringParam kIbAddrRange("NCCL_IB_ADDR_RANGE", "",
                               "only GIDs in this prefix (10.1.0.0/16, fd00::/8) for the automatic choice");
const IntParam kIbRoceVersion("NCCL_IB_ROCE_VERSION_NUM", 2, 1, 2, "RoCE version the automatic GID choice prefers");
const IntParam kIbTimeout("NCCL_IB_TIMEOUT", 20, 1, 31, "QP ack timeout exponent: 4.096 us x 2^value");
const IntParam kIbRetryCnt("NCCL_IB_RETRY_CNT", 7, 0, 7, "QP retransmissions before a completion error");
const IntParam kIbTc("NCCL_IB_TC", 0, 0, 255, "traffic class of RoCE packets (GRH; DSCP = value >> 2)");
const IntParam kIbSl("NCCL_IB_SL", 0, 0, 15, "InfiniBand service level");
const IntParam kIbPkey("NCCL_IB_PKEY", 0, 0, 65535, "partition key index of the QPs");
const IntParam kIbQpsPerConnection("NCCL_IB_QPS_PER_CONNECTION", 1, 1, 16,
                                   "queue pairs per IB connection (messages are split over them)");
const StringParam kIbSysfsRoot("BRAID_IB_SYSFS_ROOT", "/sys",
                               "where the IB backend reads sysfs (GID tables); for tests and containers");

const StringParam kTopoFile("NCCL_TOPO_FILE", "",
                            "topology XML to use instead of detecting the machine (NCCL or hwloc format)");
const StringParam kTopoDumpFile("NCCL_TOPO_DUMP_FILE", "", "write the detected topology there, in NCCL's XML format");
const IntParam kTopoDumpFileRank("NCCL_TOPO_DUMP_FILE_RANK", 0, 0, 1 << 30, "the rank that writes NCCL_TOPO_DUMP_FILE");
const IntParam kThreadAffinity(
    "BRAID_THREAD_AFFINITY", 1, 0, 1,
    "1: bind Braid's worker threads to the CPUs of the rank's NUMA node (within its affinity)");
const IntParam kPxnDisable("NCCL_PXN_DISABLE", 0, 0, 1,
                           "1: no PXN paths (GPU -> NVLink peer -> its NIC) in the topology");
const IntParam kCrossNic("NCCL_CROSS_NIC", 2, 0, 2,
                         "0: a channel leaves a node by the port it entered by; 1: by any; 2: only when that helps");
const StringParam kGraphFile("NCCL_GRAPH_FILE", "",
                             "NCCL's graph XML: the rings and trees to use instead of the topology search's");
const StringParam kGraphDumpFile("NCCL_GRAPH_DUMP_FILE", "",
                                 "write the topology search's rings and trees there, in NCCL's graph XML");
const IntParam kGraphDumpFileRank("NCCL_GRAPH_DUMP_FILE_RANK", 0, 0, 1 << 30,
                                  "the rank that writes NCCL_GRAPH_DUMP_FILE");

const IntParam kParamDumpAll("NCCL_PARAM_DUMP_ALL", 0, 0, 1,
                             "accepted: Braid's parameter listing always has every parameter it reads");

const IntParam kSharedGpu("BRAID_SHARED_GPU", 0, 0, 1,
                          "1: several ranks may use one GPU (to test GPU mode on fewer GPUs than ranks; such pairs "
                          "use shared memory; not for production)");
const StringParam kDevice("BRAID_DEVICE", "auto", "auto: GPU when usable, else host memory; cpu: always host memory");

const StringParam kLauncher("BRAID_LAUNCHER", "",
                            "force the launcher braidCommInitFromEnv reads: torchrun, slurm, openmpi, mpich, env");
const StringParam kRendezvous("BRAID_RENDEZVOUS", "",
                              "where rank 0 serves the unique id: tcp://host:port or file:///shared/path");
const IntParam kRendezvousPort("BRAID_RENDEZVOUS_PORT", 0, 0, 65535,
                               "port of the unique-id rendezvous (default: derived from the launcher)");
const StringParam kJobToken("BRAID_JOB_TOKEN", "",
                            "identifies the job at the rendezvous (default: the launcher's job id)");

}  // namespace braid::params
