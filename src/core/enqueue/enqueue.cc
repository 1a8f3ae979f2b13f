#include "core/enqueue/enqueue.h"

#include <cstring>

#include "core/datapath/data_path.h"
#include "core/enqueue/buffer_check.h"
#include "core/enqueue/call_checks.h"
#include "core/enqueue/coll_config.h"
#include "core/enqueue/group.h"
#include "core/health/last_error.h"
#include "kernels/reduce/numeric_types.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// Runs at once, or queues into the calling thread's group.
Status submit(Comm* comm, CommTasks&& tasks) {
  if (inGroup()) {
    CommTasks& queued = groupTasksFor(comm);
    for (CollTask& t : tasks.colls) queued.colls.push_back(t);
    for (P2pTask& t : tasks.p2ps) queued.p2ps.push_back(t);
    for (auto& s : tasks.staging) queued.staging.push_back(std::move(s));
    for (DeviceStaging& s : tasks.deviceStaging) queued.deviceStaging.push_back(s);
    return okStatus();
  }
  return executeCommTasks(comm, tasks);
}

// Errors inside a group are remembered, so that ncclGroupEnd reports them too.
Status rejected(Status status) {
  if (inGroup()) recordGroupError(status);
  return status;
}

P2pTask p2pTask(bool isSend, const void* send, void* recv, size_t bytes, int peer, cudaStream_t stream) {
  P2pTask t;
  t.isSend = isSend;
  t.sendbuff = send;
  t.recvbuff = recv;
  t.bytes = bytes;
  t.peer = peer;
  t.stream = stream;
  return t;
}

// A p2p-path call's configuration: checked, with nothing for the planner to honour.
Status checkP2pConfig(const Comm* comm, const ncclCollConfig_t* config, CollFunc func, const char* fn) {
  CollCallChoice unused;
  return resolveCollConfig(config, func, fn, comm->cudaDev >= 0, &unused);
}

}  // namespace

Status enqueueCollective(Comm* comm, const CollCall& call) {
  CollCallChoice choice;
  Status checked = [&]() -> Status {
    BRAID_CHECK(checkReady(comm, call.fn));
    BRAID_CHECK(resolveCollConfig(call.config, call.func, call.fn, comm->cudaDev >= 0, &choice));
    BRAID_CHECK(checkType(call.type, call.fn));
    bool rooted = call.func == CollFunc::Broadcast || call.func == CollFunc::Reduce;
    if (rooted) BRAID_CHECK(checkRank(call.root, comm->nranks, call.fn, "root"));
    bool isRoot = rooted && call.root == comm->rank;
    // Which buffers a rank uses (NCCL's rules): Broadcast reads sendbuff on the root only,
    // Reduce writes recvbuff on the root only.
    bool needsSend = call.func != CollFunc::Broadcast || isRoot;
    bool needsRecv = call.func != CollFunc::Reduce || isRoot;
    if (needsSend) BRAID_CHECK(checkBuffer(comm, call.sendbuff, call.count, call.fn, "sendbuff"));
    if (needsRecv) BRAID_CHECK(checkBuffer(comm, call.recvbuff, call.count, call.fn, "recvbuff"));
    return okStatus();
  }();
  if (!checked.ok()) return rejected(checked);

  CollTask task;
  task.func = call.func;
  task.sendbuff = call.sendbuff;
  task.recvbuff = call.recvbuff;
  task.count = call.count;
  task.type = call.type;
  task.root = call.root < 0 ? 0 : call.root;
  task.stream = call.stream;
  task.pairs = choice.pairs;
  task.minChannels = choice.minChannels;
  task.maxChannels = choice.maxChannels;
  if (call.func != CollFunc::Broadcast && call.func != CollFunc::AllGather) {
    ResolvedOp op;
    Status resolved = comm->redOps.resolve(call.op, call.type, comm->nranks, call.fn, &op);
    if (!resolved.ok()) return rejected(resolved);
    task.op = op.kind;
    task.opArg = op.arg;
    task.scalarAtRun = op.scalarAtRun;
  }
  // Non-root ranks of a Reduce have no result: they compute into nothing, so give the
  // schedule a valid (unused) destination.
  if (call.func == CollFunc::Reduce && !task.recvbuff) task.recvbuff = const_cast<void*>(task.sendbuff);
  if (call.func == CollFunc::Broadcast && !task.sendbuff) task.sendbuff = task.recvbuff;
  BRAID_TRACE(kLogColl, "%s: sendbuff %p recvbuff %p count %zu datatype %s op %d root %d", call.fn, call.sendbuff,
              call.recvbuff, call.count, dataTypeName(call.type), static_cast<int>(call.op), call.root);
  // Outside a group the data path runs it at once, planned once; the call already holds
  // its communicator (api/api_guard.h).
  if (!inGroup() && comm->dataPath) return comm->dataPath->executeOne(task);
  CommTasks tasks;
  tasks.colls.push_back(task);
  return submit(comm, std::move(tasks));
}

