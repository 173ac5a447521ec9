// LSTM and GRU on oneDNN's RNN primitives against the native reference.
#include <gtest/gtest.h>

#include "backends/onednn/onednn_test_util.h"

namespace collage::onednn_test {
namespace {

struct Layer {
  std::string op = "LSTM";
  std::string direction = "forward";
  std::int64_t steps = 6, batch = 3, input = 5, hidden = 8;
  bool bias = true;
  bool initial_state = true;
  bool peepholes = false;
  bool linear_before_reset = false;
  // Which outputs the node has: Y, Y_h and (LSTM) Y_c.
  bool y = true, y_h = true, y_c = true;
  bool sequence_lens = false;
  Attributes extra;
};

Graph layer_graph(const Layer& l) {
  GraphBuilder b;
  const std::int64_t d = l.direction == "bidirectional" ? 2 : 1;
  const std::int64_t g = l.op == "LSTM" ? 4 : l.op == "RNN" ? 1 : 3;
  const ValueId none = kNoValue;
  std::vector<ValueId> inputs = {b.input({l.steps, l.batch, l.input}),
                                 b.weights({d, g * l.hidden, l.input}),
                                 b.weights({d, g * l.hidden, l.hidden}),
                                 l.bias ? b.weights({d, 2 * g * l.hidden}) : none, none};
  Graph& graph = b.graph();
  if (l.sequence_lens) {
    inputs[4] = graph.add_input("lengths", TensorType{DType::kInt32, {l.batch}});
  }
  const Shape state = {d, l.batch, l.hidden};
  inputs.push_back(l.initial_state ? b.input(state) : none);
  if (l.op == "LSTM") {
    inputs.push_back(l.initial_state ? b.input(state) : none);
    inputs.push_back(l.peepholes ? b.weights({d, 3 * l.hidden}) : none);
  }
  while (inputs.back() == kNoValue) inputs.pop_back();
  // As the importer reads them: outputs left out at the end are dropped,
  // and one left out before another gets a value that nothing reads.
  std::vector<std::pair<bool, Shape>> wanted = {{l.y, {l.steps, d, l.batch, l.hidden}},
                                                {l.y_h, state}};
  if (l.op == "LSTM") wanted.push_back({l.y_c, state});
  while (!wanted.empty() && !wanted.back().first) wanted.pop_back();
  std::vector<ValueId> outputs;
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const ValueId value = graph.add_value("out" + std::to_string(i), f32(wanted[i].second));
    if (wanted[i].first) graph.add_output(value);
    outputs.push_back(value);
  }
  Attributes attributes = attrs({{"hidden_size", l.hidden}, {"direction", l.direction}});
  if (l.linear_before_reset) attributes.set("linear_before_reset", std::int64_t{1});
  for (const auto& [name, value] : l.extra.all()) attributes.set(name, value);
  graph.add_node(l.op, inputs, outputs, attributes);
  return graph;
}

TEST(OnednnRecurrentTest, LstmMatchesTheReferenceInEveryDirection) {
  for (const std::string direction : {"forward", "reverse", "bidirectional"}) {
    SCOPED_TRACE(direction);
    const Graph graph = layer_graph({.direction = direction, .peepholes = true});
    EXPECT_TRUE(onednn_backend().supports(graph, graph.node(0)));
    EXPECT_TRUE(matches_reference(graph, 2));
  }
}

TEST(OnednnRecurrentTest, GruMatchesTheReferenceWithTheResetBeforeOrAfterTheProduct) {
  for (bool linear_before_reset : {false, true}) {
    for (const std::string direction : {"forward", "bidirectional"}) {
      SCOPED_TRACE(direction + (linear_before_reset ? " linear before reset" : ""));
      EXPECT_TRUE(matches_reference(layer_graph(
          {.op = "GRU", .direction = direction, .linear_before_reset = linear_before_reset})));
    }
  }
}

TEST(OnednnRecurrentTest, RnnMatchesTheReferenceWithEachActivationOnednnComputes) {
  for (const std::string activation : {"Tanh", "Relu", "Sigmoid"}) {
    for (const std::string direction : {"forward", "reverse", "bidirectional"}) {
      SCOPED_TRACE(activation + " " + direction);
      Layer layer{.op = "RNN", .direction = direction};
      layer.extra.set("activations", std::vector<std::string>{activation});
      EXPECT_TRUE(matches_reference(layer_graph(layer), 2));
    }
  }
  EXPECT_TRUE(matches_reference(layer_graph({.op = "RNN", .initial_state = false, .y = false})));
  // One primitive runs both directions, so they must share the activation.
  Layer mixed{.op = "RNN", .direction = "bidirectional"};
  mixed.extra.set("activations", std::vector<std::string>{"Tanh", "Relu"});
  const Graph graph = layer_graph(mixed);
  EXPECT_FALSE(onednn_backend().supports(graph, graph.node(0)));
}

TEST(OnednnRecurrentTest, WithoutBiasStatesOrSomeOutputs) {
  EXPECT_TRUE(matches_reference(
      layer_graph({.direction = "bidirectional", .bias = false, .initial_state = false})));
  EXPECT_TRUE(matches_reference(layer_graph({.y = false, .y_c = false})));
  EXPECT_TRUE(matches_reference(layer_graph({.direction = "bidirectional", .y_h = false})));
  EXPECT_TRUE(matches_reference(layer_graph({.op = "GRU", .y = false})));
}

TEST(OnednnRecurrentTest, WhatOnednnHasNoFormForIsRefused) {
  EXPECT_TRUE(onednn_backend().supports(layer_graph({}), layer_graph({}).node(0)));
  for (const auto& [attribute, value] : std::vector<std::pair<std::string, AttributeValue>>{
           {"clip", 1.0f},
           {"layout", std::int64_t{1}},
           {"input_forget", std::int64_t{1}},
           {"activations", std::vector<std::string>{"Relu", "Tanh", "Tanh"}}}) {
    SCOPED_TRACE(attribute);
    Layer layer;
    layer.extra.set(attribute, value);
    const Graph graph = layer_graph(layer);
    EXPECT_FALSE(onednn_backend().supports(graph, graph.node(0)));
    EXPECT_NE(compile_failure(graph), "");
  }
  const Graph lengths = layer_graph({.sequence_lens = true});
  EXPECT_FALSE(onednn_backend().supports(lengths, lengths.node(0)));
  // The default activations, in any case, are the cell oneDNN computes.
  Layer named;
  named.extra.set("activations", std::vector<std::string>{"sigmoid", "tanh", "Tanh"});
  const Graph graph = layer_graph(named);
  EXPECT_TRUE(onednn_backend().supports(graph, graph.node(0)));
}

}  // namespace
}  // namespace collage::onednn_test
