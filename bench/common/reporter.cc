#include "common/reporter.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "common/json_writer.h"

namespace braid::bench {

namespace {

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

void writePlacement(JsonWriter& json, const char* name, const PlacementResult& p) {
  json.key(name).beginObject();
  json.key("time").value(p.timeUs);
  json.key("alg_bw").value(p.algBw);
  json.key("bus_bw").value(p.busBw);
  json.key("nwrong");
  if (p.wrong) {
    json.value(*p.wrong);
  } else {
    json.null();
  }
  json.endObject();
}

void writeParameters(JsonWriter& json, const RunInfo& info) {
  const Options& o = info.options;
  json.key("parameters").beginObject();
  json.key("nprocs").value(info.layout.nprocs);
  json.key("nthreads").value(o.nThreads);
  json.key("ngpus").value(o.nGpus);
  json.key("nranks").value(info.layout.nranks());
  json.key("min_bytes").value(o.minBytes);
  json.key("max_bytes").value(o.maxBytes);
  json.key("step_bytes").value(o.stepBytes);
  json.key("step_factor").value(o.stepFactor);
  json.key("iters").value(o.iters);
  json.key("warmup_iters").value(o.warmupIters);
  json.key("agg_iters").value(o.aggIters);
  json.key("cycles").value(o.cycles);
  json.key("check").value(o.check);
  json.key("ops").beginArray();
  for (BenchOp op : o.ops) json.value(opName(op));
  json.endArray();
  json.key("types").beginArray();
  for (ncclDataType_t type : o.types) json.value(typeInfo(type).name);
  json.endArray();
  json.key("root").value(o.root);
  json.key("blocking").value(o.blocking);
  json.key("average").value(o.average);
  json.key("report_cputime").value(o.reportCpuTime);
  json.key("unalign").value(o.unalign);
  json.key("parallel_init").value(o.parallelInit);
  json.key("cta_policy");
  if (o.ctaPolicy >= 0) {
    json.value(o.ctaPolicy);
  } else {
    json.null();
  }
  json.endObject();
}

}  // namespace

Reporter::Reporter(RunInfo info) : info_(std::move(info)), startTime_(utcNow()) {}

void Reporter::begin(const std::vector<RankInfo>& ranks) {
  std::lock_guard<std::mutex> lock(mutex_);
  ranks_ = ranks;
  std::string text =
      preambleText(info_.program, info_.headerVersion, info_.libraryVersion, info_.braidVersion, info_.options, ranks);
  text += tableHeader(info_.options.reportCpuTime);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

void Reporter::addRow(const Row& row, int cycle) {
  std::lock_guard<std::mutex> lock(mutex_);
  records_.push_back({row, cycle});
  std::fputs(formatRow(row).c_str(), stdout);
  std::fflush(stdout);
}

bool Reporter::finish(uint64_t outOfBounds, double avgBusBw, std::optional<double> minBusBw, const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  std::fputs(footerText(info_.program, outOfBounds, avgBusBw, minBusBw, error).c_str(), stdout);
  std::fflush(stdout);
  const bool bwFailed = minBusBw && avgBusBw < 0.9 * *minBusBw;
  std::vector<std::string> errors;
  if (!error.empty()) errors.push_back(error);
  return writeJson(outOfBounds, avgBusBw, outOfBounds > 0 || bwFailed || !error.empty(), errors);
}

void Reporter::abort(const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  uint64_t outOfBounds = 0;
  for (const Record& r : records_)
    outOfBounds += (r.row.outOfPlace.wrong.value_or(0) > 0) + (r.row.inPlace.wrong.value_or(0) > 0);
  writeJson(outOfBounds, 0, true, {error});
}

bool Reporter::writeJson(uint64_t outOfBounds, double avgBusBw, bool failed, const std::vector<std::string>& errors) {
  if (info_.options.jsonPath.empty()) return true;
  JsonWriter json;
  json.beginObject();
  json.key("schema").value("braid-bench/1");
  json.key("program").value(info_.program);
  json.key("library").beginObject();
  json.key("name").value("braid");
  json.key("version").value(info_.braidVersion);
  json.key("nccl_headers").value(info_.headerVersion);
  json.key("nccl_library").value(info_.libraryVersion);
  json.endObject();
  json.key("mode").value("host");
  json.key("command_line").beginArray();
  for (const std::string& arg : info_.args) json.value(arg);
  json.endArray();
  json.key("start_time").value(startTime_);
  json.key("end_time").value(utcNow());
  writeParameters(json, info_);
  json.key("devices").beginArray();
  for (const RankInfo& rank : ranks_) {
    json.beginObject().key("rank").value(rank.rank).key("host").value(rank.host).key("pid").value(rank.pid);
    json.key("device").value("host").key("name").value(rank.device).endObject();
  }
  json.endArray();
  json.key("results").beginArray();
  for (const Record& r : records_) {
    json.beginObject();
    json.key("size").value(r.row.size).key("count").value(r.row.count);
    json.key("type").value(r.row.type).key("redop").value(r.row.redop).key("root").value(r.row.root);
    json.key("cycle").value(r.cycle);
    writePlacement(json, "out_of_place", r.row.outOfPlace);
    writePlacement(json, "in_place", r.row.inPlace);
    if (!r.row.timestamp.empty()) json.key("timestamp").value(r.row.timestamp);
    json.endObject();
  }
  json.endArray();
  json.key("out_of_bounds").value(outOfBounds);
  json.key("average_bus_bandwidth").value(avgBusBw);
  json.key("status").value(failed ? "failed" : "ok");
  json.key("errors").beginArray();
  for (const std::string& e : errors) json.value(e);
  json.endArray();
  json.endObject();

  const std::string& path = info_.options.jsonPath;
  std::FILE* file = std::fopen(path.c_str(), "w");
  bool ok = file && std::fputs(json.text().c_str(), file) >= 0;
  if (file && std::fclose(file) != 0) ok = false;
  if (!ok) std::fprintf(stderr, "%s: cannot write %s: %s\n", info_.program.c_str(), path.c_str(), std::strerror(errno));
  return ok;
}

}  // namespace braid::bench
