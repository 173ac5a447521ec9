#include "collage/backends/onednn/window.h"

namespace collage::onednn {

memory::dims WindowDims::onednn_dilations() const {
  memory::dims result;
  for (memory::dim d : dilations) result.push_back(d - 1);
  return result;
}

WindowDims forward_dims(const Window& window) {
  WindowDims dims;
  for (const WindowAxis& axis : window.axes) {
    dims.kernel.push_back(axis.kernel);
    dims.strides.push_back(axis.stride);
    dims.dilations.push_back(axis.dilation);
    dims.padding_l.push_back(axis.pad_begin);
    dims.padding_r.push_back(axis.pad_end);
  }
  return dims;
}

WindowDims transposed_dims(const Window& window) {
  WindowDims dims = forward_dims(window);
  for (std::size_t i = 0; i < window.rank(); ++i) {
    dims.padding_r[i] -= window.axes[i].output_padding;
  }
  return dims;
}

}  // namespace collage::onednn
