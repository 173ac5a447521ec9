#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tensor_op_harness.h"

namespace collage::native_test {
namespace {

const std::vector<float> kSamples = {-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};

Tensor unary(const std::string& op_type, const std::vector<float>& x, Attributes attributes = {},
             std::int64_t opset = 13) {
  const auto n = static_cast<std::int64_t>(x.size());
  return run_one({op_type, {{f32({n}, x)}}, {type(DType::kFloat32, {n})}, attributes, opset});
}

struct UnaryCase {
  std::string op_type;
  std::vector<float> expected;
};

TEST(TensorElementwiseTest, TranscendentalUnaryOpsMatchKnownValues) {
  const std::vector<UnaryCase> cases = {
      {"Sigmoid", {0.1192029f, 0.3775407f, 0.5f, 0.6224593f, 0.8807971f}},
      {"Tanh", {-0.9640276f, -0.4621172f, 0.0f, 0.4621172f, 0.9640276f}},
      {"Erf", {-0.9953223f, -0.5204999f, 0.0f, 0.5204999f, 0.9953223f}},
      {"Exp", {0.1353353f, 0.6065307f, 1.0f, 1.648721f, 7.389056f}},
      {"Softplus", {0.126928f, 0.474077f, 0.6931472f, 0.974077f, 2.126928f}},
      {"Sin", {-0.9092974f, -0.4794255f, 0.0f, 0.4794255f, 0.9092974f}},
      {"Cos", {-0.4161468f, 0.8775826f, 1.0f, 0.8775826f, -0.4161468f}},
      {"Elu", {-0.8646647f, -0.3934693f, 0.0f, 0.5f, 2.0f}},
      {"Selu", {-1.520166f, -0.6917582f, 0.0f, 0.5253505f, 2.101402f}},
      {"Softsign", {-0.6666667f, -0.3333333f, 0.0f, 0.3333333f, 0.6666667f}},
      {"HardSwish", {-0.3333333f, -0.2083333f, 0.0f, 0.2916667f, 1.666667f}},
  };
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(c.op_type);
    expect_near(unary(c.op_type, kSamples), c.expected, 2e-6f);
  }
}

TEST(TensorElementwiseTest, PiecewiseUnaryOpsMatchKnownValues) {
  const std::vector<UnaryCase> cases = {
      {"Relu", {0.0f, 0.0f, 0.0f, 0.5f, 2.0f}},  {"Neg", {2.0f, 0.5f, 0.0f, -0.5f, -2.0f}},
      {"Abs", {2.0f, 0.5f, 0.0f, 0.5f, 2.0f}},   {"Floor", {-2.0f, -1.0f, 0.0f, 0.0f, 2.0f}},
      {"Ceil", {-2.0f, 0.0f, 0.0f, 1.0f, 2.0f}}, {"Sign", {-1.0f, -1.0f, 0.0f, 1.0f, 1.0f}},
  };
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(c.op_type);
    expect_near(unary(c.op_type, kSamples), c.expected);
  }
}

TEST(TensorElementwiseTest, ReciprocalInvertsAndGivesInfinityAtZero) {
  const Tensor out = unary("Reciprocal", {-2.0f, 0.5f, 4.0f, 0.0f});
  EXPECT_EQ(values<float>(out),
            (std::vector<float>{-0.5f, 2.0f, 0.25f, std::numeric_limits<float>::infinity()}));
}

TEST(TensorElementwiseTest, LogAndSqrtMatchKnownValues) {
  expect_near(unary("Log", {0.5f, 1.0f, 2.0f, 10.0f}), {-0.6931472f, 0.0f, 0.6931472f, 2.302585f});
  expect_near(unary("Sqrt", {0.0f, 1.0f, 2.0f, 9.0f}), {0.0f, 1.0f, 1.4142135f, 3.0f});
}

TEST(TensorElementwiseTest, RoundTakesHalvesToEven) {
  expect_near(unary("Round", {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.6f}),
              {-2.0f, -2.0f, -0.0f, 0.0f, 2.0f, 2.0f, 3.0f});
}

