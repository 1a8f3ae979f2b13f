// The order of the sweep and the table rows. The operations themselves: runner_ops.cc.
#include "common/runner.h"

#include <algorithm>
#include <ctime>

namespace braid::bench {

namespace {

std::string localTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S", &tm);
  return buffer;
}

// Per-rank values to contribute so that the reduction yields what -a asks for.
ncclRedOp_t averageOp(int mode) {
  switch (mode) {
    case 2:
      return ncclMin;
    case 3:
      return ncclMax;
    default:
      return ncclSum;  // 0: only rank 0 contributes; 1: divided by the rank count after
  }
}

}  // namespace

ThreadRunner::ThreadRunner(const RunContext& context, LocalGroup& group)
    : context_(context), options_(context.options), collective_(context.collective), group_(group) {}

RunTotals ThreadRunner::run() {
  allocate();
  registerBuffers();
  std::vector<RankInfo> ranks = group_.gatherRankInfo();
  if (context_.reporter && group_.leadsJob()) context_.reporter->begin(ranks);
  const std::vector<Test> all = tests();
  for (int cycle = 0; options_.cycles == 0 || cycle < options_.cycles; ++cycle) {
    for (const Test& test : all) runTest(test, cycle);
  }
  deregisterBuffers();
  return totals_;
}

// nccl-tests' order: types, then operations, then roots.
std::vector<ThreadRunner::Test> ThreadRunner::tests() const {
  std::vector<std::optional<BenchOp>> ops;
  if (collective_.reduces()) {
    ops.assign(options_.ops.begin(), options_.ops.end());
  } else {
    ops.push_back(std::nullopt);
  }
  std::vector<int> roots;
  if (!collective_.rooted()) {
    roots.push_back(-1);
  } else if (options_.root == kAllRoots) {
    for (int r = 0; r < group_.nranks(); ++r) roots.push_back(r);
  } else {
    roots.push_back(options_.root);
  }
  std::vector<Test> all;
  for (ncclDataType_t type : options_.types) {
    for (const auto& op : ops) {
      for (int root : roots) all.push_back({&typeInfo(type), op, root});
    }
  }
  return all;
}

void ThreadRunner::runTest(const Test& test, int cycle) {
  beginTest(test);
  if (options_.warmupIters > 0) {
    for (uint64_t size : warmupSizes(options_)) {
      const Counts counts = collective_.counts(size / test.type->size, test.type->size, group_.nranks());
      for (int w = 0; w < options_.warmupIters; ++w) {
        runOnce(test, counts, false, static_cast<size_t>(w), 1, true);
        if (context_.watch && (w & 255) == 0) context_.watch->tick();
      }
    }
  }
  for (uint64_t size : sweepSizes(options_)) measureSize(test, size, cycle);
  endTest(test);
}

void ThreadRunner::measureSize(const Test& test, uint64_t size, int cycle) {
  const size_t eltSize = test.type->size;
  const Counts counts = collective_.counts(size / eltSize, eltSize, group_.nranks());
  Timing timing[2];
  std::optional<uint64_t> wrong[2];
  for (int inPlace = 0; inPlace < 2; ++inPlace) {
    timing[inPlace] = timeLoop(test, counts, inPlace == 1);
    wrong[inPlace] = check(test, counts, inPlace == 1);
  }

  const std::vector<double> mine = {timing[0].wallSec, timing[1].wallSec, timing[0].cpuSec, timing[1].cpuSec};
  std::vector<std::vector<double>> contributions;
  for (size_t i = 0; i < group_.size(); ++i) {
    const bool contributes = options_.average != 0 || group_.rank(i) == 0;
    contributions.push_back(contributes ? mine : std::vector<double>(mine.size(), 0.0));
  }
  std::vector<double> times = group_.allReduce(std::move(contributions), averageOp(options_.average));
  if (options_.average == 1) {
    for (double& t : times) t /= group_.nranks();
  }
  const std::vector<double> myWrongs = {static_cast<double>(wrong[0].value_or(0)),
                                        static_cast<double>(wrong[1].value_or(0))};
  std::vector<double> wrongs = group_.allReduce(std::vector<std::vector<double>>(group_.size(), myWrongs), ncclSum);

  Row row = makeRow(test, counts, times, wrongs, wrong);
  for (const PlacementResult* p : {&row.outOfPlace, &row.inPlace}) {
    if (p->wrong.value_or(0) > 0) ++totals_.outOfBounds;
    totals_.busBwSum += p->busBw;
    ++totals_.busBwCount;
  }
  if (context_.reporter && group_.leadsJob()) context_.reporter->addRow(row, cycle);
}

Row ThreadRunner::makeRow(const Test& test, const Counts& counts, const std::vector<double>& times,
                          const std::vector<double>& wrongs, const std::optional<uint64_t> checked[2]) const {
  const size_t eltSize = test.type->size;
  const int nranks = group_.nranks();
  Row row;
  row.size = std::max(counts.sendCount, counts.recvCount) * eltSize;
  row.count = counts.paramCount;
  row.type = test.type->name;
  row.redop = test.op ? opName(*test.op) : "none";
  row.root = test.root;
  const double algBytes = collective_.algBytes(counts.paramCount, eltSize, nranks);
  PlacementResult* placements[2] = {&row.outOfPlace, &row.inPlace};
  for (int i = 0; i < 2; ++i) {
    PlacementResult& p = *placements[i];
    const double wallSec = times[static_cast<size_t>(i)];
    p.timeUs = (options_.reportCpuTime ? times[static_cast<size_t>(2 + i)] : wallSec) * 1e6;
    p.algBw = wallSec > 0 ? algBytes / 1e9 / wallSec : 0;
    p.busBw = p.algBw * collective_.busBwFactor(nranks);
    // Checked everywhere or nowhere: every rank runs the same code.
    if (checked[i]) p.wrong = static_cast<uint64_t>(wrongs[static_cast<size_t>(i)]);
  }
  if (options_.reportTimestamps) row.timestamp = localTimestamp();
  return row;
}

}  // namespace braid::bench
