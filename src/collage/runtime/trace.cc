#include "collage/runtime/trace.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"

namespace collage {
namespace {

thread_local TraceRecorder* installed = nullptr;

// A trace of a thousand runs of a plan of a thousand partitions is ~200 MB.
constexpr std::int64_t kMaxTraceBytes = std::int64_t{1} << 30;

using nlohmann::json;

const std::pair<SpanKind, const char*> kKindNames[] = {
    {SpanKind::kRun, "run"},
    {SpanKind::kPartition, "partition"},
    {SpanKind::kLayout, "layout"},
    {SpanKind::kCopy, "copy"},
    {SpanKind::kAllocate, "allocate"},
    {SpanKind::kDispatch, "dispatch"},
    {SpanKind::kOp, "op"},
};

std::optional<SpanKind> span_kind_from(const std::string& name) {
  for (const auto& [kind, text] : kKindNames) {
    if (name == text) return kind;
  }
  return std::nullopt;
}

}  // namespace

std::string span_kind_name(SpanKind kind) {
  for (const auto& [k, text] : kKindNames) {
    if (k == kind) return text;
  }
  return "?";
}

TraceRecorder::TraceRecorder() : origin_(Clock::now()) {}

TraceRecorder::Install::Install(TraceRecorder* recorder) : previous_(installed) {
  installed = recorder;
}

TraceRecorder::Install::~Install() { installed = previous_; }

TraceRecorder* TraceRecorder::current() { return installed; }

double TraceRecorder::micros_since_start(Clock::time_point t) const {
  return std::chrono::duration<double, std::micro>(t - origin_).count();
}

ScopedSpan::~ScopedSpan() {
  if (recorder_ == nullptr) return;
  auto end = TraceRecorder::Clock::now();
  TraceSpan span;
  span.name = name_;
  span.kind = kind_;
  span.start_us = recorder_->micros_since_start(start_);
  span.duration_us = std::chrono::duration<double, std::micro>(end - start_).count();
  span.run = recorder_->run();
  span.partition = recorder_->partition();
  if (node_ != nullptr) span.args.emplace_back("node", node_);
  recorder_->add(std::move(span));
}

std::string to_chrome_json(const std::vector<TraceSpan>& spans) {
  json events = json::array();
  for (const TraceSpan& span : spans) {
    json args = json::object();
    args["run"] = span.run;
    if (span.partition >= 0) args["partition"] = span.partition;
    for (const auto& [key, value] : span.args) args[key] = value;
    events.push_back(json{{"name", span.name},
                          {"cat", span_kind_name(span.kind)},
                          {"ph", "X"},
                          {"ts", span.start_us},
                          {"dur", span.duration_us},
                          {"pid", 1},
                          {"tid", 1},
                          {"args", std::move(args)}});
  }
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump(1);
}

std::vector<TraceSpan> read_chrome_trace(const std::string& path) {
  const std::string text = read_regular_file(path, kMaxTraceBytes);
  std::vector<TraceSpan> spans;
  try {
    json document = json::parse(text);
    for (const json& event : document.at("traceEvents")) {
      if (event.value("ph", "") != "X") continue;
      std::optional<SpanKind> kind = span_kind_from(event.value("cat", ""));
      if (!kind) continue;
      TraceSpan span;
      span.name = event.at("name").get<std::string>();
      span.kind = *kind;
      span.start_us = event.at("ts").get<double>();
      span.duration_us = event.at("dur").get<double>();
      const json& args = event.value("args", json::object());
      span.run = args.value("run", 0);
      span.partition = args.value("partition", -1);
      for (const auto& [key, value] : args.items()) {
        if (value.is_string()) span.args.emplace_back(key, value.get<std::string>());
      }
      spans.push_back(std::move(span));
    }
  } catch (const json::exception& e) {
    throw Error(fmt::format("not a Chrome trace-event file: {}", e.what()), {.file = path});
  }
  return spans;
}

}  // namespace collage
