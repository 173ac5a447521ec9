#include "collage/backends/xnnpack/subgraph_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "collage/backends/xnnpack/op_support.h"
#include "collage/backends/xnnpack/op_table.h"

namespace collage::xnnpack {

SubgraphBuilder::SubgraphBuilder(const Graph& graph, const LayoutPlan& plan)
    : graph_(graph), plan_(plan), slots_(graph.num_values()), consumers_(graph.consumers()) {}

Result<BuiltSubgraph> SubgraphBuilder::build() {
  const auto externals =
      static_cast<std::uint32_t>(graph_.inputs().size() + graph_.outputs().size());
  xnn_subgraph_t raw = nullptr;
  if (!check(xnn_create_subgraph(externals, 0, &raw), "subgraph creation")) {
    return Failure{failure_};
  }
  result_.subgraph.reset(raw);
  auto quantization = plan_quantization(graph_);
  if (!quantization) return Failure{quantization.error()};
  quantization_ = std::move(*quantization);
  if (!define_boundary()) return Failure{failure_};
  plan_fusions();
  mark_live_nodes();
  const auto nodes = graph_.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (absorbed_[n] || !live_[n]) continue;
    current_id_ = static_cast<NodeId>(n);
    current_ = &nodes[n];
    if (!emit(nodes[n])) return Failure{failure_};
  }
  for (ValueId output : graph_.outputs()) {
    if (slots_[static_cast<std::size_t>(output)].id == kInvalidId) {
      return Failure{fmt::format("output '{}' is not computed", graph_.value(output).name)};
    }
  }
  return std::move(result_);
}

bool SubgraphBuilder::define_boundary() {
  const auto& inputs = graph_.inputs();
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    ValueId value = inputs[k];
    const TensorType& type = graph_.type(value);
    const std::optional<Quantization>& q = quantization(value);
    const bool fits = type.dtype == DType::kFloat32 || (q && is_eight_bit(type));
    if (!fits || type.rank() > XNN_MAX_TENSOR_DIMS || type.numel() == 0) {
      return fail(
          fmt::format("input '{}' ({}) is not a float32 or quantized 8-bit tensor XNNPACK can hold",
                      graph_.value(value).name, type.to_string()));
    }
    Layout layout = type.rank() == 4 ? plan_.layout(value) : Layout::kPlain;
    const std::uint32_t id =
        define_value(xnn_dims(type.shape, layout), q ? &*q : nullptr, nullptr,
                     static_cast<std::uint32_t>(k), XNN_VALUE_FLAG_EXTERNAL_INPUT, "input value");
    if (id == kInvalidId) return false;
    slots_[static_cast<std::size_t>(value)] = {id, layout};
    result_.inputs.push_back({id, type, layout, q && q->shifted});
  }
  const auto& outputs = graph_.outputs();
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    ValueId value = outputs[k];
    const Value& info = graph_.value(value);
    if (info.producer == kNoNode || output_index_.count(value) != 0) {
      return fail(fmt::format("output '{}' is not computed by exactly one node of the partition",
                              info.name));
    }
    output_index_[value] = k;
    const std::optional<Quantization>& q = quantization(value);
    result_.outputs.push_back({static_cast<std::uint32_t>(inputs.size() + k), info.type,
                               Layout::kPlain, q && q->shifted});
  }
  return true;
}

void SubgraphBuilder::plan_fusions() {
  absorbed_.assign(graph_.num_nodes(), false);
  // The value `node` reads at `input` when only that node reads it and it
  // leaves nothing else behind: then the producer can compute `node` too.
  auto private_input = [&](const Node& node, std::size_t input, const char* producer_op) {
    ValueId value = node.input(input);
    if (value == kNoValue || graph_.is_output(value)) return kNoNode;
    NodeId producer = graph_.value(value).producer;
    if (producer == kNoNode || graph_.node(producer).op_type != producer_op) return kNoNode;
    if (consumers_[static_cast<std::size_t>(value)].size() != 1) return kNoNode;
    if (std::count(node.inputs.begin(), node.inputs.end(), value) != 1) return kNoNode;
    return producer;
  };
  const auto nodes = graph_.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    if (node.op_type == "BatchNormalization") {
      NodeId conv = private_input(node, 0, "Conv");
      if (conv == kNoNode) continue;
      absorbs_[conv] = static_cast<NodeId>(n);
      absorbed_[n] = true;
      continue;
    }
    if (node.op_type != "Add" || node.inputs.size() != 2) continue;
    for (std::size_t side = 0; side < 2; ++side) {
      NodeId matmul = private_input(node, side, "MatMul");
      ValueId bias = node.inputs[1 - side];
      if (matmul == kNoNode || !graph_.value(bias).is_constant()) continue;
      const Shape& product = shape(node.inputs[side]);
      if (shape(node.outputs[0]) != product || shape(bias).size() > product.size()) continue;
      // A bias vector over the output features: all dims 1 but the last.
      Shape aligned = pad_to_rank(shape(bias), static_cast<int>(product.size()));
      bool vector = aligned.back() == product.back() && shape_numel(aligned) == product.back();
      if (!vector) continue;
      absorbs_[matmul] = static_cast<NodeId>(n);
      absorbed_[n] = true;
      break;
    }
  }
}