TEST(TensorElementwiseTest, LeakyReluUsesAlphaAndItsDefault) {
  Attributes alpha;
  alpha.set("alpha", 0.1f);
  expect_near(unary("LeakyRelu", kSamples, alpha), {-0.2f, -0.05f, 0.0f, 0.5f, 2.0f});
  expect_near(unary("LeakyRelu", kSamples), {-0.02f, -0.005f, 0.0f, 0.5f, 2.0f});
}

TEST(TensorElementwiseTest, HardSigmoidClampsTheLine) {
  expect_near(unary("HardSigmoid", {-3.0f, 0.0f, 1.0f, 3.0f}), {0.0f, 0.5f, 0.7f, 1.0f});
}

TEST(TensorElementwiseTest, ClipBeforeOpset11ReadsMinAndMaxAttributes) {
  Attributes bounds;
  bounds.set("min", -1.0f);
  bounds.set("max", 0.75f);
  expect_near(unary("Clip", kSamples, bounds, 6), {-1.0f, -0.5f, 0.0f, 0.5f, 0.75f});
}

TEST(TensorElementwiseTest, ClipFromOpset11ReadsBoundInputs) {
  const Tensor out = run_one({"Clip",
                              {{f32({5}, kSamples)}, {f32({}, {-1.0f})}, {f32({}, {0.75f})}},
                              {type(DType::kFloat32, {5})},
                              {},
                              11});
  expect_near(out, {-1.0f, -0.5f, 0.0f, 0.5f, 0.75f});
}

TEST(TensorElementwiseTest, ClipFromOpset11TreatsOmittedMinAsUnbounded) {
  const Tensor out = run_one({"Clip",
                              {{f32({5}, kSamples)}, {}, {f32({}, {0.25f})}},
                              {type(DType::kFloat32, {5})},
                              {},
                              13});
  expect_near(out, {-2.0f, -0.5f, 0.0f, 0.25f, 0.25f});
}

TEST(TensorElementwiseTest, ClipFromOpset11WithConstantBoundsMatchesRuntimeBounds) {
  const Tensor out =
      run_one({"Clip",
               {{f32({5}, kSamples)}, constant(f32({}, {0.0f})), constant(f32({}, {6.0f}))},
               {type(DType::kFloat32, {5})},
               {},
               13});
  expect_near(out, {0.0f, 0.0f, 0.0f, 0.5f, 2.0f});
}

TEST(TensorElementwiseTest, AddBroadcastsARowAcrossAMatrix) {
  const Tensor out = run_one({"Add",
                              {{f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {f32({3}, {10, 20, 30})}},
                              {type(DType::kFloat32, {2, 3})}});
  expect_near(out, {11, 22, 33, 14, 25, 36});
}

TEST(TensorElementwiseTest, MulBroadcastsAColumnAgainstARow) {
  const Tensor out = run_one({"Mul",
                              {{f32({2, 1}, {2, 3})}, {f32({1, 3}, {1, 10, 100})}},
                              {type(DType::kFloat32, {2, 3})}});
  expect_near(out, {2, 20, 200, 3, 30, 300});
}

TEST(TensorElementwiseTest, SubAndDivBroadcastAScalarOnTheLeft) {
  const Tensor difference = run_one(
      {"Sub", {{f32({}, {1})}, {f32({2, 2}, {1, 2, 3, 4})}}, {type(DType::kFloat32, {2, 2})}});
  expect_near(difference, {0, -1, -2, -3});
  const Tensor quotient = run_one(
      {"Div", {{f32({}, {1})}, {f32({2, 2}, {1, 2, 4, 8})}}, {type(DType::kFloat32, {2, 2})}});
  expect_near(quotient, {1, 0.5f, 0.25f, 0.125f});
}

TEST(TensorElementwiseTest, BroadcastingOverMiddleAxisMatchesNumpy) {
  // a: [2,1,3], b: [4,1] -> [2,4,3]; out[i,j,k] = a[i,0,k] + b[j,0].
  std::vector<float> a = {0, 1, 2, 10, 11, 12};
  std::vector<float> b = {100, 200, 300, 400};
  const Tensor out =
      run_one({"Add", {{f32({2, 1, 3}, a)}, {f32({4, 1}, b)}}, {type(DType::kFloat32, {2, 4, 3})}});
  std::vector<float> expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 3; ++k) expected.push_back(a[i * 3 + k] + b[j]);
    }
  }
  expect_near(out, expected);
}

