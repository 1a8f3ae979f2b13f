// A channel's network connections that its worker thread may move itself (host mode,
// backends that allow it; transport/net/proxy.h, Proxy::assist). Without it every network
// step crosses two threads on each side: the worker publishes, the proxy thread notices
// and sends; the proxy thread receives, publishes, and wakes the worker. On a machine with
// fewer cores than threads each of those handoffs costs a wake-up, and a small
// all-reduce's hops are nothing but handoffs. With it the worker sends what it publishes
// at once and takes in what it waits for; the proxy still moves whatever the worker does
// not (data left to send after an operation, steps it asked for ahead).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/primitives/conn_fifo.h"
#include "transport/connector.h"
#include "transport/net/proxy.h"

namespace braid {

class NetAssist {
 public:
  // Adds `connector` when it is a network connection the worker may move (no-op otherwise).
  void add(Connector* connector) {
    Proxy* proxy = nullptr;
    NetEndpoint* endpoint = nullptr;
    if (!connector || !connector->assistable(&proxy, &endpoint)) return;
    entries_.push_back({reinterpret_cast<const uint8_t*>(endpoint->shared), proxy, endpoint});
  }
  bool empty() const { return entries_.empty(); }

  // Moves the connection whose counter (tail, head, requested: all in its ConnShared)
  // `counter` is; nothing for counters of other connections.
  void kick(const void* counter) const {
    if (const Entry* e = find(counter)) e->proxy->assist(*e->endpoint);
  }

  // After this thread published `value` to `counter`: a small step goes out at once. A large
  // one is left to the proxy thread, which sends it while this thread goes on with the next
  // chunk (on a core of its own, when there is one).
  void kickPublished(uint64_t* counter, uint64_t value) const {
    const Entry* e = find(counter);
    if (!e) return;
    ConnShared* shared = e->endpoint->shared;
    if (counter == &shared->tail && value > 0 &&
        __atomic_load_n(&shared->sizes[(value - 1) % kSteps], __ATOMIC_RELAXED) > kInlineSendBytes) {
      return;
    }
    e->proxy->assist(*e->endpoint);
  }

  // Steps up to this size are sent by the thread that publishes them.
  static constexpr uint32_t kInlineSendBytes = 64 << 10;

 private:
  struct Entry {
    const uint8_t* shared;
    Proxy* proxy;
    NetEndpoint* endpoint;
  };
  const Entry* find(const void* counter) const {
    const auto* at = static_cast<const uint8_t*>(counter);
    for (const Entry& e : entries_) {
      if (at >= e.shared && at < e.shared + sizeof(ConnShared)) return &e;
    }
    return nullptr;
  }

  std::vector<Entry> entries_;
};

}  // namespace braid
