// What a benchmark program says about its collective; the harness does the rest.
#pragma once

#include <cstddef>
#include <string>

#include "common/data_pattern.h"
#include "nccl.h"

namespace braid::bench {

// Element counts for one size of the sweep.
struct Counts {
  size_t sendCount = 0;   // elements of the send buffer
  size_t recvCount = 0;   // elements of the receive buffer
  size_t paramCount = 0;  // the count passed to NCCL (the table's "count")
  // In place, both buffers live in one: sendbuff = base + rank * sendInPlaceOffset and
  // recvbuff = base + rank * recvInPlaceOffset (elements).
  size_t sendInPlaceOffset = 0;
  size_t recvInPlaceOffset = 0;
};

// One rank's call.
struct CallArgs {
  const void* sendbuff;
  void* recvbuff;
  size_t count;  // Counts::paramCount
  ncclDataType_t type;
  ncclRedOp_t op;
  int root;  // -1 for rootless collectives
  ncclComm_t comm;
  int rank;
  int nranks;
};

// One rank's buffers while a check is prepared. The harness zeroes the receive buffer (in
// place: the shared one) and `expected` first; prepare() writes the input, then describes the
// receive buffer's expected contents.
class CheckData {
 public:
  CheckData(const DataPattern& pattern, const Counts& counts, size_t eltSize, int rank, int nranks, int root,
            void* send, const void* recv, void* expected)
      : pattern_(pattern),
        counts_(counts),
        eltSize_(eltSize),
        rank_(rank),
        nranks_(nranks),
        root_(root),
        send_(send),
        recv_(recv),
        expected_(expected) {}

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  int root() const { return root_; }
  const Counts& counts() const { return counts_; }

  // send[0, count) = this rank's input elements [0, count).
  void writeInput(size_t count) { pattern_.fillInput(send_, count, rank_, 0); }
  // expected[at, at + count) = rank `of`'s input elements [offset, offset + count).
  void expectInput(size_t at, size_t count, int of, size_t offset) {
    pattern_.fillInput(expectedAt(at), count, of, offset);
  }
  // expected[at, at + count) = the reduction over all ranks of elements [offset, offset + count).
  void expectReduced(size_t at, size_t count, size_t offset) { pattern_.fillReduced(expectedAt(at), count, offset); }
  // The receive buffer must keep what it holds now (a rank that receives nothing).
  void expectUnchanged();

 private:
  void* expectedAt(size_t element) { return static_cast<char*>(expected_) + element * eltSize_; }

  const DataPattern& pattern_;
  Counts counts_;
  size_t eltSize_;
  int rank_;
  int nranks_;
  int root_;
  void* send_;
  const void* recv_;
  void* expected_;
};

class Collective {
 public:
  virtual ~Collective() = default;

  virtual const char* programName() const = 0;    // "all_reduce_perf"
  virtual bool reduces() const { return false; }  // swept over -o; otherwise redop "none"
  virtual bool rooted() const { return false; }   // swept over -r; otherwise root -1
  // nccl-tests does not check alltoall and sendrecv in place (#wrong shows N/A).
  virtual bool checksInPlace() const { return true; }
  // Non-empty: why the collective cannot run on `nranks` ranks.
  virtual std::string unsupportedReason(int /*nranks*/) const { return {}; }

  // `count` = the size of the sweep divided by the element size.
  virtual Counts counts(size_t count, size_t eltSize, int nranks) const = 0;
  // algbw = algBytes / time; busbw = algbw * busBwFactor (nccl-tests' definitions).
  virtual double algBytes(size_t paramCount, size_t eltSize, int nranks) const = 0;
  virtual double busBwFactor(int nranks) const = 0;

  // Collectives made of dependent steps run phase by phase; the harness puts each phase of
  // all of a thread's ranks (and aggregated operations) into one group.
  virtual int phases(int /*nranks*/) const { return 1; }
  virtual ncclResult_t run(const CallArgs& call, int phase) const = 0;

  virtual void prepare(CheckData& data) const = 0;
};

// Elements per rank for collectives that split the buffer between ranks: count / nranks,
// rounded down to a multiple of 16 bytes as nccl-tests does.
size_t perRankCount(size_t count, size_t eltSize, int nranks);

}  // namespace braid::bench
