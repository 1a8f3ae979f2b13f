#include "transport/net/ib/ib_backend.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "transport/net/ib/ib_comm.h"
#include "transport/net/ib/ib_device.h"
#include "transport/net/net_rdma.h"
#include "util/format.h"
#include "util/host_identity.h"
#include "util/log.h"
#include "util/socket.h"

namespace braid {

namespace {

// What a NetHandle of this backend holds.
struct IbHandle {
  static constexpr uint32_t kMagic = 0x49424e48;  // "IBNH"
  uint32_t magic = kMagic;
  uint32_t device = 0;
  uint64_t cookie = 0;
  uint8_t address[SocketAddress::kWireBytes] = {};
};
static_assert(sizeof(IbHandle) <= kNetHandleBytes);

// Work queue depths: every request in flight may have a piece on each QP, and the
// receiver's first QP also carries the clear-to-send writes.
constexpr int kSendDepth = 2 * kNetMaxRequests;
constexpr int kRecvDepth = kNetMaxRequests;

class IbListenComm : public NetListenComm {
 public:
  struct Pending {
    Stream stream;
    SocketAddress from;
    IbWireInfo info;
    size_t received = 0;
    Deadline expires = Deadline::never();
  };
  StreamListener listener;
  SocketAddress address;
  uint64_t cookie = 0;
  int device = 0;
  std::vector<Pending> pending;
  std::string peerDescription() const override { return "IB listener on " + address.toString(); }
};

}  // namespace

class IbNetBackend : public NetBackend, public NetRdma {
 public:
  IbNetBackend(const IbvApi& api, IbNetConfig config) : api_(api), config_(std::move(config)) {}

  Status open() {
    for (const IbPort& port : config_.ports) {
      std::shared_ptr<IbDevice> device;
      BRAID_CHECK(IbDevice::open(api_, port, config_.sysfsRoot, config_.gid, &device));
      devices_.push_back(std::move(device));
    }
    return okStatus();
  }

  const char* name() const override { return "IB"; }
  int deviceCount() const override { return static_cast<int>(devices_.size()); }
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
  NetRdma* rdma() override { return this; }

  // NetRdma: one-sided operations as RDMA writes with immediate.
  Status exposeMemory(int device, void* data, size_t bytes, NetRemoteKey* key, void** handle) override;
  Status unexposeMemory(int device, void* handle) override;
  Status connectForWrites(int device, const NetHandle& handle, std::unique_ptr<NetSendComm>* out) override {
    return connectAs(device, handle, /*writesOnly=*/true, out);
  }
  bool carriesWrites(NetRecvComm& comm) const override {
    auto* recv = dynamic_cast<IbRecvComm*>(&comm);
    return recv && recv->writesOnly();
  }
  Status iwrite(NetSendComm& comm, const void* data, size_t bytes, void* memHandle, uint64_t remoteAddr, uint32_t rkey,
                uint32_t immediate, NetRequest** request) override;
  Status takeImmediates(NetRecvComm& comm, std::vector<uint32_t>* out) override;

 private:
  struct PendingConnect {
    NetHandle bytes;
    std::unique_ptr<IbSendComm> comm;
    IbWireInfo info;
    size_t sent = 0;
    UniqueFd fd;    // while TCP connects
    Stream stream;  // then, until its handshake is done and it is attached to comm
    bool tcpConnected = false;
    bool writesOnly = false;
    SocketAddress remote;
  };
  Status connectAs(int device, const NetHandle& handle, bool writesOnly, std::unique_ptr<NetSendComm>* out);
  Status checkDevice(int device, const char* what) const {
    if (device < 0 || device >= deviceCount()) {
      return BRAID_ERROR(ncclInvalidArgument, "NET/IB %s: device %d does not exist (%d devices)", what, device,
                         deviceCount());
    }
    return okStatus();
  }
  Status startConnect(int device, const NetHandle& handle, PendingConnect* pending);
  Status advanceConnect(PendingConnect& pending, bool* done);
  Status admit(IbListenComm& listener, IbListenComm::Pending& pending, std::unique_ptr<NetRecvComm>* out);
  static IbCommCore* core(NetComm& comm) {
    if (auto* send = dynamic_cast<IbSendComm*>(&comm)) return send;
    return dynamic_cast<IbRecvComm*>(&comm);
  }

