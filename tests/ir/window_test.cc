#include "collage/ir/window.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"

namespace collage {
namespace {

using Ints = std::vector<std::int64_t>;

Node window_node(const std::string& op_type, Attributes attributes) {
  Node node;
  node.op_type = op_type;
  node.name = "w0";
  node.attributes = std::move(attributes);
  return node;
}

// One axis's paddings and output size, for comparing in one assertion.
struct Resolved {
  std::int64_t pad_begin, pad_end, output;
  bool operator==(const Resolved&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Resolved& r) {
  return out << "{pad_begin " << r.pad_begin << ", pad_end " << r.pad_end << ", output " << r.output
             << "}";
}

Resolved resolved(const WindowAxis& axis) { return {axis.pad_begin, axis.pad_end, axis.output}; }

// A 1-D forward window of `op_type` over `input` with `kernel`.
Resolved forward_1d(const std::string& op_type, Attributes attributes, std::int64_t input,
                    std::int64_t kernel) {
  Result<Window> window =
      forward_window(window_node(op_type, std::move(attributes)), {input}, {kernel});
  EXPECT_TRUE(window.ok()) << window.error();
  if (!window.ok()) return {};
  EXPECT_EQ(window->rank(), 1u);
  return resolved(window->axes[0]);
}

// A 1-D ConvTranspose window over `input` with `kernel`.
Resolved transposed_1d(Attributes attributes, std::int64_t input, std::int64_t kernel) {
  Result<Window> window =
      transposed_window(window_node("ConvTranspose", std::move(attributes)), {input}, {kernel});
  EXPECT_TRUE(window.ok()) << window.error();
  if (!window.ok()) return {};
  return resolved(window->axes[0]);
}

Attributes attributes(std::initializer_list<std::pair<const std::string, AttributeValue>> list) {
  Attributes result;
  for (const auto& [name, value] : list) result.set(name, value);
  return result;
}

// --- Forward windows ---

TEST(ForwardWindowTest, NotSetTakesThePadsAsGivenAndRoundsTheOutputDown) {
  // (7 + 1 + 0 - 3) / 2 + 1 = 3.
  EXPECT_EQ(forward_1d("Conv", attributes({{"pads", Ints{1, 0}}, {"strides", Ints{2}}}), 7, 3),
            (Resolved{1, 0, 3}));
}

TEST(ForwardWindowTest, SameUpperPutsTheOddPaddingElementAtTheEnd) {
  // ceil(10 / 2) = 5 outputs need (5 - 1) * 2 + 3 - 10 = 1 padding element.
  EXPECT_EQ(forward_1d("Conv",
                       attributes({{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2}}}),
                       10, 3),
            (Resolved{0, 1, 5}));
}

TEST(ForwardWindowTest, SameLowerPutsTheOddPaddingElementAtTheStart) {
  EXPECT_EQ(forward_1d("MaxPool",
                       attributes({{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{2}}}),
                       10, 3),
            (Resolved{1, 0, 5}));
}

TEST(ForwardWindowTest, SameSplitsAnEvenTotalEquallyAndNeverPadsNegatively) {
  // Stride 1, kernel 5: total 4.
  EXPECT_EQ(forward_1d("Conv", attributes({{"auto_pad", std::string("SAME_UPPER")}}), 6, 5),
            (Resolved{2, 2, 6}));
  // Stride 3, kernel 1 over 7: ceil(7 / 3) = 3 outputs fit without padding.
  EXPECT_EQ(
      forward_1d("Conv",
                 attributes({{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{3}}}), 7, 1),
      (Resolved{0, 0, 3}));
}

TEST(ForwardWindowTest, ValidIgnoresTheDeclaredPads) {
  EXPECT_EQ(forward_1d("Conv",
                       attributes({{"auto_pad", std::string("VALID")},
                                   {"pads", Ints{2, 2}},
                                   {"strides", Ints{2}}}),
                       7, 3),
            (Resolved{0, 0, 3}));
}

TEST(ForwardWindowTest, DilationWidensTheKernelsExtent) {
  Result<Window> window =
      forward_window(window_node("Conv", attributes({{"dilations", Ints{3}}})), {10}, {3});
  ASSERT_TRUE(window.ok()) << window.error();
  EXPECT_EQ(window->axes[0].extent(), 7);
  EXPECT_EQ(window->axes[0].output, 4);
  // SAME pads for the dilated extent: 9 - 1 + 5 - 9 = 4, split 2 and 2.
  EXPECT_EQ(
      forward_1d("Conv",
                 attributes({{"auto_pad", std::string("SAME_UPPER")}, {"dilations", Ints{2}}}), 9,
                 3),
      (Resolved{2, 2, 9}));
}

TEST(ForwardWindowTest, CeilModeAddsTheLastPartialWindowOfAPool) {
  const Attributes ceil = attributes({{"strides", Ints{2}}, {"ceil_mode", std::int64_t{1}}});
  // Floor (6 - 3) / 2 + 1 = 2; the third window reads one element past the input.
  EXPECT_EQ(forward_1d("MaxPool", attributes({{"strides", Ints{2}}}), 6, 3), (Resolved{0, 0, 2}));
  EXPECT_EQ(forward_1d("MaxPool", ceil, 6, 3), (Resolved{0, 0, 3}));
  EXPECT_EQ(forward_1d("AveragePool", ceil, 6, 3), (Resolved{0, 0, 3}));
  Result<Window> window = forward_window(window_node("MaxPool", ceil), {6}, {3});
  ASSERT_TRUE(window.ok()) << window.error();
  EXPECT_EQ(window->axes[0].end_padding_reached(), 1);
}

TEST(ForwardWindowTest, CeilModeDropsAWindowThatWouldStartInTheEndPadding) {
  // ceil((4 + 1 - 2) / 2) + 1 = 3, but the third window would start at 4,
  // inside the end padding.
  EXPECT_EQ(
      forward_1d(
          "MaxPool",
          attributes({{"strides", Ints{2}}, {"pads", Ints{0, 1}}, {"ceil_mode", std::int64_t{1}}}),
          4, 2),
      (Resolved{0, 1, 2}));
}

TEST(ForwardWindowTest, CeilModeOnlyAppliesToThePools) {
  EXPECT_EQ(
      forward_1d("Conv", attributes({{"strides", Ints{2}}, {"ceil_mode", std::int64_t{1}}}), 6, 3),
      (Resolved{0, 0, 2}));
}

TEST(ForwardWindowTest, RoundingIsExplicitForOneAxis) {
  WindowAxis axis;
  axis.input = 6;
  axis.kernel = 3;
  axis.stride = 2;
  EXPECT_EQ(forward_output_size(axis, Rounding::kFloor), 2);
  EXPECT_EQ(forward_output_size(axis, Rounding::kCeil), 3);
}

TEST(ForwardWindowTest, AKernelLargerThanThePaddedInputGivesNoOutput) {
  EXPECT_EQ(forward_1d("Conv", attributes({{"pads", Ints{1, 0}}}), 3, 5), (Resolved{1, 0, 0}));
}

TEST(ForwardWindowTest, EveryAxisIsResolvedOnItsOwn) {
  Result<Window> window = forward_window(
      window_node("Conv", attributes({{"strides", Ints{1, 2}}, {"pads", Ints{0, 1, 2, 1}}})),
      {5, 8}, {3, 2});
  ASSERT_TRUE(window.ok()) << window.error();
  EXPECT_EQ(window->output_shape(), (Shape{5, 5}));
  EXPECT_EQ(resolved(window->axes[0]), (Resolved{0, 2, 5}));
  EXPECT_EQ(resolved(window->axes[1]), (Resolved{1, 1, 5}));
}

// --- Malformed attributes ---

TEST(WindowFaultTest, AListOfTheWrongLengthIsAFailureNamingIt) {
  const Node node = window_node("Conv", attributes({{"strides", Ints{1, 1, 1}}}));
  Result<Window> window = forward_window(node, {5, 5}, {3, 3});
  ASSERT_FALSE(window.ok());
  EXPECT_NE(window.error().find("strides"), std::string::npos) << window.error();
  try {
    forward_window_or_throw(node, {5, 5}, {3, 3});
    FAIL() << "no Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().node, "w0");
    EXPECT_EQ(error.where().field, "strides");
  }
}

TEST(WindowFaultTest, UnknownAutoPadIsAnErrorOnAutoPad) {
  const Node node = window_node("MaxPool", attributes({{"auto_pad", std::string("SAME")}}));
  EXPECT_FALSE(forward_window(node, {5}, {3}).ok());
  try {
    forward_window_or_throw(node, {5}, {3});
    FAIL() << "no Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().field, "auto_pad");
  }
}

TEST(WindowFaultTest, OutOfRangeValuesAreRefused) {
  EXPECT_FALSE(
      forward_window(window_node("Conv", attributes({{"strides", Ints{0}}})), {5}, {3}).ok());
  EXPECT_FALSE(
      forward_window(window_node("Conv", attributes({{"dilations", Ints{0}}})), {5}, {3}).ok());
  EXPECT_FALSE(
      forward_window(window_node("Conv", attributes({{"pads", Ints{-1, 0}}})), {5}, {3}).ok());
  EXPECT_FALSE(forward_window(window_node("Conv", {}), {5}, {0}).ok());
  EXPECT_FALSE(forward_window(window_node("Conv", {}), {5, 5}, {3}).ok());
  EXPECT_FALSE(
      forward_window(window_node("Conv", attributes({{"strides", std::string("2")}})), {5}, {3})
          .ok());
}

TEST(WindowFaultTest, KernelShapeMustAgreeWithTheWeights) {
  const Node node = window_node("Conv", attributes({{"kernel_shape", Ints{3, 3}}}));
  EXPECT_TRUE(forward_window(node, {5, 5}, {3, 3}).ok());
  try {
    forward_window_or_throw(node, {5, 5}, {3, 2});
    FAIL() << "no Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().field, "kernel_shape");
  }
}

TEST(WindowFaultTest, TransposedWindowsRefuseANegativeOutputPaddingAndAShortOutputShape) {
  EXPECT_FALSE(
      transposed_window(window_node("ConvTranspose", attributes({{"output_padding", Ints{-1}}})),
                        {3}, {3})
          .ok());
  try {
    transposed_window_or_throw(
        window_node("ConvTranspose", attributes({{"output_shape", Ints{6}}})), {3, 3}, {3, 3});
    FAIL() << "no Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().field, "output_shape");
  }
}

// --- Transposed windows ---

TEST(TransposedWindowTest, ExplicitPadsAreCutFromTheFullResult) {
  // Full result 2 * (4 - 1) + 1 + 3 = 10, less pads 1 and 2.
  const Resolved r = transposed_1d(
      attributes({{"strides", Ints{2}}, {"pads", Ints{1, 2}}, {"output_padding", Ints{1}}}), 4, 3);
  EXPECT_EQ(r, (Resolved{1, 2, 7}));
}

TEST(TransposedWindowTest, ValidIgnoresTheDeclaredPads) {
  EXPECT_EQ(transposed_1d(attributes({{"auto_pad", std::string("VALID")},
                                      {"strides", Ints{2}},
                                      {"pads", Ints{1, 1}}}),
                          3, 3),
            (Resolved{0, 0, 7}));
}

TEST(TransposedWindowTest, OutputShapeWithAnOddTotalCropsTheExtraElementAtTheStart) {
  // Full result 2 * (3 - 1) + 3 = 7, output 6: total 1, NOTSET puts it first.
  EXPECT_EQ(transposed_1d(attributes({{"strides", Ints{2}}, {"output_shape", Ints{6}}}), 3, 3),
            (Resolved{1, 0, 6}));
  EXPECT_EQ(transposed_1d(attributes({{"strides", Ints{2}},
                                      {"output_shape", Ints{6}},
                                      {"auto_pad", std::string("NOTSET")}}),
                          3, 3),
            (Resolved{1, 0, 6}));
}

TEST(TransposedWindowTest, OutputShapeWithSameUpperCropsTheExtraElementAtTheEnd) {
  EXPECT_EQ(transposed_1d(attributes({{"strides", Ints{2}},
                                      {"output_shape", Ints{6}},
                                      {"auto_pad", std::string("SAME_UPPER")}}),
                          3, 3),
            (Resolved{0, 1, 6}));
}

TEST(TransposedWindowTest, OutputShapeWithSameLowerCropsTheExtraElementAtTheStart) {
  EXPECT_EQ(transposed_1d(attributes({{"strides", Ints{2}},
                                      {"output_shape", Ints{6}},
                                      {"auto_pad", std::string("SAME_LOWER")}}),
                          3, 3),
            (Resolved{1, 0, 6}));
}

TEST(TransposedWindowTest, OutputShapeOverridesExplicitPadsAndCountsOutputPadding) {
  // Full result 3 * (3 - 1) + 1 + 3 = 10, output 7: total 3, split 2 and 1.
  EXPECT_EQ(transposed_1d(attributes({{"strides", Ints{3}},
                                      {"pads", Ints{0, 0}},
                                      {"output_padding", Ints{1}},
                                      {"output_shape", Ints{7}}}),
                          3, 3),
            (Resolved{2, 1, 7}));
}

TEST(TransposedWindowTest, AnOutputLargerThanTheFullResultPadsNegatively) {
  // Full result 3 * (3 - 1) + 3 = 9, output 10: total -1. Halves round
  // down, so NOTSET adds the extra element at the end and SAME_UPPER at the start.
  EXPECT_EQ(transposed_1d(attributes({{"strides", Ints{3}}, {"output_shape", Ints{10}}}), 3, 3),
            (Resolved{0, -1, 10}));
  EXPECT_EQ(transposed_1d(attributes({{"strides", Ints{3}},
                                      {"output_shape", Ints{10}},
                                      {"auto_pad", std::string("SAME_UPPER")}}),
                          3, 3),
            (Resolved{-1, 0, 10}));
}

TEST(TransposedWindowTest, SameWithoutOutputShapeMultipliesTheInputByTheStride) {
  // Output 3 * 2 = 6 of a full result of 7: total 1.
  EXPECT_EQ(transposed_1d(
                attributes({{"strides", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}}), 3, 3),
            (Resolved{0, 1, 6}));
  EXPECT_EQ(transposed_1d(
                attributes({{"strides", Ints{2}}, {"auto_pad", std::string("SAME_LOWER")}}), 3, 3),
            (Resolved{1, 0, 6}));
}

TEST(TransposedWindowTest, OutputShapeMayListTheWholeShape) {
  Result<Window> window = transposed_window(
      window_node("ConvTranspose",
                  attributes({{"strides", Ints{2, 2}}, {"output_shape", Ints{1, 4, 6, 5}}})),
      {3, 3}, {3, 3});
  ASSERT_TRUE(window.ok()) << window.error();
  EXPECT_EQ(window->output_shape(), (Shape{6, 5}));
  EXPECT_EQ(resolved(window->axes[0]), (Resolved{1, 0, 6}));
  EXPECT_EQ(resolved(window->axes[1]), (Resolved{1, 1, 5}));
  EXPECT_EQ(window->axes[1].output_padding, 0);
}

TEST(WindowAxisTest, TheOutputsATapReadsTheInputForAreTheOnesItReaches) {
  // Against every output checked one by one, over strides, dilations and
  // pads that put taps wholly in the padding, partly, or not at all.
  for (std::int64_t input : {1, 5, 14}) {
    for (std::int64_t stride : {1, 2, 3}) {
      for (std::int64_t dilation : {1, 4, 12}) {
        for (std::int64_t pad : {0, 1, 12, 24}) {
          WindowAxis axis{input, 0, 3, stride, dilation, pad, pad};
          const std::int64_t padded = input + 2 * pad;
          if (padded < axis.extent()) continue;
          axis.output = (padded - axis.extent()) / stride + 1;
          for (std::int64_t k = 0; k < 3; ++k) {
            std::int64_t first = -1, last = -1;
            for (std::int64_t o = 0; o < axis.output; ++o) {
              const std::int64_t at = o * stride + k * dilation - pad;
              if (at < 0 || at >= input) continue;
              if (first < 0) first = o;
              last = o + 1;
            }
            const WindowAxis::Run run = axis.outputs_reading_tap(k);
            if (first < 0) {
              EXPECT_EQ(run.size(), 0) << input << " " << stride << " " << dilation << " " << pad;
            } else {
              EXPECT_EQ(run.first, first);
              EXPECT_EQ(run.last, last);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace collage
