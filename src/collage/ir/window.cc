#include "collage/ir/window.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <variant>

#include "collage/ir/error.h"

namespace collage {
namespace {

// What is wrong with one attribute of a window op: the attribute, and why.
struct Fault {
  std::string field;
  std::string message;
};

std::int64_t ceil_div(std::int64_t value, std::int64_t divisor) {
  return (value + divisor - 1) / divisor;
}

// value / divisor rounded toward negative infinity (divisor > 0).
std::int64_t floor_div(std::int64_t value, std::int64_t divisor) {
  return value / divisor - (value % divisor < 0 ? 1 : 0);
}

// Splits `total` padding between the two ends of `axis`: the odd element at
// the end for SAME_UPPER, at the start for every other mode.
void split_padding(std::int64_t total, AutoPad mode, WindowAxis& axis) {
  const std::int64_t half = floor_div(total, 2);
  axis.pad_begin = mode == AutoPad::kSameUpper ? half : total - half;
  axis.pad_end = total - axis.pad_begin;
}

bool is_same(AutoPad mode) { return mode == AutoPad::kSameUpper || mode == AutoPad::kSameLower; }

// The ops whose output size may round up (ceil_mode).
bool has_ceil_mode(const Node& node) {
  return node.op_type == "MaxPool" || node.op_type == "AveragePool" || node.op_type == "LpPool";
}

// Reads the window attributes of a node for a number of spatial axes. The
// first malformed attribute is kept as the fault; reads after it return
// their fallbacks, so a caller checks fault() once at the end.
class AttributeReader {
 public:
  AttributeReader(const Node& node, std::size_t rank) : node_(node), rank_(rank) {}

  const std::optional<Fault>& fault() const { return fault_; }

  // The ints attribute `name` with `length` values of at least `minimum`,
  // or `fallback` repeated when it is absent.
  std::vector<std::int64_t> ints(const std::string& name, std::size_t length, std::int64_t fallback,
                                 std::int64_t minimum) {
    const std::vector<std::int64_t> absent(length, fallback);
    const std::vector<std::int64_t>* values = find_ints(name);
    if (values == nullptr) return absent;
    if (values->size() != length) {
      fail(name, fmt::format("expected {} values, got {}", length, values->size()));
      return absent;
    }
    for (std::int64_t value : *values) {
      if (value >= minimum) continue;
      fail(name, fmt::format("{} is below {}", value, minimum));
      return absent;
    }
    return *values;
  }

  // The ints attribute `name` as it is (empty when absent).
  std::vector<std::int64_t> ints(const std::string& name) {
    const std::vector<std::int64_t>* values = find_ints(name);
    return values != nullptr ? *values : std::vector<std::int64_t>{};
  }

  AutoPad auto_pad() {
    const std::string* mode = find<std::string>("auto_pad", "a string");
    if (mode == nullptr || *mode == "NOTSET") return AutoPad::kNotSet;
    if (*mode == "VALID") return AutoPad::kValid;
    if (*mode == "SAME_UPPER") return AutoPad::kSameUpper;
    if (*mode == "SAME_LOWER") return AutoPad::kSameLower;
    fail("auto_pad", "unknown auto_pad " + quote_untrusted(*mode));
    return AutoPad::kNotSet;
  }

  Rounding rounding() {
    if (!has_ceil_mode(node_)) return Rounding::kFloor;
    const std::int64_t* ceil_mode = find<std::int64_t>("ceil_mode", "an integer");
    return ceil_mode != nullptr && *ceil_mode != 0 ? Rounding::kCeil : Rounding::kFloor;
  }

  // `kernel` checked: one size of at least 1 per axis, and kernel_shape,
  // when present, equal to it.
  void check_kernel(const Shape& kernel) {
    if (kernel.size() != rank_) {
      fail("kernel_shape",
           fmt::format("the kernel has {} spatial axes, the input {}", kernel.size(), rank_));
      return;
    }
    if (std::any_of(kernel.begin(), kernel.end(), [](std::int64_t k) { return k < 1; })) {
      fail("kernel_shape", fmt::format("kernel {} has a size below 1", shape_to_string(kernel)));
      return;
    }
    if (!node_.attributes.has("kernel_shape")) return;
    const std::vector<std::int64_t> declared = ints("kernel_shape", rank_, 1, 1);
    if (!fault_ && declared != kernel) {
      fail("kernel_shape", fmt::format("kernel_shape {} does not match the weights' {}",
                                       shape_to_string(declared), shape_to_string(kernel)));
    }
  }

  void fail(const std::string& field, std::string message) {
    if (!fault_) fault_ = Fault{field, std::move(message)};
  }

 private:
  template <typename T>
  const T* find(const std::string& name, const char* kind) {
    const auto it = node_.attributes.all().find(name);
    if (it == node_.attributes.all().end()) return nullptr;
    const T* value = std::get_if<T>(&it->second);
    if (value == nullptr) fail(name, fmt::format("is not {}", kind));
    return value;
  }

  const std::vector<std::int64_t>* find_ints(const std::string& name) {
    return find<std::vector<std::int64_t>>(name, "a list of integers");
  }