void SubgraphBuilder::mark_live_nodes() {
  std::vector<bool> needed(graph_.num_values(), false);
  for (ValueId output : graph_.outputs()) needed[static_cast<std::size_t>(output)] = true;
  live_.assign(graph_.num_nodes(), false);
  const auto nodes = graph_.nodes();
  for (std::size_t n = nodes.size(); n-- > 0;) {
    const Node& node = nodes[n];
    live_[n] = std::any_of(node.outputs.begin(), node.outputs.end(),
                           [&](ValueId v) { return needed[static_cast<std::size_t>(v)]; });
    if (!live_[n]) continue;
    for (ValueId input : node.inputs) {
      if (input != kNoValue) needed[static_cast<std::size_t>(input)] = true;
    }
  }
}

bool SubgraphBuilder::emit(const Node& node) {
  const OpRow* row = find_op_row(node.op_type);
  if (row == nullptr) return fail(fmt::format("op {} is not supported", node.op_type));
  return row->emit(*this, node);
}

const Node* SubgraphBuilder::folded_node() const {
  auto it = absorbs_.find(current_id_);
  return it == absorbs_.end() ? nullptr : &graph_.node(it->second);
}

std::uint32_t SubgraphBuilder::define_output(ValueId value, Layout layout) {
  const Dims dims = xnn_dims(shape(value), layout);
  std::uint32_t external = kInvalidId;
  std::uint32_t flags = 0;
  if (auto it = output_index_.find(value); it != output_index_.end()) {
    ExternalValue& boundary = result_.outputs[it->second];
    boundary.layout = layout;
    external = boundary.id;
    flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
  }
  const std::optional<Quantization>& q = quantization(value);
  const std::uint32_t id = define_value(dims, q ? &*q : nullptr, nullptr, external, flags, "value");
  if (id == kInvalidId) return kInvalidId;
  slots_[static_cast<std::size_t>(value)] = {id, layout};
  return id;
}

std::uint32_t SubgraphBuilder::define_value(const Dims& dims, const Quantization* quantization,
                                            const void* data, std::uint32_t external,
                                            std::uint32_t flags, const char* what) {
  std::uint32_t id = kInvalidId;
  const xnn_status status =
      quantization == nullptr
          ? xnn_define_tensor_value(subgraph(), xnn_datatype_fp32, dims.size(), dims.data(), data,
                                    external, flags, &id)
          : xnn_define_quantized_tensor_value(
                subgraph(),
                quantization->unsigned_storage ? xnn_datatype_quint8 : xnn_datatype_qint8,
                quantization->zero_point, quantization->scale, dims.size(), dims.data(), data,
                external, flags, &id);
  if (!check(status, what)) return kInvalidId;
  if (quantization != nullptr) id_quantization_[id] = *quantization;
  return id;
}

std::uint32_t SubgraphBuilder::define_internal(const Dims& dims, const Quantization* quantization) {
  return define_value(dims, quantization, nullptr, kInvalidId, 0, "value");
}

const void* SubgraphBuilder::keep(const void* bytes, std::size_t size) {
  // XNNPACK may read up to XNN_EXTRA_BYTES past the end of static data.
  std::vector<std::byte> data(size + XNN_EXTRA_BYTES);
  std::memcpy(data.data(), bytes, size);
  result_.static_data.push_back(std::move(data));
  return result_.static_data.back().data();
}

std::uint32_t SubgraphBuilder::define_static(std::vector<float> data, const Dims& dims) {
  const void* kept = keep(data.data(), data.size() * sizeof(float));
  return define_value(dims, nullptr, kept, kInvalidId, 0, "static value");
}