TEST(TensorElementwiseTest, IncompatibleBroadcastShapesThrow) {
  EXPECT_THROW(run_one({"Add",
                        {{f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {f32({2}, {1, 2})}},
                        {type(DType::kFloat32, {2, 3})}}),
               Error);
}

TEST(TensorElementwiseTest, Int64ArithmeticComputesShapeValues) {
  const Tensor a = i64({3}, {7, -7, 12});
  const Tensor b = i64({3}, {2, 2, 5});
  EXPECT_EQ(values<std::int64_t>(run_one({"Add", {{a}, {b}}, {type(DType::kInt64, {3})}})),
            (std::vector<std::int64_t>{9, -5, 17}));
  EXPECT_EQ(values<std::int64_t>(run_one({"Sub", {{a}, {b}}, {type(DType::kInt64, {3})}})),
            (std::vector<std::int64_t>{5, -9, 7}));
  EXPECT_EQ(values<std::int64_t>(run_one({"Mul", {{a}, {b}}, {type(DType::kInt64, {3})}})),
            (std::vector<std::int64_t>{14, -14, 60}));
}

TEST(TensorElementwiseTest, IntegerDivTruncatesTowardZero) {
  const Tensor out =
      run_one({"Div", {{i64({4}, {7, -7, 9, -9})}, {i64({}, {2})}}, {type(DType::kInt64, {4})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{3, -3, 4, -4}));
  const Tensor out32 =
      run_one({"Div", {{i32({2}, {-7, 7})}, {i32({2}, {2, -2})}}, {type(DType::kInt32, {2})}});
  EXPECT_EQ(values<std::int32_t>(out32), (std::vector<std::int32_t>{-3, -3}));
}

TEST(TensorElementwiseTest, IntegerDivisionByZeroThrows) {
  EXPECT_THROW(
      run_one({"Div", {{i64({2}, {1, 2})}, {i64({2}, {1, 0})}}, {type(DType::kInt64, {2})}}),
      Error);
}

// The x86 division instruction traps on MIN / -1; the kernel defines it as
// two's complement wrap-around, like the other integer ops.
TEST(TensorElementwiseTest, IntegerDivOfTheMinimumByMinusOneWrapsAround) {
  constexpr std::int64_t min64 = std::numeric_limits<std::int64_t>::min();
  const Tensor out = run_one(
      {"Div", {{i64({2}, {min64, min64})}, {i64({2}, {-1, 1})}}, {type(DType::kInt64, {2})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{min64, min64}));
  constexpr std::int32_t min32 = std::numeric_limits<std::int32_t>::min();
  const Tensor out32 =
      run_one({"Div", {{i32({1}, {min32})}, {i32({}, {-1})}}, {type(DType::kInt32, {1})}});
  EXPECT_EQ(values<std::int32_t>(out32), (std::vector<std::int32_t>{min32}));
}

TEST(TensorElementwiseTest, IntegerOverflowWrapsAround) {
  constexpr std::int64_t max64 = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t min64 = std::numeric_limits<std::int64_t>::min();
  const TensorType out = type(DType::kInt64, {1});
  EXPECT_EQ(values<std::int64_t>(run_one({"Add", {{i64({1}, {max64})}, {i64({1}, {1})}}, {out}})),
            (std::vector<std::int64_t>{min64}));
  EXPECT_EQ(values<std::int64_t>(run_one({"Mul", {{i64({1}, {max64})}, {i64({1}, {2})}}, {out}})),
            (std::vector<std::int64_t>{-2}));
  EXPECT_EQ(values<std::int64_t>(run_one({"Neg", {{i64({1}, {min64})}}, {out}})),
            (std::vector<std::int64_t>{min64}));
}

TEST(TensorElementwiseTest, PowTakesFloatOrIntegerExponents) {
  const Tensor base = f32({3}, {2.0f, 3.0f, 4.0f});
  expect_near(run_one({"Pow", {{base}, {f32({}, {0.5f})}}, {type(DType::kFloat32, {3})}}),
              {1.4142135f, 1.7320508f, 2.0f});
  expect_near(run_one({"Pow", {{base}, {i64({3}, {3, 2, -1})}}, {type(DType::kFloat32, {3})}}),
              {8.0f, 9.0f, 0.25f});
}

// Mod takes the divisor's sign (Python's %) unless fmod = 1 (C's fmod).
TEST(TensorElementwiseTest, ModTakesTheDivisorsSignOrWithFmodTheDividends) {
  const OpInput a{i64({6}, {7, -7, 7, -7, 0, std::numeric_limits<std::int64_t>::min()})};
  const OpInput b{i64({6}, {3, 3, -3, -3, 5, -1})};
  const TensorType out = type(DType::kInt64, {6});
  EXPECT_EQ(values<std::int64_t>(run_one({"Mod", {a, b}, {out}})),
            (std::vector<std::int64_t>{1, 2, -2, -1, 0, 0}));
  Attributes fmod;
  fmod.set("fmod", std::int64_t{1});
  EXPECT_EQ(values<std::int64_t>(run_one({"Mod", {a, b}, {out}, fmod})),
            (std::vector<std::int64_t>{1, -1, 1, -1, 0, 0}));
  expect_near(run_one({"Mod",
                       {{f32({4}, {5.5f, -5.5f, 5.5f, -5.5f})}, {f32({}, {2.0f})}},
                       {type(DType::kFloat32, {4})},
                       fmod}),
              {1.5f, -1.5f, 1.5f, -1.5f});
  // Floats need fmod = 1 (ONNX), and an integer divisor of 0 is an error.
  EXPECT_FALSE(op_supported(
      {"Mod", {{f32({1}, {1.0f})}, {f32({1}, {2.0f})}}, {type(DType::kFloat32, {1})}}));
  EXPECT_THROW(run_one({"Mod", {{i64({1}, {1})}, {i64({1}, {0})}}, {type(DType::kInt64, {1})}}),
               Error);
}

TEST(TensorElementwiseTest, VariadicSumMeanMinMaxFoldAllInputs) {
  const std::vector<OpInput> inputs = {{f32({2}, {1, 8})}, {f32({}, {3})}, {f32({2, 1}, {-1, 10})}};
  const TensorType out = type(DType::kFloat32, {2, 2});
  expect_near(run_one({"Sum", inputs, {out}}), {3, 10, 14, 21});
  expect_near(run_one({"Mean", inputs, {out}}), {1, 10.0f / 3, 14.0f / 3, 7});
  expect_near(run_one({"Min", inputs, {out}}), {-1, -1, 1, 3});
  expect_near(run_one({"Max", inputs, {out}}), {3, 8, 10, 10});
}

TEST(TensorElementwiseTest, SumOfOneInputCopiesIt) {
  expect_near(run_one({"Sum", {{f32({2}, {1.5f, -2})}}, {type(DType::kFloat32, {2})}}), {1.5f, -2});
}

TEST(TensorElementwiseTest, Int64MinAndMaxCompareExactly) {
  const std::int64_t big = std::int64_t{1} << 60;
  const Tensor out = run_one(
      {"Max", {{i64({2}, {big, -5})}, {i64({2}, {big + 1, -6})}}, {type(DType::kInt64, {2})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{big + 1, -5}));
}

TEST(TensorElementwiseTest, PReluScalesNegativesPerChannel) {
  const Tensor out = run_one({"PRelu",
                              {{f32({2, 2}, {-1, 1, -2, 2})}, {f32({2}, {0.1f, 0.5f})}},
                              {type(DType::kFloat32, {2, 2})}});
  expect_near(out, {-0.1f, 1, -0.2f, 2});
}

TEST(TensorElementwiseTest, ComparisonsBroadcastAndYieldBool) {
  const std::vector<OpInput> inputs = {{f32({3}, {1, 2, 3})}, {f32({}, {2})}};
  const TensorType out = type(DType::kBool, {3});
  EXPECT_EQ(values<bool>(run_one({"Equal", inputs, {out}})),
            (std::vector<bool>{false, true, false}));
  EXPECT_EQ(values<bool>(run_one({"Less", inputs, {out}})),
            (std::vector<bool>{true, false, false}));
  EXPECT_EQ(values<bool>(run_one({"Greater", inputs, {out}})),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(values<bool>(run_one({"LessOrEqual", inputs, {out}})),
            (std::vector<bool>{true, true, false}));
  EXPECT_EQ(values<bool>(run_one({"GreaterOrEqual", inputs, {out}})),
            (std::vector<bool>{false, true, true}));
}

TEST(TensorElementwiseTest, EqualComparesInt64AndBool) {
  EXPECT_EQ(
      values<bool>(run_one(
          {"Equal", {{i64({3}, {-1, 0, 5})}, {i64({3}, {-1, 1, 5})}}, {type(DType::kBool, {3})}})),
      (std::vector<bool>{true, false, true}));
  EXPECT_EQ(values<bool>(run_one({"Equal",
                                  {{boolean({2}, {true, false})}, {boolean({2}, {true, true})}},
                                  {type(DType::kBool, {2})}})),
            (std::vector<bool>{true, false}));
}

TEST(TensorElementwiseTest, LogicOpsFollowTruthTables) {
  const std::vector<OpInput> inputs = {{boolean({4}, {false, false, true, true})},
                                       {boolean({4}, {false, true, false, true})}};
  const TensorType out = type(DType::kBool, {4});
  EXPECT_EQ(values<bool>(run_one({"And", inputs, {out}})),
            (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(values<bool>(run_one({"Or", inputs, {out}})),
            (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(values<bool>(run_one({"Xor", inputs, {out}})),
            (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(values<bool>(run_one({"Not", {inputs[0]}, {out}})),
            (std::vector<bool>{true, true, false, false}));
}

TEST(TensorElementwiseTest, WhereBroadcastsConditionAndBranches) {
  const Tensor out =
      run_one({"Where",
               {{boolean({2, 1}, {true, false})}, {f32({3}, {1, 2, 3})}, {f32({}, {-1})}},
               {type(DType::kFloat32, {2, 3})}});
  expect_near(out, {1, 2, 3, -1, -1, -1});
}

TEST(TensorElementwiseTest, WhereSelectsInt64Values) {
  const Tensor out = run_one(
      {"Where",
       {{boolean({3}, {true, false, true})}, {i64({3}, {1, 2, 3})}, {i64({3}, {-1, -2, -3})}},
       {type(DType::kInt64, {3})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{1, -2, 3}));
}

TEST(TensorElementwiseTest, NegAbsAndSignWorkOnInt64) {
  const std::vector<OpInput> x = {{i64({3}, {-4, 0, 9})}};
  const TensorType out = type(DType::kInt64, {3});
  EXPECT_EQ(values<std::int64_t>(run_one({"Neg", x, {out}})),
            (std::vector<std::int64_t>{4, 0, -9}));
  EXPECT_EQ(values<std::int64_t>(run_one({"Abs", x, {out}})), (std::vector<std::int64_t>{4, 0, 9}));
  EXPECT_EQ(values<std::int64_t>(run_one({"Sign", x, {out}})),
            (std::vector<std::int64_t>{-1, 0, 1}));
}

TEST(TensorElementwiseTest, LargeBroadcastAddIsCorrectOnManyThreads) {
  // Big enough to take the multi-threaded path of the loops.
  const std::int64_t rows = 300;
  const std::int64_t cols = 257;
  std::vector<float> a(static_cast<std::size_t>(rows * cols));
  std::vector<float> b(static_cast<std::size_t>(cols));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 97);
  for (std::size_t j = 0; j < b.size(); ++j) b[j] = static_cast<float>(j) * 0.5f;
  const Tensor out = run_one(
      {"Add", {{f32({rows, cols}, a)}, {f32({cols}, b)}}, {type(DType::kFloat32, {rows, cols})}});
  std::vector<float> expected(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    expected[i] = a[i] + b[i % static_cast<std::size_t>(cols)];
  expect_near(out, expected);
}

// Add and its kin on float64 and the narrow integers: IEEE for the one,
// wrapping around for the others (int8: 100 + 100 = -56, uint8: 3 - 5 = 254).
TEST(TensorElementwiseTest, ArithmeticOnFloat64AndNarrowIntegers) {
  const Tensor sum = run_one({"Add",
                              {{Tensor::from_vector<double>({0.1, 1e300}, {2})},
                               {Tensor::from_vector<double>({0.2, 1e300}, {2})}},
                              {type(DType::kFloat64, {2})}});
  EXPECT_EQ(values<double>(sum), (std::vector<double>{0.1 + 0.2, 2e300}));
  const Tensor wrapped = run_one({"Add",
                                  {{Tensor::from_vector<std::int8_t>({100, -7}, {2})},
                                   {Tensor::from_vector<std::int8_t>({100, 3}, {2})}},
                                  {type(DType::kInt8, {2})}});
  EXPECT_EQ(values<std::int8_t>(wrapped), (std::vector<std::int8_t>{-56, -4}));
  const Tensor difference = run_one({"Sub",
                                     {{Tensor::from_vector<std::uint8_t>({3}, {1})},
                                      {Tensor::from_vector<std::uint8_t>({5}, {1})}},
                                     {type(DType::kUInt8, {1})}});
  EXPECT_EQ(values<std::uint8_t>(difference), (std::vector<std::uint8_t>{254}));
  const Tensor largest = run_one({"Max",
                                  {{Tensor::from_vector<std::int16_t>({-300, 7}, {2})},
                                   {Tensor::from_vector<std::int16_t>({-200, 5}, {2})},
                                   {Tensor::from_vector<std::int16_t>({-400, 9}, {2})}},
                                  {type(DType::kInt16, {2})}});
  EXPECT_EQ(values<std::int16_t>(largest), (std::vector<std::int16_t>{-200, 9}));
  const OpCase by_zero{
      "Div",
      {{Tensor::from_vector<std::int8_t>({4}, {1})}, {Tensor::from_vector<std::int8_t>({0}, {1})}},
      {type(DType::kInt8, {1})}};
  EXPECT_THROW(run_one(by_zero), Error);
}

// Clip beyond float32 (opset 11 on): an omitted bound is the type's limit.
TEST(TensorElementwiseTest, ClipOnIntegersAndFloat64ClampsBetweenTheBoundsGiven) {
  const Tensor low_only = run_one({"Clip",
                                   {{Tensor::from_vector<std::int16_t>({-500, 7, 32767}, {3})},
                                    {Tensor::from_vector<std::int16_t>({-3}, {})}},
                                   {type(DType::kInt16, {3})}});
  EXPECT_EQ(values<std::int16_t>(low_only), (std::vector<std::int16_t>{-3, 7, 32767}));
  const Tensor high_only = run_one({"Clip",
                                    {{Tensor::from_vector<std::uint8_t>({0, 200, 90}, {3})},
                                     {Tensor()},
                                     {Tensor::from_vector<std::uint8_t>({100}, {})}},
                                    {type(DType::kUInt8, {3})}});
  EXPECT_EQ(values<std::uint8_t>(high_only), (std::vector<std::uint8_t>{0, 100, 90}));
  const Tensor both = run_one({"Clip",
                               {{Tensor::from_vector<double>({-2.5, 0.25, 9}, {3})},
                                {Tensor::from_vector<double>({-1}, {})},
                                {Tensor::from_vector<double>({1}, {})}},
                               {type(DType::kFloat64, {3})}});
  EXPECT_EQ(values<double>(both), (std::vector<double>{-1, 0.25, 1}));
  const OpCase old_opset{
      "Clip", {{Tensor::from_vector<std::int32_t>({1}, {1})}}, {type(DType::kInt32, {1})}, {}, 10};
  EXPECT_FALSE(op_supported(old_opset));
}

TEST(TensorElementwiseTest, CheckRejectsDtypesWithoutKernels) {
  EXPECT_FALSE(op_supported(
      {"Add",
       {{Tensor::zeros(type(DType::kFloat16, {2}))}, {Tensor::zeros(type(DType::kFloat16, {2}))}},
       {type(DType::kFloat16, {2})}}));
  EXPECT_FALSE(op_supported({"Relu", {{i64({2}, {1, 2})}}, {type(DType::kInt64, {2})}}));
  EXPECT_FALSE(
      op_supported({"And", {{f32({1}, {1})}, {f32({1}, {1})}}, {type(DType::kBool, {1})}}));
  EXPECT_FALSE(
      op_supported({"Add", {{f32({1}, {1})}, {i64({1}, {1})}}, {type(DType::kFloat32, {1})}}));
}

}  // namespace
}  // namespace collage::native_test
