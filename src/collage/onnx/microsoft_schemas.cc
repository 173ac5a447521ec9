#include "collage/onnx/microsoft_schemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collage/onnx/opset_conversion.h"

namespace collage {
namespace {

constexpr const char* kDomain = "com.microsoft";
const std::vector<std::string> kEightBit = {"tensor(uint8)", "tensor(int8)"};

// X, X_scale, X_zero_point, Y_scale, Y_zero_point: the signature of the
// unary ops and the pools.
onnx::OpSchema x_to_y(const char* name) {
  onnx::OpSchema schema;
  schema.SetName(name)
      .SetDomain(kDomain)
      .SinceVersion(1)
      .Input(0, "X", "", "T")
      .Input(1, "X_scale", "", "tensor(float)")
      .Input(2, "X_zero_point", "", "T", onnx::OpSchema::Optional)
      .Input(3, "Y_scale", "", "tensor(float)")
      .Input(4, "Y_zero_point", "", "T", onnx::OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", kEightBit, "");
  return schema;
}

onnx::OpSchema binary(const char* name) {
  onnx::OpSchema schema;
  schema.SetName(name)
      .SetDomain(kDomain)
      .SinceVersion(1)
      .Input(0, "A", "", "T")
      .Input(1, "A_scale", "", "tensor(float)")
      .Input(2, "A_zero_point", "", "T", onnx::OpSchema::Optional)
      .Input(3, "B", "", "T")
      .Input(4, "B_scale", "", "tensor(float)")
      .Input(5, "B_zero_point", "", "T", onnx::OpSchema::Optional)
      .Input(6, "C_scale", "", "tensor(float)")
      .Input(7, "C_zero_point", "", "T", onnx::OpSchema::Optional)
      .Output(0, "C", "", "T")
      .TypeConstraint("T", kEightBit, "")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, 3)) {
          onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, 0),
                                                     onnx::getInputShape(ctx, 3),
                                                     *onnx::getOutputShape(ctx, 0));
        }
      });
  return schema;
}

// The global pool keeps the image and channel axes and makes the others 1;
// with channels_last the channels are the last axis.
void global_pool_inference(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& input = onnx::getInputShape(ctx, 0);
  const int rank = input.dim_size();
  if (rank < 3) return;
  const bool channels_last = onnx::getAttribute(ctx, "channels_last", 0) != 0;
  const int channel_axis = channels_last ? rank - 1 : 1;
  auto* output = onnx::getOutputShape(ctx, 0);
  for (int d = 0; d < rank; ++d) {
    if (d == 0 || d == channel_axis) {
      *output->add_dim() = input.dim(d);
    } else {
      output->add_dim()->set_dim_value(1);
    }
  }
}

// Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input.
void concat_inference(onnx::InferenceContext& ctx) {
  const std::size_t inputs = ctx.getNumInputs();
  if (inputs < 5) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  std::int64_t total = 0;
  int rank = -1;
  std::int64_t axis = onnx::getAttribute(ctx, "axis", 0);
  for (std::size_t i = 2; i < inputs; i += 3) {
    if (!onnx::hasInputShape(ctx, i)) return;
    const auto& shape = onnx::getInputShape(ctx, i);
    if (rank < 0) {
      rank = shape.dim_size();
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return;
    }
    if (shape.dim_size() != rank || !shape.dim(static_cast<int>(axis)).has_dim_value()) return;
    total += shape.dim(static_cast<int>(axis)).dim_value();
  }
  const auto& first = onnx::getInputShape(ctx, 2);
  auto* output = onnx::getOutputShape(ctx, 0);
  for (int d = 0; d < rank; ++d) {
    if (d == axis) {
      output->add_dim()->set_dim_value(total);
    } else {
      *output->add_dim() = first.dim(d);
    }
  }
}

// [M, N] from A and B with transA and transB; float32 without y_scale, else
// the type of y_zero_point (or A's).
void qgemm_inference(onnx::InferenceContext& ctx) {
  const bool quantized = ctx.getNumInputs() > 7 && ctx.getInputType(7) != nullptr;
  if (!quantized) {
    onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::FLOAT);
  } else if (ctx.getNumInputs() > 8 && ctx.getInputType(8) != nullptr) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 8, 0);
  } else {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  }
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 3)) return;
  const auto& a = onnx::getInputShape(ctx, 0);
  const auto& b = onnx::getInputShape(ctx, 3);
  if (a.dim_size() != 2 || b.dim_size() != 2) return;
  const bool trans_a = onnx::getAttribute(ctx, "transA", 0) != 0;
  const bool trans_b = onnx::getAttribute(ctx, "transB", 0) != 0;
  auto* output = onnx::getOutputShape(ctx, 0);
  *output->add_dim() = a.dim(trans_a ? 1 : 0);
  *output->add_dim() = b.dim(trans_b ? 0 : 1);
}

