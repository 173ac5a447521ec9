#include "collage/backends/onednn/window.h"

#include <fmt/format.h>

#include <algorithm>

namespace collage::onednn {

memory::dims Window::onednn_dilations() const {
  memory::dims result;
  for (memory::dim d : dilations) result.push_back(d - 1);
  return result;
}

Result<Window> read_window(const Node& node, const memory::dims& kernel) {
  const std::size_t spatial = kernel.size();
  const Attributes& attrs = node.attributes;
  Window window;
  window.kernel = kernel;
  window.strides = attrs.get_ints("strides", std::vector<std::int64_t>(spatial, 1));
  window.dilations = attrs.get_ints("dilations", std::vector<std::int64_t>(spatial, 1));
  const std::vector<std::int64_t> pads =
      attrs.get_ints("pads", std::vector<std::int64_t>(2 * spatial, 0));
  window.auto_pad = attrs.get_string("auto_pad", "NOTSET");
  if (window.strides.size() != spatial || window.dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    return Failure{fmt::format("{} strides/dilations/pads do not match {} spatial dims",
                               node.op_type, spatial)};
  }
  auto positive = [](memory::dim v) { return v > 0; };
  if (!std::all_of(kernel.begin(), kernel.end(), positive) ||
      !std::all_of(window.strides.begin(), window.strides.end(), positive) ||
      !std::all_of(window.dilations.begin(), window.dilations.end(), positive) ||
      std::any_of(pads.begin(), pads.end(), [](std::int64_t p) { return p < 0; })) {
    return Failure{fmt::format(
        "{} has a non-positive kernel, stride or dilation, or a negative pad", node.op_type)};
  }
  if (window.auto_pad != "NOTSET" && window.auto_pad != "VALID" &&
      window.auto_pad != "SAME_UPPER" && window.auto_pad != "SAME_LOWER") {
    return Failure{fmt::format("{} auto_pad='{}'", node.op_type, window.auto_pad)};
  }
  window.padding_l.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  window.padding_r.assign(pads.begin() + static_cast<std::ptrdiff_t>(spatial), pads.end());
  return window;
}

void resolve_forward_auto_pad(Window& window, const memory::dims& in, const memory::dims& out) {
  if (window.auto_pad == "NOTSET") return;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (window.auto_pad == "VALID") {
      window.padding_l[i] = window.padding_r[i] = 0;
      continue;
    }
    const memory::dim total =
        std::max<memory::dim>(0, (out[i] - 1) * window.strides[i] + window.extent(i) - in[i]);
    // SAME_UPPER puts the odd padding element at the end, SAME_LOWER at the start.
    window.padding_l[i] = window.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    window.padding_r[i] = total - window.padding_l[i];
  }
}

memory::dim forward_output_size(const Window& window, std::size_t i, memory::dim in) {
  const memory::dim span = in + window.padding_l[i] + window.padding_r[i] - window.extent(i);
  if (span < 0) return 0;
  return span / window.strides[i] + 1;
}

}  // namespace collage::onednn