  const Node& node_;
  std::size_t rank_;
  std::optional<Fault> fault_;
};

// Strides, dilations, kernel and declared pads of every axis, or nothing
// (the reader holds the fault).
std::optional<Window> read_common(AttributeReader& reader, const Shape& input,
                                  const Shape& kernel) {
  const std::size_t rank = input.size();
  reader.check_kernel(kernel);
  const std::vector<std::int64_t> strides = reader.ints("strides", rank, 1, 1);
  const std::vector<std::int64_t> dilations = reader.ints("dilations", rank, 1, 1);
  const std::vector<std::int64_t> pads = reader.ints("pads", 2 * rank, 0, 0);
  Window window;
  window.auto_pad = reader.auto_pad();
  if (reader.fault()) return std::nullopt;
  for (std::size_t i = 0; i < rank; ++i) {
    WindowAxis axis;
    axis.input = input[i];
    axis.kernel = kernel[i];
    axis.stride = strides[i];
    axis.dilation = dilations[i];
    axis.pad_begin = pads[i];
    axis.pad_end = pads[rank + i];
    window.axes.push_back(axis);
  }
  return window;
}

std::optional<Window> resolve_forward(AttributeReader& reader, const Shape& input,
                                      const Shape& kernel) {
  std::optional<Window> window = read_common(reader, input, kernel);
  const Rounding rounding = reader.rounding();
  if (!window || reader.fault()) return std::nullopt;
  for (WindowAxis& axis : window->axes) {
    if (window->auto_pad == AutoPad::kValid) axis.pad_begin = axis.pad_end = 0;
    if (!is_same(window->auto_pad)) {
      axis.output = forward_output_size(axis, rounding);
      continue;
    }
    // The padding that lets ceil(input / stride) windows fit.
    axis.output = ceil_div(axis.input, axis.stride);
    const std::int64_t needed = (axis.output - 1) * axis.stride + axis.extent() - axis.input;
    split_padding(std::max<std::int64_t>(0, needed), window->auto_pad, axis);
  }
  return window;
}

std::optional<Window> resolve_transposed(AttributeReader& reader, const Node& node,
                                         const Shape& input, const Shape& kernel) {
  const std::size_t rank = input.size();
  std::optional<Window> window = read_common(reader, input, kernel);
  const std::vector<std::int64_t> output_padding = reader.ints("output_padding", rank, 0, 0);
  const std::vector<std::int64_t> output_shape = reader.ints("output_shape");
  const bool has_output_shape = node.attributes.has("output_shape");
  if (has_output_shape && output_shape.size() < rank) {
    reader.fail("output_shape",
                fmt::format("expected {} values, got {}", rank, output_shape.size()));
  }
  if (!window || reader.fault()) return std::nullopt;
  for (std::size_t i = 0; i < rank; ++i) {
    WindowAxis& axis = window->axes[i];
    axis.output_padding = output_padding[i];
    // The result before any padding is cut from it.
    const std::int64_t full = axis.stride * (axis.input - 1) + axis.output_padding + axis.extent();
    if (has_output_shape || is_same(window->auto_pad)) {
      // output_shape may list the whole shape; its last values are the spatial sizes.
      axis.output = has_output_shape ? output_shape[output_shape.size() - rank + i]
                                     : axis.input * axis.stride;
      split_padding(full - axis.output, window->auto_pad, axis);
      continue;
    }
    if (window->auto_pad == AutoPad::kValid) axis.pad_begin = axis.pad_end = 0;
    axis.output = full - axis.pad_begin - axis.pad_end;
  }
  return window;
}

Failure failure_of(const Node& node, const Fault& fault) {
  return Failure{fmt::format("{} {}: {}", node.op_type, fault.field, fault.message)};
}

Error error_of(const Node& node, const Fault& fault) {
  return Error(fault.message, {.node = node.name, .field = fault.field});
}

}  // namespace

std::int64_t WindowAxis::end_padding_reached() const {
  return (output - 1) * stride + extent() - input - pad_begin;
}

WindowAxis::Run WindowAxis::outputs_reading_tap(std::int64_t k) const {
  // Output o reads input o * stride + offset through tap k; it is inside
  // the input for -offset <= o * stride <= input - 1 - offset.
  const std::int64_t offset = input_at(0, k);
  const std::int64_t first = std::max<std::int64_t>(0, -floor_div(offset, stride));
  const std::int64_t last = std::min(output, floor_div(input - 1 - offset, stride) + 1);
  if (last <= first) return Run{};
  return Run{first, last};
}

Shape Window::output_shape() const {
  Shape shape;
  for (const WindowAxis& axis : axes) shape.push_back(axis.output);
  return shape;
}

std::int64_t forward_output_size(const WindowAxis& axis, Rounding rounding) {
  const std::int64_t span = axis.input + axis.pad_begin + axis.pad_end - axis.extent();
  if (span < 0) return 0;
  if (rounding == Rounding::kFloor) return span / axis.stride + 1;
  const std::int64_t count = ceil_div(span, axis.stride) + 1;
  // A last window that would start in the end padding is dropped.
  return (count - 1) * axis.stride >= axis.input + axis.pad_begin ? count - 1 : count;
}

Result<Window> forward_window(const Node& node, const Shape& input, const Shape& kernel) {
  AttributeReader reader(node, input.size());
  std::optional<Window> window = resolve_forward(reader, input, kernel);
  if (!window) return failure_of(node, *reader.fault());
  return *std::move(window);
}

Result<Window> transposed_window(const Node& node, const Shape& input, const Shape& kernel) {
  AttributeReader reader(node, input.size());
  std::optional<Window> window = resolve_transposed(reader, node, input, kernel);
  if (!window) return failure_of(node, *reader.fault());
  return *std::move(window);
}

Window forward_window_or_throw(const Node& node, const Shape& input, const Shape& kernel) {
  AttributeReader reader(node, input.size());
  std::optional<Window> window = resolve_forward(reader, input, kernel);
  if (!window) throw error_of(node, *reader.fault());
  return *std::move(window);
}

Window transposed_window_or_throw(const Node& node, const Shape& input, const Shape& kernel) {
  AttributeReader reader(node, input.size());
  std::optional<Window> window = resolve_transposed(reader, node, input, kernel);
  if (!window) throw error_of(node, *reader.fault());
  return *std::move(window);
}

}  // namespace collage