void register_all() {
  auto& domains = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  if (domains.Map().count(kDomain) == 0) domains.AddDomainToVersion(kDomain, 1, 1);

  std::vector<onnx::OpSchema> schemas;
  schemas.push_back(binary("QLinearAdd"));
  schemas.push_back(binary("QLinearMul"));
  for (const char* name : {"QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax"}) {
    onnx::OpSchema schema = x_to_y(name);
    schema.TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
    if (std::string(name) == "QLinearLeakyRelu") {
      schema.Attr("alpha", "", onnx::AttributeProto::FLOAT, 0.01f);
    }
    if (std::string(name) == "QLinearSoftmax") {
      // The opset of the Softmax it quantizes, which decides what `axis` means.
      schema.Attr("axis", "", onnx::AttributeProto::INT, std::int64_t{-1});
      schema.Attr("opset", "", onnx::AttributeProto::INT, true);
    }
    schemas.push_back(std::move(schema));
  }
  {
    onnx::OpSchema schema = x_to_y("QLinearGlobalAveragePool");
    schema.Attr("channels_last", "", onnx::AttributeProto::INT, std::int64_t{0});
    schema.TypeAndShapeInferenceFunction(global_pool_inference);
    schemas.push_back(std::move(schema));
  }
  {
    // AveragePool's own inference reads input 0 and the window attributes,
    // which QLinearAveragePool shares.
    onnx::OpSchema schema = x_to_y("QLinearAveragePool");
    schema.Attr("channels_last", "", onnx::AttributeProto::INT, std::int64_t{0})
        .Attr("auto_pad", "", onnx::AttributeProto::STRING, std::string("NOTSET"))
        .Attr("ceil_mode", "", onnx::AttributeProto::INT, std::int64_t{0})
        .Attr("count_include_pad", "", onnx::AttributeProto::INT, std::int64_t{0})
        .Attr("kernel_shape", "", onnx::AttributeProto::INTS)
        .Attr("pads", "", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
        .Attr("strides", "", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE);
    const onnx::OpSchema* pool = onnx::OpSchemaRegistry::Schema("AveragePool", kInferenceOpset, "");
    if (pool != nullptr)
      schema.TypeAndShapeInferenceFunction(pool->GetTypeAndShapeInferenceFunction());
    schemas.push_back(std::move(schema));
  }
  {
    onnx::OpSchema schema;
    schema.SetName("QLinearConcat")
        .SetDomain(kDomain)
        .SinceVersion(1)
        .Attr("axis", "", onnx::AttributeProto::INT)
        .Input(0, "Y_scale", "", "tensor(float)")
        .Input(1, "Y_zero_point", "", "T8")
        .Input(2, "inputs", "", "TV", onnx::OpSchema::Variadic, /*is_homogeneous=*/false)
        .Output(0, "Y", "", "T8")
        .TypeConstraint("T8", kEightBit, "")
        .TypeConstraint("TV", {"tensor(uint8)", "tensor(int8)", "tensor(float)"}, "")
        .TypeAndShapeInferenceFunction(concat_inference);
    schemas.push_back(std::move(schema));
  }
  {
    onnx::OpSchema schema;
    schema.SetName("QGemm")
        .SetDomain(kDomain)
        .SinceVersion(1)
        .Attr("alpha", "", onnx::AttributeProto::FLOAT, 1.0f)
        .Attr("transA", "", onnx::AttributeProto::INT, std::int64_t{0})
        .Attr("transB", "", onnx::AttributeProto::INT, std::int64_t{0})
        .Input(0, "A", "", "TA")
        .Input(1, "a_scale", "", "tensor(float)")
        .Input(2, "a_zero_point", "", "TA", onnx::OpSchema::Optional)
        .Input(3, "B", "", "TB")
        .Input(4, "b_scale", "", "tensor(float)")
        .Input(5, "b_zero_point", "", "TB", onnx::OpSchema::Optional)
        .Input(6, "C", "", "TC", onnx::OpSchema::Optional)
        .Input(7, "y_scale", "", "tensor(float)", onnx::OpSchema::Optional)
        .Input(8, "y_zero_point", "", "TYZ", onnx::OpSchema::Optional)
        .Output(0, "Y", "", "TY")
        .TypeConstraint("TA", kEightBit, "")
        .TypeConstraint("TB", kEightBit, "")
        .TypeConstraint("TC", {"tensor(int32)"}, "")
        .TypeConstraint("TYZ", kEightBit, "")
        .TypeConstraint("TY", {"tensor(float)", "tensor(uint8)", "tensor(int8)"}, "")
        .TypeAndShapeInferenceFunction(qgemm_inference);
    schemas.push_back(std::move(schema));
  }
  for (onnx::OpSchema& schema : schemas) {
    if (onnx::OpSchemaRegistry::Schema(schema.Name(), 1, kDomain) != nullptr) continue;
    onnx::OpSchemaRegistry::OpSchemaRegisterOnce registration(schema);
  }
}

}  // namespace

void register_microsoft_quantized_schemas() {
  static const bool registered = [] {
    register_all();
    return true;
  }();
  (void)registered;
}

}  // namespace collage
