#include "collage/runtime/trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "collage/ir/error.h"

namespace collage {
namespace {

TEST(TraceTest, AScopedSpanRecordsIntoTheInstalledRecorderWithItsPosition) {
  TraceRecorder recorder;
  {
    TraceRecorder::Install install(&recorder);
    recorder.set_position(3, 7);
    ScopedSpan span("nchw to nhwc", SpanKind::kLayout);
  }
  ASSERT_EQ(recorder.spans().size(), 1u);
  const TraceSpan& span = recorder.spans()[0];
  EXPECT_EQ(span.name, "nchw to nhwc");
  EXPECT_EQ(span.kind, SpanKind::kLayout);
  EXPECT_EQ(span.run, 3);
  EXPECT_EQ(span.partition, 7);
  EXPECT_GE(span.duration_us, 0.0);
}

TEST(TraceTest, InstallRestoresThePreviousRecorder) {
  TraceRecorder outer;
  TraceRecorder inner;
  TraceRecorder::Install a(&outer);
  {
    TraceRecorder::Install b(&inner);
    EXPECT_EQ(TraceRecorder::current(), &inner);
  }
  EXPECT_EQ(TraceRecorder::current(), &outer);
}

TEST(TraceTest, ChromeTraceRoundTripsKindPositionAndStringArgs) {
  std::vector<TraceSpan> spans = {
      TraceSpan{.name = "onednn 2",
                .kind = SpanKind::kPartition,
                .start_us = 10,
                .duration_us = 25.5,
                .run = 1,
                .partition = 2,
                .args = {{"backend", "onednn"}, {"ops", "Conv Relu"}}},
      TraceSpan{.name = "run", .kind = SpanKind::kRun, .start_us = 0, .duration_us = 99, .run = 1}};
  std::string path = ::testing::TempDir() + "trace_round_trip.json";
  std::ofstream(path) << to_chrome_json(spans);
  std::vector<TraceSpan> back = read_chrome_trace(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].name, "onednn 2");
  EXPECT_EQ(back[0].kind, SpanKind::kPartition);
  EXPECT_DOUBLE_EQ(back[0].duration_us, 25.5);
  EXPECT_EQ(back[0].run, 1);
  EXPECT_EQ(back[0].partition, 2);
  EXPECT_NE(std::find(back[0].args.begin(), back[0].args.end(),
                      std::pair<std::string, std::string>{"backend", "onednn"}),
            back[0].args.end());
  EXPECT_EQ(back[1].kind, SpanKind::kRun);
  EXPECT_EQ(back[1].partition, -1);
  std::remove(path.c_str());
}

TEST(TraceTest, ReadingAFileThatIsNotATraceIsAnErrorNamingTheFile) {
  std::string path = ::testing::TempDir() + "not_a_trace.json";
  std::ofstream(path) << "{\"hello\": 1}";
  try {
    read_chrome_trace(path);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not_a_trace.json"), std::string::npos);
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace collage
