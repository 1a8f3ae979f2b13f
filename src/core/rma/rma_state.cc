// RmaState: setup (signal boards, the network path), teardown and what the other parts
// share. Windows are in window_ops.cc, the operations in one_sided.cc.
#include "core/rma/rma_state.h"

#include <cstring>

#include "core/datapath/data_path.h"
#include "core/health/comm_failure.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// How long a communicator that goes waits to tell its peers' service threads.
constexpr int kGoodbyeMs = 500;

// What each rank tells the others about its signal board at setup.
struct BoardRecord {
  uint64_t shareable = 0;  // 1: the board is in a region the host's ranks can map
  int64_t pid = 0;
  int64_t fd = -1;
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t bytes = 0;
};

// What each rank tells the others when the network path starts.
struct NetworkRecord {
  uint64_t ok = 0;
  uint64_t writes = 0;  // 1: this rank can take one-sided operations as RDMA writes
  char why[256] = {};   // when not ok
  NetHandle handle;
};

}  // namespace

RmaState::RmaState(Comm& comm, RmaShape shape) : comm_(comm), shape_(shape) {}

RmaState::~RmaState() {
  // Peers hear that this rank's connections end here (unless it is being aborted: then
  // nothing waits), then the service thread goes: it writes into windows and onto the board.
  if (links_ && !comm_.health.aborted()) links_->sayGoodbye(Deadline::afterMs(kGoodbyeMs));
  service_.reset();
  links_.reset();
  std::lock_guard<std::mutex> lock(windowsMutex_);
  for (auto& window : windows_) {
    releaseExposure(*window);
    unregisterLiveWindow(window.get());
  }
  windows_.clear();
}

bool RmaState::sameHost(int peer) const {
  const auto& layout = comm_.layout;
  return layout.nodeOfRank[static_cast<size_t>(peer)] == layout.nodeOfRank[static_cast<size_t>(comm_.rank)];
}

std::string RmaState::describe(int rank) const {
  return comm_.bootstrap->peers()[static_cast<size_t>(rank)].describe();
}

RmaWaitBounds RmaState::waitBounds() const {
  RmaWaitBounds bounds;
  bounds.abort = comm_.health.abortFlag();
  bounds.timeoutSec = comm_.dataPath ? comm_.dataPath->settings().timeoutSec : 0;
  if (bounds.timeoutSec > 0) bounds.deadline = Deadline::afterSeconds(bounds.timeoutSec);
  return bounds;
}

Status RmaState::conclude(Status result) { return failOperation(&comm_, std::move(result)); }

void RmaState::failFromService(const Status& failure) {
  (void)failOperation(&comm_, failure);  // records it (the first failure wins)
}

Status RmaState::initOnce() {
  if (initialized_) return okStatus();
  int n = comm_.nranks;
  lsa_ = lsaTeam(comm_.layout.nodeOfRank, comm_.rank);
  boards_.assign(static_cast<size_t>(n), RmaBoard());
  boardMappings_.clear();
  boardMappings_.resize(static_cast<size_t>(n));
  sentThroughNetwork_.assign(static_cast<size_t>(n), 0);
  consumed_.assign(static_cast<size_t>(shape_.contexts) * static_cast<size_t>(shape_.signals) * static_cast<size_t>(n),
                   0);
  if (!hostMode()) {
    // GPU mode: windows are recorded (ncclWinGetUserPtr), nothing is mapped or signalled.
    initialized_ = true;
    return okStatus();
  }

  size_t boardBytes = RmaBoard::bytesFor(n, shape_.contexts, shape_.signals);
  std::vector<BoardRecord> records(static_cast<size_t>(n));
  BoardRecord& mine = records[static_cast<size_t>(comm_.rank)];
  Status shared = SharedRegion::create("braid-rma-board", boardBytes, &ownBoardMemory_);
  uint8_t* board = ownBoardMemory_.data();
  if (shared.ok()) {
    const SharedRegionId& id = ownBoardMemory_.id();
    mine = BoardRecord{1, id.pid, id.fd, id.device, id.inode, id.bytes};
  } else {
    // Ranks of this host then signal this one through the network, as other hosts do.
    BRAID_INFO(kLogInit, "one-sided signals: %s; this rank's signal board is private", shared.message().c_str());
    privateBoard_.assign(boardBytes / sizeof(uint64_t) + 1, 0);
    board = reinterpret_cast<uint8_t*>(privateBoard_.data());
  }
  RmaBoard::attach(board, boardBytes, n, shape_.contexts, shape_.signals, true,
                   &boards_[static_cast<size_t>(comm_.rank)]);
  BRAID_CHECK(comm_.bootstrap->allGather(records.data(), sizeof(BoardRecord)));

  uint8_t mappedAll = 1;
  for (int peer = 0; peer < n; ++peer) {
    if (peer == comm_.rank || !sameHost(peer)) continue;
    const BoardRecord& rec = records[static_cast<size_t>(peer)];
    Status mapped = rec.shareable ? Status() : Status(ncclSystemError, "its board is private");
    if (mapped.ok()) {
      SharedRegionId id{static_cast<int32_t>(rec.pid), static_cast<int32_t>(rec.fd), rec.device, rec.inode, rec.bytes};
      mapped = PeerRegionMapping::map(id, &boardMappings_[static_cast<size_t>(peer)]);
    }
    auto& mapping = boardMappings_[static_cast<size_t>(peer)];
    if (mapped.ok() && !RmaBoard::attach(mapping.data(), mapping.size(), n, shape_.contexts, shape_.signals, false,
                                         &boards_[static_cast<size_t>(peer)])) {
      mapped = Status(ncclSystemError, "its board does not have this communicator's layout");
    }
    if (!mapped.ok()) {
      mapping = PeerRegionMapping();
      mappedAll = 0;
      BRAID_INFO(kLogInit, "one-sided operations to %s go through the network: %s", describe(peer).c_str(),
                 mapped.message().c_str());
    }
  }
  std::vector<uint8_t> everyone(static_cast<size_t>(n));
  everyone[static_cast<size_t>(comm_.rank)] = mappedAll;
  BRAID_CHECK(comm_.bootstrap->allGather(everyone.data(), 1));
  bool needNetwork = comm_.layout.nNodes > 1;
  for (uint8_t ok : everyone) needNetwork |= ok == 0;
  initialized_ = true;
  BRAID_INFO(kLogInit, "one-sided operations ready: LSA team of %d rank(s); %s", lsa_.nRanks,
             needNetwork ? "ranks of other hosts, or out of memory's reach, through the network"
                         : "every rank's signals through memory");
  if (needNetwork) BRAID_CHECK(ensureNetwork());
  return okStatus();
}

