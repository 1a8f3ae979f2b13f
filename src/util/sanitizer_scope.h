// Under ThreadSanitizer, a scope whose memory accesses the tool neither checks nor records.
// For one thing only: a thread that writes into memory on behalf of another process (the
// one-sided service receiving a peer's put into a window). The order between that write and
// this process's earlier reads of the window is set by the peers' protocol across processes
// (a signal, another put), which ThreadSanitizer cannot see; an RDMA write or another
// process's store into shared memory is not seen at all, and this receive is the same kind
// of access. Elsewhere, and in every other build, it does nothing.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define BRAID_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BRAID_TSAN 1
#endif
#endif

#ifdef BRAID_TSAN
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

namespace braid {

class ForeignWriteScope {
 public:
#ifdef BRAID_TSAN
  ForeignWriteScope() { __tsan_ignore_thread_begin(); }
  ~ForeignWriteScope() { __tsan_ignore_thread_end(); }
#else
  ForeignWriteScope() = default;
#endif
  ForeignWriteScope(const ForeignWriteScope&) = delete;
  ForeignWriteScope& operator=(const ForeignWriteScope&) = delete;
};

}  // namespace braid
