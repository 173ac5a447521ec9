// The plan the plan-layer tests share: onednn Conv+Relu (1.25 ms, two
// alternatives), then native GlobalAveragePool (0.1 ms); found by a search
// over 40 candidates, with the provenance a saved plan carries.
#pragma once

#include "collage/plan/plan.h"

namespace collage::testing {

inline Plan sample_plan() {
  Plan plan;
  plan.strategy = "collage";
  plan.model_path = "resnet18.onnx";
  plan.model_hash = "abc123";
  plan.input_shapes = {{"input", {1, 3, 224, 224}}};
  plan.machine = "AMD EPYC|avx2,fma|t2";
  plan.threads = 2;
  plan.backend_versions = {{"native", "collage-native 0.1"}, {"onednn", "oneDNN 2.6.3"}};
  PlanPartition conv;
  conv.backend = "onednn";
  conv.rule = "conv_bias_relu";
  conv.nodes = {"Conv_0", "Relu_1"};
  conv.ops = {"Conv", "Relu"};
  conv.inputs = {"input"};
  conv.outputs = {"relu_out"};
  conv.estimated_ms = 1.25;
  conv.alternatives.push_back({"native", "op", 1, 2.5, ""});
  conv.alternatives.push_back({"xnnpack", "graph", 2, std::nullopt, "compile failed"});
  PlanPartition pool;
  pool.backend = "native";
  pool.rule = "op";
  pool.nodes = {"GlobalAveragePool_2"};
  pool.ops = {"GlobalAveragePool"};
  pool.inputs = {"relu_out"};
  pool.outputs = {"pooled"};
  pool.estimated_ms = 0.1;
  plan.partitions = {conv, pool};
  plan.estimated_ms = 1.35;
  plan.search = {40, 30, 10, 2, 77, 12.5};
  plan.search.routes_dropped = 7;
  return plan;
}

}  // namespace collage::testing