std::uint32_t SubgraphBuilder::define_static_quantized(const std::vector<std::uint8_t>& data,
                                                       const Dims& dims,
                                                       const Quantization& quantization) {
  const void* kept = keep(data.data(), data.size());
  return define_value(dims, &quantization, kept, kInvalidId, 0, "static value");
}

std::uint32_t SubgraphBuilder::define_static_int32(const std::vector<std::int32_t>& data,
                                                   const Dims& dims, float scale) {
  const void* kept = keep(data.data(), data.size() * sizeof(std::int32_t));
  std::uint32_t id = kInvalidId;
  if (!check(xnn_define_quantized_tensor_value(subgraph(), xnn_datatype_qint32, 0, scale,
                                               dims.size(), dims.data(), kept, kInvalidId, 0, &id),
             "static int32 value")) {
    return kInvalidId;
  }
  return id;
}

std::uint32_t SubgraphBuilder::define_static_channelwise(const void* data, std::size_t bytes,
                                                         const Dims& dims, xnn_datatype datatype,
                                                         const std::vector<float>& scales,
                                                         std::size_t channel_dim) {
  // XNNPACK keeps the scale pointer until the runtime packs the weights.
  const auto* kept_scales =
      static_cast<const float*>(keep(scales.data(), scales.size() * sizeof(float)));
  const void* kept = keep(data, bytes);
  std::uint32_t id = kInvalidId;
  if (!check(xnn_define_channelwise_quantized_tensor_value(subgraph(), datatype, kept_scales,
                                                           dims.size(), channel_dim, dims.data(),
                                                           kept, kInvalidId, 0, &id),
             "channel-wise static value")) {
    return kInvalidId;
  }
  return id;
}

std::uint32_t SubgraphBuilder::define_scalar(float value, std::size_t rank) {
  return define_static({value}, Dims(rank, 1));
}

std::uint32_t SubgraphBuilder::binary(BinaryDefine define, const char* what, std::uint32_t a,
                                      std::uint32_t b, const Dims& dims) {
  if (a == kInvalidId || b == kInvalidId) return kInvalidId;
  const std::uint32_t id = define_internal(dims);
  if (id == kInvalidId || !check(define(subgraph(), kNoMin, kNoMax, a, b, id, 0), what)) {
    return kInvalidId;
  }
  return id;
}

std::uint32_t SubgraphBuilder::sigmoid(std::uint32_t x, const Dims& dims) {
  if (x == kInvalidId) return kInvalidId;
  const std::uint32_t id = define_internal(dims);
  if (id == kInvalidId || !check(xnn_define_sigmoid(subgraph(), x, id, 0), "sigmoid")) {
    return kInvalidId;
  }
  return id;
}

std::uint32_t SubgraphBuilder::reshape(std::uint32_t source, const Dims& dims) {
  const auto quantized = id_quantization_.find(source);
  const std::uint32_t id =
      define_internal(dims, quantized == id_quantization_.end() ? nullptr : &quantized->second);
  if (id == kInvalidId) return kInvalidId;
  if (!check(xnn_define_static_reshape(subgraph(), dims.size(), dims.data(), source, id, 0),
             "reshape")) {
    return kInvalidId;
  }
  return id;
}

std::uint32_t SubgraphBuilder::pad_channels_last(std::uint32_t x, const Shape& x_shape,
                                                 const Window2d& window, float value,
                                                 std::int64_t bottom, std::int64_t right) {
  auto size = [](std::int64_t v) { return static_cast<std::size_t>(v); };
  const Dims padded_dims = {size(x_shape[0]), size(x_shape[2] + window.pad_top + bottom),
                            size(x_shape[3] + window.pad_left + right), size(x_shape[1])};
  const Dims pre = {0, size(window.pad_top), size(window.pad_left), 0};
  const Dims post = {0, size(bottom), size(right), 0};
  const std::uint32_t padded = define_internal(padded_dims);
  if (padded == kInvalidId) return kInvalidId;
  if (!check(
          xnn_define_static_constant_pad(subgraph(), pre.data(), post.data(), value, x, padded, 0),
          "constant pad")) {
    return kInvalidId;
  }
  return padded;
}

std::uint32_t SubgraphBuilder::use(ValueId value, Layout layout) {
  const Slot& slot = slots_[static_cast<std::size_t>(value)];
  if (slot.id == kInvalidId) {
    fail(fmt::format("value '{}' is read before it is computed", graph_.value(value).name));
    return kInvalidId;
  }
  const Shape& value_shape = shape(value);
  if (value_shape.size() != 4 || slot.layout == layout) return slot.id;
  if (is_layout_constrained(graph_, value)) {
    fail(fmt::format("value '{}' is needed in two layouts", graph_.value(value).name));
    return kInvalidId;
  }
  const auto key = std::make_pair(value, layout);
  if (auto it = converted_.find(key); it != converted_.end()) return it->second;
  const std::uint32_t id = reshape(slot.id, xnn_dims(value_shape, layout));
  if (id != kInvalidId) converted_[key] = id;
  return id;
}

