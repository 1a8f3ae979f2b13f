#include "transport/net/socket/socket_backend.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "transport/net/socket/socket_connection.h"
#include "transport/net/socket/socket_connector.h"
#include "transport/net/socket/socket_listener.h"
#include "transport/net/socket/socket_wire.h"
#include "util/host_identity.h"
#include "util/log.h"

namespace braid {

namespace {

// NetRequest is only declared by the interface, so that each backend keeps its own request
// type; the socket backend's requests are SocketRequests behind that opaque pointer.
NetRequest* toNet(SocketRequest* request) { return reinterpret_cast<NetRequest*>(request); }
SocketRequest* fromNet(NetRequest* request) { return reinterpret_cast<SocketRequest*>(request); }

// Sockets need no registration; callers only check that the handle is not null.
int gMemoryHandle = 0;

}  // namespace

class SocketNetBackend : public NetBackend {
 public:
  explicit SocketNetBackend(const SocketNetConfig& config) : config_(config) {}

  const char* name() const override { return "Socket"; }
  // Every connection keeps its own sockets and state.
  bool progressFromAnyThread() const override { return true; }
  int deviceCount() const override { return static_cast<int>(config_.interfaces.size()); }
  Status properties(int device, NetProperties* out) const override;
  Status listen(int device, NetHandle* handle, std::unique_ptr<NetListenComm>* out) override;
  Status connect(int device, const NetHandle& handle, std::unique_ptr<NetSendComm>* out) override;
  Status accept(NetListenComm& listener, std::unique_ptr<NetRecvComm>* out) override;
  Status registerMemory(NetComm& comm, void* data, size_t bytes, void** memHandle) override;
  Status deregisterMemory(NetComm& comm, void* memHandle) override;
  Status isend(NetSendComm& comm, const void* data, size_t bytes, uint32_t tag, void* memHandle,
               NetRequest** request) override;
  Status irecv(NetRecvComm& comm, void* data, size_t bytes, uint32_t tag, void* memHandle,
               NetRequest** request) override;
  Status test(NetRequest* request, bool* done, size_t* bytes) override;

 private:
  struct PendingConnect {
    NetHandle bytes;
    std::unique_ptr<SocketConnector> connector;
    Deadline abandoned = Deadline::never();
  };
  Status checkDevice(int device, const char* what) const;
  int dataSockets() const { return std::max(1, config_.nThreads) * config_.nSocksPerThread; }
  void closeAbandonedConnects();