Status RmaState::ensureNetwork() {
  if (networkReady_) return okStatus();
  int n = comm_.nranks;
  std::vector<NetworkRecord> records(static_cast<size_t>(n));
  NetworkRecord& mine = records[static_cast<size_t>(comm_.rank)];
  NetBackend* backend = nullptr;
  std::unique_ptr<NetListenComm> listener;
  // Every rank takes part in the exchange even when its own part failed, so that all ranks
  // fail together with the same words instead of waiting for it.
  Status local = comm_.dataPath->netBackendForRma(&backend);
  if (local.ok()) local = backend->listen(0, &mine.handle, &listener);
  mine.ok = local.ok() ? 1 : 0;
  // RDMA writes with immediate where the backend has them and every signal fits the value.
  mine.writes = local.ok() && backend->rdma() && rmaImmediateFits(shape_.contexts, shape_.signals, n) ? 1 : 0;
  if (!local.ok()) std::snprintf(mine.why, sizeof(mine.why), "%s", local.message().c_str());
  BRAID_CHECK(comm_.bootstrap->allGather(records.data(), sizeof(NetworkRecord)));
  for (int r = 0; r < n; ++r) {
    const NetworkRecord& rec = records[static_cast<size_t>(r)];
    if (!rec.ok) {
      return BRAID_ERROR(ncclSystemError, "one-sided operations need the network, and %s cannot listen: %.*s",
                         describe(r).c_str(), static_cast<int>(sizeof(rec.why)), rec.why);
    }
  }
  bool writes = true;
  for (const NetworkRecord& rec : records) writes &= rec.writes == 1;
  std::vector<NetHandle> handles(static_cast<size_t>(n));
  std::vector<std::string> names(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    handles[static_cast<size_t>(r)] = records[static_cast<size_t>(r)].handle;
    names[static_cast<size_t>(r)] = describe(r);
  }
  RmaService::Setup setup;
  setup.backend = backend;
  setup.commHash = comm_.commHash;
  setup.rank = comm_.rank;
  setup.nranks = n;
  setup.contexts = shape_.contexts;
  setup.signals = shape_.signals;
  setup.board = boards_[static_cast<size_t>(comm_.rank)];
  setup.windows = &table_;
  setup.fail = [this](const Status& failure) { failFromService(failure); };
  setup.logRank = comm_.rank;
  BRAID_CHECK(RmaService::start(std::move(setup), std::move(listener), &service_));
  auto poke = [this](int peer) {
    const RmaBoard& board = boards_[static_cast<size_t>(peer)];
    if (board.valid() && peer != comm_.rank) board.ring();
  };
  netBackend_ = backend;
  links_ = std::make_unique<RmaLinks>(backend, writes, std::move(handles), comm_.rank, comm_.commHash, std::move(names),
                                      std::move(poke));
  networkReady_ = true;
  BRAID_INFO(kLogInit | kLogNet, "one-sided network path ready (%s%s)", backend->name(),
             writes ? ", RDMA writes with immediate" : "");
  return okStatus();
}

}  // namespace braid