  const IbvApi& api_;
  IbNetConfig config_;
  std::vector<std::shared_ptr<IbDevice>> devices_;
  std::mutex connectMutex_;
  std::map<const NetHandle*, PendingConnect> connects_;
};

Status IbNetBackend::properties(int device, NetProperties* out) const {
  BRAID_CHECK(checkDevice(device, "properties"));
  const IbDevice& dev = *devices_[static_cast<size_t>(device)];
  *out = NetProperties{};
  out->name = dev.port().device;
  out->pciPath = dev.port().pciPath;
  out->speedMbps = dev.port().speedMbps;
  out->port = dev.port().port;
  out->maxComms = 65536;
  out->describe = strFormat("NET/IB %d: %s, GID index %d (%s %s)", device, dev.port().describe().c_str(),
                            dev.gid().index, gidToString(dev.gid().gid).c_str(), gidTypeName(dev.gid().type));
  return okStatus();
}

Status IbNetBackend::listen(int device, NetHandle* handle, std::unique_ptr<NetListenComm>* out) {
  BRAID_CHECK(checkDevice(device, "listen"));
  auto listener = std::make_unique<IbListenComm>();
  SocketAddress bindAddr = config_.setupAddress;
  bindAddr.setPort(0);
  BRAID_CHECK(listener->listener.open(bindAddr, config_.security, "NET/IB setup listener"));
  listener->address = listener->listener.address();
  BRAID_CHECK(randomBytes(&listener->cookie, sizeof(listener->cookie)));
  listener->device = device;
  IbHandle contents;
  contents.device = static_cast<uint32_t>(device);
  contents.cookie = listener->cookie;
  listener->address.toWire(contents.address);
  *handle = NetHandle{};
  std::memcpy(handle->bytes, &contents, sizeof(contents));
  *out = std::move(listener);
  return okStatus();
}

Status IbNetBackend::startConnect(int device, const NetHandle& handle, PendingConnect* pending) {
  IbHandle contents;
  std::memcpy(&contents, handle.bytes, sizeof(contents));
  if (contents.magic != IbHandle::kMagic || !SocketAddress::fromWire(contents.address, &pending->remote)) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "NET/IB connect: the handle is not an IB-transport handle (NCCL_NET "
                       "differs between ranks?)");
  }
  pending->bytes = handle;
  pending->fd.reset(::socket(pending->remote.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!pending->fd.valid()) {
    return BRAID_ERROR(ncclSystemError, "NET/IB connect: socket() failed: %s", std::strerror(errno));
  }
  int one = 1;
  setsockopt(pending->fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (::connect(pending->fd.get(), pending->remote.sockaddrPtr(), pending->remote.length()) == 0) {
    pending->tcpConnected = true;
    BRAID_CHECK(config_.security->wrap(std::move(pending->fd), /*connecting=*/true, &pending->stream));
  } else if (errno != EINPROGRESS) {
    return BRAID_ERROR(ncclRemoteError, "NET/IB: cannot reach the listener at %s: %s",
                       pending->remote.toString().c_str(), std::strerror(errno));
  }
  std::unique_ptr<IbQpSet> qps;
  BRAID_CHECK(IbQpSet::create(devices_[static_cast<size_t>(device)], config_.qp, kSendDepth, kRecvDepth, &qps));
  BRAID_CHECK(IbSendComm::create(std::move(qps), pending->remote.toString(), pending->writesOnly, &pending->comm));
  pending->info = pending->comm->setupInfo(contents.cookie);
  return okStatus();
}

Status IbNetBackend::advanceConnect(PendingConnect& pending, bool* done) {
  *done = false;
  if (!pending.tcpConnected) {
    pollfd p{pending.fd.get(), POLLOUT, 0};
    if (::poll(&p, 1, 0) <= 0) return okStatus();
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(pending.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      return BRAID_ERROR(ncclRemoteError, "NET/IB: cannot reach the listener at %s: %s",
                         pending.remote.toString().c_str(), std::strerror(err));
    }
    pending.tcpConnected = true;
    BRAID_CHECK(config_.security->wrap(std::move(pending.fd), /*connecting=*/true, &pending.stream));
  }
  if (pending.stream) {
    bool ready = false;
    Status step = pending.stream->handshake(&ready);
    if (!step.ok()) {
      return BRAID_ERROR(step.code(), "NET/IB: setting up a connection to %s: %s", pending.remote.toString().c_str(),
                         step.message().c_str());
    }
    if (!ready) return okStatus();
    pending.comm->attachSetup(std::move(pending.stream));
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(&pending.info);
  while (pending.sent < sizeof(pending.info)) {
    size_t sent = 0;
    BRAID_CHECK(socketTrySend(pending.comm->setupStream(), bytes + pending.sent, sizeof(pending.info) - pending.sent,
                              &sent, pending.remote.toString()));
    if (sent == 0) return okStatus();
    pending.sent += sent;
  }
  *done = true;
  return okStatus();
}

Status IbNetBackend::connect(int device, const NetHandle& handle, std::unique_ptr<NetSendComm>* out) {
  return connectAs(device, handle, /*writesOnly=*/false, out);
}

Status IbNetBackend::connectAs(int device, const NetHandle& handle, bool writesOnly,
                               std::unique_ptr<NetSendComm>* out) {
  out->reset();
  BRAID_CHECK(checkDevice(device, "connect"));
  std::lock_guard<std::mutex> lock(connectMutex_);
  auto it = connects_.find(&handle);
  if (it != connects_.end() && (std::memcmp(it->second.bytes.bytes, handle.bytes, kNetHandleBytes) != 0 ||
                                it->second.writesOnly != writesOnly)) {
    connects_.erase(it);  // the caller reused the object for another listener
    it = connects_.end();
  }
  if (it == connects_.end()) {
    PendingConnect pending;
    pending.writesOnly = writesOnly;
    BRAID_CHECK(startConnect(device, handle, &pending));
    it = connects_.emplace(&handle, std::move(pending)).first;
  }
  bool done = false;
  Status status = advanceConnect(it->second, &done);
  if (!status.ok() || !done) {
    if (!status.ok()) connects_.erase(it);
    return status;
  }
  *out = std::move(it->second.comm);
  connects_.erase(it);
  return okStatus();
}

Status IbNetBackend::admit(IbListenComm& listener, IbListenComm::Pending& pending, std::unique_ptr<NetRecvComm>* out) {
  std::string peer = pending.from.toString();
  if (pending.info.cookie != listener.cookie) {
    BRAID_WARN("NET/IB: %s sent a connection setup for another listener; closed", peer.c_str());
    return okStatus();
  }
  std::unique_ptr<IbQpSet> qps;
  BRAID_CHECK(
      IbQpSet::create(devices_[static_cast<size_t>(listener.device)], config_.qp, kSendDepth, kRecvDepth, &qps));
  IbWireInfo reply;
  reply.cookie = listener.cookie;
  qps->describe(&reply);
  peer += strFormat(" (%.*s)", static_cast<int>(sizeof(pending.info.device)), pending.info.device);
  ByteStream& setup = *pending.stream;
  std::unique_ptr<IbRecvComm> comm;
  BRAID_CHECK(IbRecvComm::create(std::move(qps), std::move(pending.stream), peer, pending.info, &comm));
  // A fresh socket's buffer takes this small message at once; the deadline only guards.
  BRAID_CHECK(socketSendAll(setup, &reply, sizeof(reply), Deadline::afterSeconds(30), nullptr, peer));
  *out = std::move(comm);
  return okStatus();
}

Status IbNetBackend::accept(NetListenComm& base, std::unique_ptr<NetRecvComm>* out) {
  out->reset();
  auto* listener = dynamic_cast<IbListenComm*>(&base);
  if (!listener) return BRAID_ERROR(ncclInvalidArgument, "NET/IB accept: not an IB-transport listener");
  while (true) {
    IbListenComm::Pending pending;
    if (!listener->listener.accept(&pending.stream, &pending.from).ok() || !pending.stream) break;
    pending.expires = Deadline::afterSeconds(30);
    listener->pending.push_back(std::move(pending));
  }
  for (size_t i = 0; i < listener->pending.size(); ++i) {
    IbListenComm::Pending& pending = listener->pending[i];
    auto* bytes = reinterpret_cast<uint8_t*>(&pending.info);
    size_t got = 0;
    Status read = okStatus();
    while (pending.received < sizeof(pending.info)) {
      read = socketTryRecv(*pending.stream, bytes + pending.received, sizeof(pending.info) - pending.received, &got,
                           pending.from.toString());
      if (!read.ok() || got == 0) break;
      pending.received += got;
    }
    bool complete = pending.received == sizeof(pending.info);
    if (!read.ok() || (!complete && pending.expires.expired())) {
      BRAID_WARN("NET/IB: dropped a connection setup from %s (%s)", pending.from.toString().c_str(),
                 read.ok() ? "no complete message within 30 s" : read.message().c_str());
      listener->pending.erase(listener->pending.begin() + static_cast<long>(i));
      return okStatus();
    }
    if (!complete) continue;
    IbListenComm::Pending ready = std::move(pending);
    listener->pending.erase(listener->pending.begin() + static_cast<long>(i));
    return admit(*listener, ready, out);
  }
  return okStatus();
}

Status IbNetBackend::registerMemory(NetComm& comm, void* data, size_t bytes, void** memHandle) {
  if (!memHandle) return BRAID_ERROR(ncclInvalidArgument, "NET/IB registerMemory: null memHandle");
  IbCommCore* ib = core(comm);
  if (!ib) return BRAID_ERROR(ncclInvalidArgument, "NET/IB registerMemory: not an IB-transport connection");
  IbMemoryRegion* region = nullptr;
  BRAID_CHECK(ib->device().registerMemory(data, bytes, &region));
  *memHandle = region;
  return okStatus();
}

Status IbNetBackend::deregisterMemory(NetComm& comm, void* memHandle) {
  IbCommCore* ib = core(comm);
  if (!ib) return BRAID_ERROR(ncclInvalidArgument, "NET/IB deregisterMemory: not an IB-transport connection");
  return ib->device().release(static_cast<IbMemoryRegion*>(memHandle));
}

Status IbNetBackend::isend(NetSendComm& comm, const void* data, size_t bytes, uint32_t tag, void* memHandle,
                           NetRequest** request) {
  *request = nullptr;
  auto* send = dynamic_cast<IbSendComm*>(&comm);
  if (!send) return BRAID_ERROR(ncclInvalidArgument, "NET/IB isend: not an IB-transport connection");
  return send->isend(data, bytes, tag, static_cast<IbMemoryRegion*>(memHandle), request);
}

Status IbNetBackend::irecv(NetRecvComm& comm, void* data, size_t bytes, uint32_t tag, void* memHandle,
                           NetRequest** request) {
  *request = nullptr;
  auto* recv = dynamic_cast<IbRecvComm*>(&comm);
  if (!recv) return BRAID_ERROR(ncclInvalidArgument, "NET/IB irecv: not an IB-transport connection");
  return recv->irecv(data, bytes, tag, static_cast<IbMemoryRegion*>(memHandle), request);
}

Status IbNetBackend::test(NetRequest* request, bool* done, size_t* bytes) {
  *done = false;
  if (!request) return BRAID_ERROR(ncclInvalidArgument, "NET/IB test: null request");
  auto* req = reinterpret_cast<IbRequest*>(request);
  return req->owner->test(req, done, bytes);
}

Status IbNetBackend::exposeMemory(int device, void* data, size_t bytes, NetRemoteKey* key, void** handle) {
  *key = NetRemoteKey{};
  *handle = nullptr;
  BRAID_CHECK(checkDevice(device, "exposeMemory"));
  IbMemoryRegion* region = nullptr;
  // The cache registers for remote write; the writer's bounds are the exposed range, the
  // region (whole pages) may be larger.
  BRAID_CHECK(devices_[static_cast<size_t>(device)]->registerMemory(data, bytes, &region));
  key->addr = reinterpret_cast<uintptr_t>(data);
  key->bytes = bytes;
  key->rkey = region->mr->rkey;
  key->writable = 1;
  *handle = region;
  return okStatus();
}

Status IbNetBackend::unexposeMemory(int device, void* handle) {
  BRAID_CHECK(checkDevice(device, "unexposeMemory"));
  return devices_[static_cast<size_t>(device)]->release(static_cast<IbMemoryRegion*>(handle));
}

Status IbNetBackend::iwrite(NetSendComm& comm, const void* data, size_t bytes, void* memHandle, uint64_t remoteAddr,
                            uint32_t rkey, uint32_t immediate, NetRequest** request) {
  *request = nullptr;
  auto* send = dynamic_cast<IbSendComm*>(&comm);
  if (!send) return BRAID_ERROR(ncclInvalidArgument, "NET/IB write: not an IB-transport connection");
  return send->write(data, bytes, static_cast<IbMemoryRegion*>(memHandle), remoteAddr, rkey, immediate, request);
}

Status IbNetBackend::takeImmediates(NetRecvComm& comm, std::vector<uint32_t>* out) {
  auto* recv = dynamic_cast<IbRecvComm*>(&comm);
  if (!recv) return BRAID_ERROR(ncclInvalidArgument, "NET/IB: not an IB-transport connection");
  return recv->takeImmediates(out);
}

Status probeIbPorts(const std::string& sysfsRoot, const std::string& hcaSpec, const IbvApi** api,
                    std::vector<IbPort>* ports, std::string* whyNot) {
  ports->clear();
  whyNot->clear();
  Status loaded = loadIbvApi(api);
  if (!loaded.ok()) {
    *whyNot = loaded.message();
    return okStatus();
  }
  std::vector<IbPort> all;
  std::vector<std::string> notes;
  BRAID_CHECK(listIbPorts(**api, sysfsRoot, &all, &notes));
  for (const std::string& note : notes) BRAID_INFO(kLogInit | kLogNet, "NET/IB : skipping %s", note.c_str());
  *ports = filterPorts(all, hcaSpec);
  if (all.empty()) {
    *whyNot = "no ACTIVE InfiniBand/RoCE port";
  } else if (ports->empty()) {
    *whyNot = strFormat("NCCL_IB_HCA=%s leaves none of the %zu ACTIVE ports", hcaSpec.c_str(), all.size());
  }
  return okStatus();
}

Status createIbNetBackend(const IbvApi& api, const IbNetConfig& config, std::unique_ptr<NetBackend>* out) {
  if (config.ports.empty()) return BRAID_ERROR(ncclInvalidArgument, "NET/IB: no port to use");
  if (config.qp.qpsPerConnection < 1 || config.qp.qpsPerConnection > kIbMaxQpsPerConnection) {
    return BRAID_ERROR(ncclInvalidArgument, "NET/IB: NCCL_IB_QPS_PER_CONNECTION=%d is outside 1..%d",
                       config.qp.qpsPerConnection, kIbMaxQpsPerConnection);
  }
  auto backend = std::make_unique<IbNetBackend>(api, config);
  BRAID_CHECK(backend->open());
  *out = std::move(backend);
  return okStatus();
}

}  // namespace braid