  SocketNetConfig config_;
  std::mutex connectMutex_;  // connect() may be called from several threads
  std::map<const NetHandle*, PendingConnect> connects_;
};

Status SocketNetBackend::checkDevice(int device, const char* what) const {
  if (device < 0 || device >= deviceCount()) {
    return BRAID_ERROR(ncclInvalidArgument, "NET/Socket %s: device %d does not exist (%d device%s)", what, device,
                       deviceCount(), deviceCount() == 1 ? "" : "s");
  }
  return okStatus();
}

Status SocketNetBackend::properties(int device, NetProperties* out) const {
  BRAID_CHECK(checkDevice(device, "properties"));
  const NetInterface& iface = config_.interfaces[static_cast<size_t>(device)];
  *out = NetProperties{};
  out->name = iface.name;
  out->speedMbps = std::max(0, iface.speedMbps);
  out->maxComms = 65536;
  out->describe = "NET/Socket " + std::to_string(device) + ": " + iface.describe();
  return okStatus();
}

Status SocketNetBackend::listen(int device, NetHandle* handle, std::unique_ptr<NetListenComm>* out) {
  BRAID_CHECK(checkDevice(device, "listen"));
  const NetInterface& own = config_.interfaces[static_cast<size_t>(device)];
  std::vector<SocketAddress> bindAddrs{own.address};
  for (const NetInterface& fallback : config_.fallbacks) {
    if (bindAddrs.size() >= kSocketHandleMaxAddresses) break;
    if (!fallback.address.sameHost(own.address)) bindAddrs.push_back(fallback.address);
  }
  for (SocketAddress& address : bindAddrs) address.setPort(0);
  SocketHandle contents;
  BRAID_CHECK(randomBytes(contents.secret.data(), contents.secret.size()));
  std::unique_ptr<SocketListenComm> listener;
  BRAID_CHECK(SocketListenComm::open(bindAddrs, contents.secret, config_.security, &listener));
  contents.addresses = listener->addresses();
  encodeSocketHandle(contents, handle);
  *out = std::move(listener);
  return okStatus();
}

Status SocketNetBackend::connect(int device, const NetHandle& handle, std::unique_ptr<NetSendComm>* out) {
  out->reset();
  BRAID_CHECK(checkDevice(device, "connect"));
  std::lock_guard<std::mutex> lock(connectMutex_);
  closeAbandonedConnects();
  auto it = connects_.find(&handle);
  if (it != connects_.end() && std::memcmp(it->second.bytes.bytes, handle.bytes, kNetHandleBytes) != 0) {
    connects_.erase(it);  // the caller reused the object for another listener
    it = connects_.end();
  }
  if (it == connects_.end()) {
    SocketHandle contents;
    if (!decodeSocketHandle(handle, &contents)) {
      return BRAID_ERROR(ncclInvalidArgument, "NET/Socket connect: the handle is not a socket-transport handle");
    }
    PendingConnect pending;
    pending.bytes = handle;
    BRAID_CHECK(
        SocketConnector::start(contents, dataSockets(), config_.minChunkBytes, config_.security, &pending.connector));
    it = connects_.emplace(&handle, std::move(pending)).first;
  }
  it->second.abandoned = Deadline::afterSeconds(kAbandonedConnectSeconds);
  bool done = false;
  Status status = it->second.connector->advance(&done);
  if (!status.ok() || !done) {
    if (!status.ok()) connects_.erase(it);
    return status;
  }
  std::unique_ptr<SocketConnector> connector = std::move(it->second.connector);
  connects_.erase(it);
  SocketConnectionOptions options;
  options.sending = true;
  options.chunkFloor = config_.minChunkBytes;
  options.nThreads = config_.nThreads;
  options.helperCpus = config_.helperCpus;
  options.peer = connector->remote().toString();
  std::unique_ptr<SocketConnection> connection;
  Stream control = connector->takeControl();
  BRAID_CHECK(SocketConnection::create(std::move(control), connector->takeData(), options, &connection));
  *out = std::make_unique<SocketSendComm>(std::move(connection));
  return okStatus();
}

void SocketNetBackend::closeAbandonedConnects() {
  for (auto it = connects_.begin(); it != connects_.end();) {
    if (!it->second.abandoned.expired()) {
      ++it;
      continue;
    }
    BRAID_WARN("NET/Socket: closing a connection to %s that was not resumed for %d s (its caller gave up?)",
               it->second.connector->remote().toString().c_str(), kAbandonedConnectSeconds);
    it = connects_.erase(it);
  }
}

Status SocketNetBackend::accept(NetListenComm& listener, std::unique_ptr<NetRecvComm>* out) {
  out->reset();
  auto* socketListener = dynamic_cast<SocketListenComm*>(&listener);
  if (!socketListener) return BRAID_ERROR(ncclInvalidArgument, "NET/Socket accept: not a socket-transport listener");
  AcceptedSockets accepted;
  bool ready = false;
  BRAID_CHECK(socketListener->poll(&accepted, &ready));
  if (!ready) return okStatus();
  SocketConnectionOptions options;
  options.sending = false;
  options.chunkFloor = accepted.chunkFloor;
  options.nThreads = config_.nThreads;
  options.helperCpus = config_.helperCpus;
  options.peer = accepted.from.toString();
  std::unique_ptr<SocketConnection> connection;
  BRAID_CHECK(SocketConnection::create(std::move(accepted.control), std::move(accepted.data), options, &connection));
  *out = std::make_unique<SocketRecvComm>(std::move(connection));
  return okStatus();
}

Status SocketNetBackend::registerMemory(NetComm& /*comm*/, void* /*data*/, size_t /*bytes*/, void** memHandle) {
  if (!memHandle) return BRAID_ERROR(ncclInvalidArgument, "NET/Socket registerMemory: null memHandle");
  *memHandle = &gMemoryHandle;
  return okStatus();
}

Status SocketNetBackend::deregisterMemory(NetComm& /*comm*/, void* /*memHandle*/) { return okStatus(); }

Status SocketNetBackend::isend(NetSendComm& comm, const void* data, size_t bytes, uint32_t tag, void* /*memHandle*/,
                               NetRequest** request) {
  *request = nullptr;
  auto* sendComm = dynamic_cast<SocketSendComm*>(&comm);
  if (!sendComm) return BRAID_ERROR(ncclInvalidArgument, "NET/Socket isend: not a socket-transport connection");
  SocketRequest* posted = nullptr;
  // The payload is only read; the request type is shared with receives, hence the cast.
  Status status = sendComm->connection().post(const_cast<void*>(data), bytes, tag, &posted);
  *request = toNet(posted);
  return status;
}

Status SocketNetBackend::irecv(NetRecvComm& comm, void* data, size_t bytes, uint32_t tag, void* /*memHandle*/,
                               NetRequest** request) {
  *request = nullptr;
  auto* recvComm = dynamic_cast<SocketRecvComm*>(&comm);
  if (!recvComm) return BRAID_ERROR(ncclInvalidArgument, "NET/Socket irecv: not a socket-transport connection");
  SocketRequest* posted = nullptr;
  Status status = recvComm->connection().post(data, bytes, tag, &posted);
  *request = toNet(posted);
  return status;
}

Status SocketNetBackend::test(NetRequest* request, bool* done, size_t* bytes) {
  *done = false;
  if (!request) return BRAID_ERROR(ncclInvalidArgument, "NET/Socket test: null request");
  SocketRequest* socketRequest = fromNet(request);
  return socketRequest->connection->test(socketRequest, done, bytes);
}

Status createSocketNetBackend(const SocketNetConfig& config, std::unique_ptr<NetBackend>* out) {
  if (config.interfaces.empty()) {
    return BRAID_ERROR(ncclInvalidArgument, "NET/Socket: no network interface to use (none matched?)");
  }
  if (config.nThreads < 0 || config.nThreads > kSocketMaxThreads) {
    return BRAID_ERROR(ncclInvalidArgument, "NET/Socket: NCCL_SOCKET_NTHREADS=%d is outside 0..%d", config.nThreads,
                       kSocketMaxThreads);
  }
  if (config.nSocksPerThread < 1 || config.nSocksPerThread > kSocketMaxSocksPerThread) {
    return BRAID_ERROR(ncclInvalidArgument, "NET/Socket: NCCL_NSOCKS_PERTHREAD=%d is outside 1..%d",
                       config.nSocksPerThread, kSocketMaxSocksPerThread);
  }
  if (config.nThreads * config.nSocksPerThread > kSocketMaxSocks) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "NET/Socket: NCCL_SOCKET_NTHREADS=%d x NCCL_NSOCKS_PERTHREAD=%d = %d sockets per connection, "
                       "more than %d",
                       config.nThreads, config.nSocksPerThread, config.nThreads * config.nSocksPerThread,
                       kSocketMaxSocks);
  }
  if (config.minChunkBytes > kSocketMaxChunkFloor) {
    return BRAID_ERROR(ncclInvalidArgument, "NET/Socket: NCCL_SOCKET_MIN_TASKSIZE=%zu is more than %zu",
                       config.minChunkBytes, kSocketMaxChunkFloor);
  }
  *out = std::make_unique<SocketNetBackend>(config);
  return okStatus();
}

}  // namespace braid