Status enqueueSendRecv(Comm* comm, const char* fn, bool isSend, const void* sendbuff, void* recvbuff, size_t count,
                       ncclDataType_t type, int peer, cudaStream_t stream) {
  Status checked = [&]() -> Status {
    BRAID_CHECK(checkReady(comm, fn));
    BRAID_CHECK(checkType(type, fn));
    BRAID_CHECK(checkRank(peer, comm->nranks, fn, "peer"));
    BRAID_CHECK(checkBuffer(comm, isSend ? sendbuff : recvbuff, count, fn, isSend ? "sendbuff" : "recvbuff"));
    return okStatus();
  }();
  if (!checked.ok()) return rejected(checked);
  CommTasks tasks;
  tasks.p2ps.push_back(p2pTask(isSend, sendbuff, recvbuff, count * dataTypeSize(type), peer, stream));
  return submit(comm, std::move(tasks));
}

Status enqueueAlltoAll(Comm* comm, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t type,
                       cudaStream_t stream, const ncclCollConfig_t* config) {
  const char* fn = config ? "ncclAlltoAllConfig" : "ncclAlltoAll";
  Status checked = [&]() -> Status {
    BRAID_CHECK(checkReady(comm, fn));
    BRAID_CHECK(checkP2pConfig(comm, config, CollFunc::AlltoAll, fn));
    BRAID_CHECK(checkType(type, fn));
    BRAID_CHECK(checkBuffer(comm, sendbuff, count, fn, "sendbuff"));
    BRAID_CHECK(checkBuffer(comm, recvbuff, count, fn, "recvbuff"));
    return okStatus();
  }();
  if (!checked.ok()) return rejected(checked);
  size_t block = count * dataTypeSize(type);
  size_t n = static_cast<size_t>(comm->nranks);
  CommTasks tasks;
  const auto* send = static_cast<const uint8_t*>(sendbuff);
  auto* recv = static_cast<uint8_t*>(recvbuff);
  if (block > 0 && send == recv) {
    // In place: blocks arrive while others still have to leave; send from a copy. In GPU
    // mode the data is not there yet (the stream's earlier work makes it): the copy is made
    // on the stream when the group runs.
    if (comm->cudaDev >= 0) {
      tasks.deviceStaging.push_back({send, block * n});
    } else {
      tasks.staging.emplace_back(new uint8_t[block * n]);
      std::memcpy(tasks.staging.back().get(), send, block * n);
      send = tasks.staging.back().get();
    }
  }
  for (size_t j = 0; j < n; ++j) {
    tasks.p2ps.push_back(p2pTask(true, send + j * block, nullptr, block, static_cast<int>(j), stream));
    tasks.p2ps.push_back(p2pTask(false, nullptr, recv + j * block, block, static_cast<int>(j), stream));
  }
  return submit(comm, std::move(tasks));
}

Status enqueueGather(Comm* comm, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t type, int root,
                     cudaStream_t stream, const ncclCollConfig_t* config) {
  const char* fn = config ? "ncclGatherConfig" : "ncclGather";
  Status checked = [&]() -> Status {
    BRAID_CHECK(checkReady(comm, fn));
    BRAID_CHECK(checkP2pConfig(comm, config, CollFunc::Gather, fn));
    BRAID_CHECK(checkType(type, fn));
    BRAID_CHECK(checkRank(root, comm->nranks, fn, "root"));
    BRAID_CHECK(checkBuffer(comm, sendbuff, count, fn, "sendbuff"));
    if (comm->rank == root) BRAID_CHECK(checkBuffer(comm, recvbuff, count, fn, "recvbuff"));
    return okStatus();
  }();
  if (!checked.ok()) return rejected(checked);
  size_t block = count * dataTypeSize(type);
  CommTasks tasks;
  tasks.p2ps.push_back(p2pTask(true, sendbuff, nullptr, block, root, stream));
  if (comm->rank == root) {
    auto* recv = static_cast<uint8_t*>(recvbuff);
    for (int j = 0; j < comm->nranks; ++j) {
      tasks.p2ps.push_back(p2pTask(false, nullptr, recv + static_cast<size_t>(j) * block, block, j, stream));
    }
  }
  return submit(comm, std::move(tasks));
}

Status enqueueScatter(Comm* comm, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t type, int root,
                      cudaStream_t stream, const ncclCollConfig_t* config) {
  const char* fn = config ? "ncclScatterConfig" : "ncclScatter";
  Status checked = [&]() -> Status {
    BRAID_CHECK(checkReady(comm, fn));
    BRAID_CHECK(checkP2pConfig(comm, config, CollFunc::Scatter, fn));
    BRAID_CHECK(checkType(type, fn));
    BRAID_CHECK(checkRank(root, comm->nranks, fn, "root"));
    BRAID_CHECK(checkBuffer(comm, recvbuff, count, fn, "recvbuff"));
    if (comm->rank == root) BRAID_CHECK(checkBuffer(comm, sendbuff, count, fn, "sendbuff"));
    return okStatus();
  }();
  if (!checked.ok()) return rejected(checked);
  size_t block = count * dataTypeSize(type);
  CommTasks tasks;
  if (comm->rank == root) {
    const auto* send = static_cast<const uint8_t*>(sendbuff);
    for (int j = 0; j < comm->nranks; ++j) {
      tasks.p2ps.push_back(p2pTask(true, send + static_cast<size_t>(j) * block, nullptr, block, j, stream));
    }
  }
  tasks.p2ps.push_back(p2pTask(false, nullptr, recvbuff, block, root, stream));
  return submit(comm, std::move(tasks));
}

}  // namespace braid
