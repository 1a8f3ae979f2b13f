// The communicator: what ncclComm_t points to. It is a composition of owned parts — the
// configuration, the bootstrap (out-of-band channel and the table of peers), the
// placement of ranks on hosts — plus the state every API call and background thread
// consults: the lifecycle state and the health (asynchronous error, abort flag).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "bootstrap/bootstrap_interface.h"
#include "core/config/comm_config.h"
#include "core/enqueue/red_op_registry.h"
#include "core/health/comm_health.h"
#include "core/memory/buffer_registry.h"
#include "planning/rank_layout.h"
#include "util/deadline.h"

namespace braid {
class DataPath;
class RootCancel;
class RmaState;
class Watchdog;
}  // namespace braid

struct ncclComm {
  // Both out of line (comm_init.cc), where every owned part is a complete type: code that
  // creates or destroys a communicator need not include them all (a constructor that
  // throws destroys the members it made, so it needs them complete too).
  ncclComm();
  ~ncclComm();
  ncclComm(const ncclComm&) = delete;
  ncclComm& operator=(const ncclComm&) = delete;

  // A live communicator has this magic; the API layer checks handles against the
  // registry first, so the magic only guards the registry's own bookkeeping.
  static constexpr uint64_t kMagic = 0x4d4d4f4344494152ull;  // "RAIDCOMM"
  uint64_t magic = kMagic;

  int rank = -1;
  int nranks = 0;
  // GPU mode runs on this CUDA device; -1 is host mode (core/config/execution_mode.h decides, at
  // the init call, before the bootstrap). Every part of the library keys GPU mode on it.
  int cudaDev = -1;
  std::string modeReason;  // why this mode, in words ("host mode: BRAID_DEVICE=cpu ...")
  uint64_t commHash = 0;   // printed in logs to tell communicators apart
  braid::CommConfig config;
  std::unique_ptr<braid::Bootstrap> bootstrap;
  braid::RankLayout layout;
  // NCCL_SOCKET_IFNAME and NCCL_SOCKET_FAMILY, read once at init: the bootstrap and the
  // socket backend choose interfaces by the same settings.
  braid::SocketSettings socketSettings;
  // Channels, transports and executor (declared after the bootstrap: destroyed before it).
  std::unique_ptr<braid::DataPath> dataPath;
  braid::RedOpRegistry redOps;
  braid::BufferRegistry registrations;  // ncclCommRegister

  // The async error, the abort flag, the last error and why another rank is lost: one
  // owner, the only writer (core/health/comm_health.h).
  braid::CommHealth health;
  std::atomic<bool> finalized{false};
  // ncclCommRevoke, by this rank or another (the watchdog passes it on): operations in
  // flight were stopped; only destroy, abort, split and shrink remain allowed. Why is in
  // revokeReason.
  std::atomic<bool> revoked{false};
  // ncclCommSuspend: the data path's buffers, connections and threads are released until
  // ncclCommResume; no operation may run.
  std::atomic<bool> suspended{false};

  // The background thread of a non-blocking init, joined by destroy/abort.
  std::thread initThread;

  // API calls inside the communicator right now (CommUse); destroy waits for them.
  std::atomic<int> activeCalls{0};

  // Guards the lifecycle notes below.
  std::mutex errorMutex;
  std::string revokeReason;  // who revoked the communicator (empty until revoked)
  int revokedBy = -1;        // that rank
  // The bytes of the id ncclCommGetUniqueId made on this rank that no ncclCommGrow has
  // used yet (empty: none outstanding), and the means to end its root early.
  std::string pendingGrowId;
  std::shared_ptr<braid::RootCancel> pendingGrowRoot;

  // Tells the other ranks when this one fails, and this one when another is lost
  // (stopped before anything its callback touches goes).
  std::unique_ptr<braid::Watchdog> watchdog;

  // Windows and one-sided operations (core/rma/rma_state.h), created with the
  // communicator, set up at the first ncclCommWindowRegister. Declared last, so destroyed
  // first: its service thread may still fail the communicator through the watchdog, and it
  // uses the data path's network backend.
  std::unique_ptr<braid::RmaState> rma;
};

namespace braid {

using Comm = ncclComm;

}  // namespace braid
