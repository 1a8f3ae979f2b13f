// Braid's table of configuration parameters: every environment variable the library
// reads, declared once with its default and help text. Parts of the library never read
// the environment themselves; the communicator reads these into the settings structs it
// hands them (see docs/environment.md for the user-facing list).
#pragma once

#include "util/param.h"

namespace braid::params {

// Bootstrap and sockets.
extern const StringParam kSocketIfname;   // NCCL_SOCKET_IFNAME
extern const StringParam kSocketFamily;   // NCCL_SOCKET_FAMILY
extern const StringParam kCommId;         // NCCL_COMM_ID
extern const StringParam kHostId;         // NCCL_HOSTID
extern const IntParam kBootstrapTimeout;  // BRAID_BOOTSTRAP_TIMEOUT (seconds)

// Encryption without code changes (core/config/encryption.h; ncclSetEncryption is the API's way).
extern const StringParam kTlsCertFile;  // BRAID_TLS_CERT_FILE
extern const StringParam kTlsKeyFile;   // BRAID_TLS_KEY_FILE
extern const StringParam kTlsCaFile;    // BRAID_TLS_CA_FILE
extern const StringParam kTlsPskFile;   // BRAID_TLS_PSK_FILE

// Reliability.
extern const IntParam kTimeout;   // BRAID_TIMEOUT (seconds, 0: none)
extern const IntParam kWatchdog;  // BRAID_WATCHDOG

// Communicator defaults that override ncclConfig_t, as NCCL's do.
extern const IntParam kCommBlocking;         // NCCL_COMM_BLOCKING
extern const IntParam kCgaClusterSize;       // NCCL_CGA_CLUSTER_SIZE
extern const IntParam kMinCtas;              // NCCL_MIN_CTAS
extern const IntParam kMaxCtas;              // NCCL_MAX_CTAS
extern const StringParam kNetName;           // NCCL_NET
extern const IntParam kSplitShare;           // NCCL_COMM_SPLIT_SHARE_RESOURCES
extern const IntParam kShrinkShare;          // NCCL_COMM_SHRINK_SHARE_RESOURCES
extern const IntParam kGraphMixing;          // NCCL_GRAPH_MIXING_SUPPORT
extern const IntParam kGraphStreamOrdering;  // NCCL_GRAPH_STREAM_ORDERING
extern const IntParam kLaunchOrderImplicit;  // NCCL_LAUNCH_ORDER_IMPLICIT
extern const IntParam kNumRmaCtx;            // NCCL_NUM_RMA_CTX
extern const IntParam kRmaEagerInit;         // NCCL_RMA_EAGER_INIT
extern const IntParam kMaxP2pPeers;          // NCCL_MAX_P2P_PEERS

// Data path.
extern const IntParam kBuffSize;             // NCCL_BUFFSIZE
extern const IntParam kLlBuffSize;           // NCCL_LL_BUFFSIZE
extern const IntParam kMinNChannels;         // NCCL_MIN_NCHANNELS
extern const IntParam kMaxNChannels;         // NCCL_MAX_NCHANNELS
extern const StringParam kAlgo;              // NCCL_ALGO
extern const StringParam kProto;             // NCCL_PROTO
extern const IntParam kShmDisable;           // NCCL_SHM_DISABLE
extern const IntParam kP2pDisable;           // NCCL_P2P_DISABLE
extern const StringParam kP2pLevel;          // NCCL_P2P_LEVEL
extern const IntParam kNsocksPerThread;      // NCCL_NSOCKS_PERTHREAD
extern const IntParam kSocketNthreads;       // NCCL_SOCKET_NTHREADS
extern const IntParam kSpinNs;               // BRAID_SPIN_NS
extern const IntParam kSingleCopy;           // BRAID_SINGLE_COPY
extern const IntParam kSingleCopyThreshold;  // BRAID_SINGLE_COPY_THRESHOLD

// IB verbs backend (src/transport/net/ib).
extern const IntParam kIbDisable;           // NCCL_IB_DISABLE
extern const StringParam kIbHca;            // NCCL_IB_HCA
extern const IntParam kIbGidIndex;          // NCCL_IB_GID_INDEX
extern const StringParam kIbAddrFamily;     // NCCL_IB_ADDR_FAMILY
extern const StringParam kIbAddrRange;      // NCCL_IB_ADDR_RANGE
extern const IntParam kIbRoceVersion;       // NCCL_IB_ROCE_VERSION_NUM
extern const IntParam kIbTimeout;           // NCCL_IB_TIMEOUT
extern const IntParam kIbRetryCnt;          // NCCL_IB_RETRY_CNT
extern const IntParam kIbTc;                // NCCL_IB_TC
extern const IntParam kIbSl;                // NCCL_IB_SL
extern const IntParam kIbPkey;              // NCCL_IB_PKEY
extern const IntParam kIbQpsPerConnection;  // NCCL_IB_QPS_PER_CONNECTION
extern const StringParam kIbSysfsRoot;      // BRAID_IB_SYSFS_ROOT

// Topology.
extern const StringParam kTopoFile;        // NCCL_TOPO_FILE
extern const StringParam kTopoDumpFile;    // NCCL_TOPO_DUMP_FILE
extern const IntParam kTopoDumpFileRank;   // NCCL_TOPO_DUMP_FILE_RANK
extern const IntParam kThreadAffinity;     // BRAID_THREAD_AFFINITY
extern const IntParam kPxnDisable;         // NCCL_PXN_DISABLE
extern const IntParam kCrossNic;           // NCCL_CROSS_NIC
extern const StringParam kGraphFile;       // NCCL_GRAPH_FILE
extern const StringParam kGraphDumpFile;   // NCCL_GRAPH_DUMP_FILE
extern const IntParam kGraphDumpFileRank;  // NCCL_GRAPH_DUMP_FILE_RANK

// The parameter API (ncclParamGetAllParameterKeys).
extern const IntParam kParamDumpAll;  // NCCL_PARAM_DUMP_ALL

// Execution mode.
extern const IntParam kSharedGpu;  // BRAID_SHARED_GPU
extern const StringParam kDevice;  // BRAID_DEVICE

// Launcher integration (braid/launch.h).
extern const StringParam kLauncher;     // BRAID_LAUNCHER
extern const StringParam kRendezvous;   // BRAID_RENDEZVOUS
extern const IntParam kRendezvousPort;  // BRAID_RENDEZVOUS_PORT
extern const StringParam kJobToken;     // BRAID_JOB_TOKEN

}  // namespace braid::params
