// A communicator's windows and one-sided operations (NCCL 2.29's ncclPutSignal,
// ncclSignal, ncclWaitSignal over windows from ncclCommWindowRegister), in host mode.
//
// Set up at the first window registration, which is collective (as NCCL's: ncclSignal and
// ncclWaitSignal before it are ncclInvalidUsage): every rank creates its signal board
// (rma_board.h) in shareable memory and maps the boards of the ranks of its host. Then:
//
//  - Between ranks of one host whose boards are mapped: a put copies into the target's
//    window through this rank's mapping of it (windows over ncclMemAlloc memory are mapped
//    at registration) and a signal is an atomic increment on the target's board. The call
//    returns when both are done.
//  - Otherwise (other hosts; windows over plain memory; a host whose /proc does not let
//    ranks map each other): through the network backend to the target's RMA service
//    thread (rma_service.h, rma_links.h), started on every rank the first time any rank may
//    need it (decided from what all ranks tell each other at setup and registration).
//
// Ordering (NCCL's): a signal is counted only after the data of the puts that preceded it
// from the same rank. Network operations to one target travel on one ordered connection;
// before a direct signal to a rank that operations were also sent to through the network,
// the sender waits until that rank's board says they are applied. ncclWaitSignal consumes:
// each wait takes the counts it waited for, later waits need new signals.
//
// Every wait obeys BRAID_TIMEOUT, the abort flag and the watchdog (a dead peer raises the
// abort flag); a failed operation fails the communicator as a failed collective does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/lifecycle/comm.h"
#include "core/rma/lsa_team.h"
#include "core/rma/rma_board.h"
#include "core/rma/rma_links.h"
#include "core/rma/rma_service.h"
#include "core/rma/window.h"
#include "nccl.h"
#include "util/shared_region.h"

namespace braid {

// NCCL's defaults for ncclConfig_t's numRmaCtx and numRmaSig (1 each: context 0, signal
// index 0). The limits of a communicator come from its config when that has the fields.
struct RmaShape {
  int contexts = 1;
  int signals = 1;
};

class RmaState {
 public:
  RmaState(Comm& comm, RmaShape shape);
  ~RmaState();
  RmaState(const RmaState&) = delete;
  RmaState& operator=(const RmaState&) = delete;

  const RmaShape& shape() const { return shape_; }
  bool initialized() const { return initialized_; }
  Team lsa() const { return lsa_; }

  // Collective. `flags`: NCCL_WIN_* (checked by the caller).
  Status registerWindow(void* buffer, size_t bytes, int flags, Window** out);
  // Collective: returns once no operation into the window is in flight anywhere.
  Status deregisterWindow(Window* window);
  // The window whose local part contains [ptr, ptr + bytes).
  Window* findLocal(const void* ptr, size_t bytes, size_t* offset);
  // A live window by its number; null when none.
  Window* findById(uint64_t id);
  // Whether a live window has every rank's part mapped by every rank (Window::mappedByAll).
  bool hasWindowMappedByAll();

  // ncclGetPeerDevicePointer in host mode (arguments checked by the caller).
  Status peerPointer(const Window& window, size_t offset, int peer, void** out) const;

  // One-sided operations (arguments checked by the caller). Host mode only.
  Status putSignal(const void* local, size_t bytes, int peer, Window& window, size_t offset, int context, int signal);
  Status signal(int peer, int context, int signal);
  Status waitSignal(const std::vector<ncclWaitSignalDesc_t>& descs);

 private:
  // One-time setup at the first registration (collective).
  Status initOnce();
  // Listeners, handle exchange and service threads on every rank (collective; idempotent).
  Status ensureNetwork();
  bool hostMode() const { return comm_.cudaDev < 0; }
  bool sameHost(int peer) const;
  std::string describe(int rank) const;
  RmaWaitBounds waitBounds() const;
  // Ends a failed one-sided operation as failed collectives end (comm_failure.h).
  Status conclude(Status result);
  // From the service thread: a peer broke the protocol.
  void failFromService(const Status& failure);

  // Waits until done() (checked again after every ring of `board`'s doorbell), the abort
  // flag or BRAID_TIMEOUT; `pending` says what is still awaited, for the error.
  Status waitUntil(const RmaBoard& board, const std::function<bool()>& done,
                   const std::function<std::string()>& pending, const char* fn);
  // Sends through the network (connecting first when needed).
  Status sendThroughNetwork(int peer, const RmaRecord& record, const void* data);
  // Before a direct signal to `peer`: what went to it through the network has landed.
  Status awaitNetworkApplied(int peer);
  // Where a direct put to `peer`'s part of `window` lands, or null (network path).
  uint8_t* directTarget(const Window& window, int peer, size_t offset) const;

  // The collective part of a registration: exchange, mappings, the network when needed.
  Status completeRegistration(Window& window);
  // Connections made for writes: exposes this rank's part of `window` for remote writes
  // and tells every rank where each part is (collective).
  Status exposeWindow(Window& window);
  void releaseExposure(Window& window);
  // A put or signal as RDMA writes with immediate (connections made for writes).
  Status putByWrites(const uint8_t* data, size_t bytes, int peer, const Window& window, size_t offset, int context,
                     int signal);
  Status writeThroughNetwork(int peer, uint32_t immediate, const void* data, size_t bytes, uint64_t remoteAddr,
                             uint32_t rkey);

  Comm& comm_;
  RmaShape shape_;
  Team lsa_;
  bool initialized_ = false;

  // The signal boards: this rank's, and those of the ranks of this host mapped here.
  SharedRegion ownBoardMemory_;
  std::vector<uint64_t> privateBoard_;            // where no shareable memory could be made
  std::vector<PeerRegionMapping> boardMappings_;  // by rank
  std::vector<RmaBoard> boards_;                  // by rank; invalid where not mapped

  // The network path (once ensureNetwork ran).
  bool networkReady_ = false;
  NetBackend* netBackend_ = nullptr;
  std::unique_ptr<RmaLinks> links_;
  std::unique_ptr<RmaService> service_;
  std::vector<uint64_t> sentThroughNetwork_;  // operations, by target

  // ncclWaitSignal: counts taken so far, by (context, signal, from).
  std::vector<uint64_t> consumed_;

  std::mutex windowsMutex_;
  std::list<std::unique_ptr<Window>> windows_;
  uint64_t nextWindowId_ = 1;
  WindowTable table_;  // what the service thread may write into
};

}  // namespace braid
