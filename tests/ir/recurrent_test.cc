#include "collage/ir/recurrent.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"

namespace collage {
namespace {

Node lstm(std::vector<std::string> activations) {
  Node node;
  node.name = "lstm";
  node.op_type = "LSTM";
  if (!activations.empty()) node.attributes.set("activations", std::move(activations));
  return node;
}

TEST(RecurrentActivationsTest, DefaultsOrOneDirectionsListServeEveryDirection) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(recurrent_activations(lstm({}), 1), (Names{"Sigmoid", "Tanh", "Tanh"}));
  EXPECT_EQ(recurrent_activations(lstm({"Relu", "Tanh", "Elu"}), 2),
            (Names{"Relu", "Tanh", "Elu", "Relu", "Tanh", "Elu"}));
  EXPECT_EQ(default_recurrent_activations("GRU"), (Names{"Sigmoid", "Tanh"}));
  EXPECT_EQ(default_recurrent_activations("RNN"), (Names{"Tanh"}));
  EXPECT_THROW(recurrent_activations(lstm({"Relu", "Tanh"}), 1), Error);
}

TEST(RecurrentActivationsTest, NamesCompareInAnyLetterCase) {
  EXPECT_TRUE(same_activation("sigmoid", "Sigmoid"));
  EXPECT_TRUE(same_activation("TANH", "Tanh"));
  EXPECT_FALSE(same_activation("Tanh", "ScaledTanh"));
  EXPECT_FALSE(same_activation("Relu", "Elu"));
}

}  // namespace
}  // namespace collage