std::uint32_t SubgraphBuilder::use_in_logical_order(ValueId value) {
  const Slot& slot = slots_[static_cast<std::size_t>(value)];
  if (slot.id == kInvalidId) {
    fail(fmt::format("value '{}' is read before it is computed", graph_.value(value).name));
    return kInvalidId;
  }
  if (slot.layout == Layout::kChannelsLast && is_layout_constrained(graph_, value)) {
    fail(fmt::format("value '{}' is channels-last but read in NCHW order",
                     graph_.value(value).name));
    return kInvalidId;
  }
  return slot.id;
}

std::uint32_t SubgraphBuilder::broadcast_operand(ValueId value, const Shape& out_shape,
                                                 Layout layout) {
  const int rank = static_cast<int>(out_shape.size());
  const Shape aligned = pad_to_rank(shape(value), rank);
  const Layout aligned_layout = rank == 4 ? layout : Layout::kPlain;
  const Dims dims = xnn_dims(aligned, aligned_layout);
  if (graph_.value(value).is_constant()) {
    const Tensor& data = *graph_.value(value).constant;
    if (const std::optional<Quantization>& q = quantization(value)) {
      return define_static_quantized(eight_bit_in_layout(data, aligned, aligned_layout, q->shifted),
                                     dims, *q);
    }
    return define_static(constant_in_layout(float_data(graph_, value), aligned, aligned_layout),
                         dims);
  }
  if (static_cast<int>(shape(value).size()) == rank) return use(value, layout);
  if (aligned_layout == Layout::kChannelsLast && !is_layout_free(aligned)) {
    fail(fmt::format("value '{}' cannot be broadcast into a channels-last value",
                     graph_.value(value).name));
    return kInvalidId;
  }
  const std::uint32_t source = use_in_logical_order(value);
  if (source == kInvalidId) return kInvalidId;
  return reshape(source, dims);
}

std::optional<SubgraphBuilder::Io> SubgraphBuilder::bind_io(ValueId in, ValueId out,
                                                            Layout layout) {
  const std::uint32_t x = use(in, layout);
  if (x == kInvalidId) return std::nullopt;
  const std::uint32_t y = define_output(out, layout);
  if (y == kInvalidId) return std::nullopt;
  return Io{x, y, layout};
}

Layout SubgraphBuilder::follow_layout(ValueId in, ValueId out) const {
  if (is_layout_constrained(graph_, out)) return plan_.layout(out);
  const Slot& slot = slots_[static_cast<std::size_t>(in)];
  return shape(in).size() == 4 && slot.id != kInvalidId ? slot.layout : Layout::kPlain;
}

bool SubgraphBuilder::check(xnn_status status, const char* what) {
  if (status == xnn_status_success) return true;
  if (current_ == nullptr)
    return fail(fmt::format("XNNPACK rejected the {}: {}", what, status_name(status)));
  return fail(fmt::format("XNNPACK rejected the {} of {} '{}': {}", what, current_->op_type,
                          current_->name, status_name(status)));
}

bool SubgraphBuilder::fail(std::string reason) {
  if (failure_.empty()) failure_ = std::move(reason);
  return false;
}

const char* status_name(xnn_status status) {
  switch (status) {
    case xnn_status_success:
      return "success";
    case xnn_status_uninitialized:
      return "uninitialized";
    case xnn_status_invalid_parameter:
      return "invalid parameter";
    case xnn_status_invalid_state:
      return "invalid state";
    case xnn_status_unsupported_parameter:
      return "unsupported parameter";
    case xnn_status_unsupported_hardware:
      return "unsupported hardware";
    case xnn_status_out_of_memory:
      return "out of memory";
  }
  return "unknown status";
}

Result<BuiltSubgraph> build_subgraph(const Graph& partition,
                                     const std::vector<ValueId>& channels_last_edges) {
  auto plan = LayoutPlan::make(partition, channels_last_edges);
  if (!plan) return Failure{plan.error()};
  SubgraphBuilder builder(partition, *plan);
  return builder.build();
}

}  // namespace collage::xnnpack
