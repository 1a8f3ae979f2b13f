// The printed layout, pinned to nccl-tests' (the lines below are nccl-tests' own output, from
// its format strings).
#include "common/report.h"

#include <gtest/gtest.h>

#include "common/json_writer.h"

namespace braid::bench {
namespace {

TEST(BenchReport, TableHeaderIsNcclTests) {
  EXPECT_EQ(
      tableHeader(false),
      "#\n"
      "#                                                              out-of-place                       in-place  "
      "        \n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   "
      "busbw  #wrong \n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  "
      "(GB/s)         \n");
  EXPECT_NE(tableHeader(true).find("  cputime   algbw"), std::string::npos);
}

TEST(BenchReport, RowsAreNcclTests) {
  Row row;
  row.size = 8;
  row.count = 2;
  row.type = "float";
  row.redop = "sum";
  row.root = -1;
  row.outOfPlace = {10.12, 0.001, 0.001, 0};
  row.inPlace = {9.87, 0, 0, 0};
  EXPECT_EQ(formatRow(row),
            "           8             2     float     sum      -1    10.12    0.00    0.00       0     9.87    0.00    "
            "0.00       0\n");
  row.size = 134217728;
  row.count = 33554432;
  row.outOfPlace = {1234.56, 108.72, 190.26, 0};
  row.inPlace = {1230.01, 109.12, 190.96, 0};
  EXPECT_EQ(formatRow(row),
            "   134217728      33554432     float     sum      -1  1234.56  108.72  190.26       0  1230.01  109.12  "
            "190.96       0\n");
}

TEST(BenchReport, UncheckedShowsNotApplicable) {
  Row row;
  row.type = "int8";
  row.redop = "none";
  row.root = 3;
  row.outOfPlace = {1, 2, 3, std::nullopt};
  row.inPlace = {1, 2, 3, 5};
  EXPECT_EQ(formatRow(row),
            "           0             0      int8    none       3     1.00    2.00    3.00     N/A     1.00    2.00    "
            "3.00       5\n");
}

TEST(BenchReport, NumbersNarrowToFit) {
  EXPECT_EQ(formatNumber(1234.567, 7), "1234.57");
  EXPECT_EQ(formatNumber(12345.67, 7), "12345.7");
  EXPECT_EQ(formatNumber(123456.7, 7), "123457");
  EXPECT_EQ(formatNumber(1234567.0, 7), "1234567");
  EXPECT_EQ(formatNumber(12345678.0, 7), "1.2e+07");
  EXPECT_EQ(formatNumber(108.72, 6), "108.72");
  EXPECT_EQ(formatNumber(1000.5, 6), "1000.5");
  EXPECT_EQ(formatNumber(123456.0, 6), "123456");
  EXPECT_EQ(formatNumber(1234567.0, 6), "1e+06");
  EXPECT_EQ(formatNumber(0, 6), "0.00");
}

TEST(BenchReport, PreambleLines) {
  Options o;
  o.minBytes = o.maxBytes = 8;
  std::string text = preambleText("all_reduce_perf", 22700, 22700, "0.1.0", o, {{0, 12345, "node1", "CPU X"}});
  EXPECT_EQ(text,
            "# braid-bench version 0.1.0 nccl-headers=22700 nccl-library=22700\n"
            "# Collective test starting: all_reduce_perf\n"
            "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 1048576(bytes) warmup iters: 1 iters: 20 agg iters: 1 "
            "validation: 1 graph: 0 unalign: 0\n"
            "#\n"
            "# Using devices\n"
            "#  Rank  0 Group  0 Pid  12345 on      node1 device host [host] CPU X\n");
  o.stepFactor = 2;
  o.blocking = 1;
  text = preambleText("x", 1, 1, "v", o, {});
  EXPECT_NE(text.find(" step: 2(factor) "), std::string::npos);
  EXPECT_NE(text.find("# Blocking Enabled"), std::string::npos);
}

TEST(BenchReport, Footer) {
  EXPECT_EQ(footerText("all_reduce_perf", 0, 95.1234, std::nullopt, ""),
            "# Out of bounds values : 0 OK\n"
            "# Avg bus bandwidth    : 95.1234 \n"
            "#\n"
            "# Collective test concluded: all_reduce_perf\n"
            "#\n"
            "\n");
  const std::string failed = footerText("x", 3, 1.0, 10.0, "boom");
  EXPECT_NE(failed.find("# Out of bounds values : 3 FAILED\n"), std::string::npos);
  EXPECT_NE(failed.find("# Avg bus bandwidth    : 1 FAILED\n"), std::string::npos);
  EXPECT_NE(failed.find("# error: boom\n"), std::string::npos);
}

TEST(BenchJson, WritesNestedValues) {
  JsonWriter json;
  json.beginObject().key("a").value(1).key("b").beginArray().value("x\"y").value(2.5).null().endArray();
  json.key("c").beginObject().endObject().key("d").value(true).endObject();
  EXPECT_EQ(json.text(),
            "{\n  \"a\": 1,\n  \"b\": [\n    \"x\\\"y\",\n    2.5,\n    null\n  ],\n  \"c\": {},\n"
            "  \"d\": true\n}\n");
}

}  // namespace
}  // namespace braid::bench
