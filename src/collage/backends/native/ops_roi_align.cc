// RoiAlign (opsets 10 and 16): for each region of interest (x1, y1, x2, y2
// in the input's coordinates times spatial_scale) and channel, an
// output_height x output_width grid of bins, each the average (or maximum)
// of sampling points bilinearly interpolated from the region's image.
//
// half_pixel (opset 16's default) shifts the corners by half a pixel
// before sampling; output_half_pixel (opset 10's only behaviour) does not,
// and stretches regions smaller than a pixel to one. Each bin takes
// sampling_ratio points per axis, or ceil(bin size) when it is 0. A point
// more than a pixel outside the image reads 0; one just outside is clamped
// to the edge. In max mode a point contributes the largest of its four
// weighted corners, as ONNX Runtime computes it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "collage/backends/native/compute_kernels.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

struct Sample {
  // The four corners' flat offsets in one channel's image, and their weights.
  std::int64_t offsets[4] = {};
  float weights[4] = {};
  bool inside = false;
};

Sample sample_at(double y, double x, std::int64_t height, std::int64_t width) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width)) {
    return s;
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto low = static_cast<std::int64_t>(y);
  auto left = static_cast<std::int64_t>(x);
  std::int64_t high = low + 1;
  std::int64_t right = left + 1;
  if (low >= height - 1) {
    high = low = height - 1;
    y = static_cast<double>(low);
  }
  if (left >= width - 1) {
    right = left = width - 1;
    x = static_cast<double>(left);
  }
  const double ly = y - static_cast<double>(low);
  const double lx = x - static_cast<double>(left);
  const double hy = 1.0 - ly;
  const double hx = 1.0 - lx;
  s.offsets[0] = low * width + left;
  s.offsets[1] = low * width + right;
  s.offsets[2] = high * width + left;
  s.offsets[3] = high * width + right;
  s.weights[0] = static_cast<float>(hy * hx);
  s.weights[1] = static_cast<float>(hy * lx);
  s.weights[2] = static_cast<float>(ly * hx);
  s.weights[3] = static_cast<float>(ly * lx);
  s.inside = true;
  return s;
}

void run_roi_align(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const Tensor& rois = inputs[1];
  const Tensor& batch_indices = inputs[2];
  Tensor& y = outputs[0];
  const std::int64_t batches = x.shape()[0];
  const std::int64_t channels = x.shape()[1];
  const std::int64_t height = x.shape()[2];
  const std::int64_t width = x.shape()[3];
  const std::int64_t count = rois.shape()[0];
  const std::int64_t out_h = y.shape()[2];
  const std::int64_t out_w = y.shape()[3];
  const std::int64_t ratio = node.attributes.get_int("sampling_ratio", 0);
  const double scale = node.attributes.get_float("spatial_scale", 1.0f);
  const bool max_mode = node.attributes.get_string("mode", "avg") == "max";
  const std::string transform = node.attributes.get_string(
      "coordinate_transformation_mode", graph.opset >= 16 ? "half_pixel" : "output_half_pixel");
  const bool half_pixel = transform == "half_pixel";
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  for (std::int64_t n = 0; n < count; ++n) {
    const std::int64_t batch = batch_indices.int_at(n);
    if (batch < 0 || batch >= batches) {
      throw Error(fmt::format("batch index {} of region {} is outside [0, {})", batch, n, batches),
                  {.node = node.name});
    }
  }
#pragma omp parallel for num_threads(loop_threads(count* channels, out_h* out_w * 4, threads)) \
    schedule(static)
  for (std::int64_t nc = 0; nc < count * channels; ++nc) {
    const std::int64_t n = nc / channels;
    const std::int64_t c = nc % channels;
    const double offset = half_pixel ? 0.5 : 0.0;
    const double x1 = rois.number_at(n * 4) * scale - offset;
    const double y1 = rois.number_at(n * 4 + 1) * scale - offset;
    const double x2 = rois.number_at(n * 4 + 2) * scale - offset;
    const double y2 = rois.number_at(n * 4 + 3) * scale - offset;
    double roi_w = x2 - x1;
    double roi_h = y2 - y1;
    if (!half_pixel) {
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    const double bin_h = roi_h / static_cast<double>(out_h);
    const double bin_w = roi_w / static_cast<double>(out_w);
    const std::int64_t grid_h = ratio > 0 ? ratio : static_cast<std::int64_t>(std::ceil(bin_h));
    const std::int64_t grid_w = ratio > 0 ? ratio : static_cast<std::int64_t>(std::ceil(bin_w));
    const double points = static_cast<double>(std::max<std::int64_t>(grid_h * grid_w, 1));
    const float* image = xd + (batch_indices.int_at(n) * channels + c) * height * width;
    float* out = yd + nc * out_h * out_w;
    for (std::int64_t ph = 0; ph < out_h; ++ph) {
      for (std::int64_t pw = 0; pw < out_w; ++pw) {
        double sum = 0;
        double best = 0;
        bool any = false;
        for (std::int64_t iy = 0; iy < grid_h; ++iy) {
          const double sy = y1 + static_cast<double>(ph) * bin_h +
                            (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
          for (std::int64_t ix = 0; ix < grid_w; ++ix) {
            const double sx = x1 + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
            const Sample s = sample_at(sy, sx, height, width);
            if (!s.inside) {
              any = true;
              continue;
            }
            if (max_mode) {
              double value = 0;
              for (int k = 0; k < 4; ++k)
                value = std::max(value, static_cast<double>(s.weights[k] * image[s.offsets[k]]));
              best = any ? std::max(best, value) : value;
              any = true;
            } else {
              for (int k = 0; k < 4; ++k) sum += s.weights[k] * image[s.offsets[k]];
            }
          }
        }
        out[ph * out_w + pw] = static_cast<float>(max_mode ? best : sum / points);
      }
    }
  }
}

bool check_roi_align(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 3 || node.outputs.size() != 1) return false;
  if (!float32_io(graph, node, 2)) return false;
  const TensorType& x = graph.type(node.input(0));
  const TensorType& rois = graph.type(node.input(1));
  const TensorType& indices = graph.type(node.input(2));
  if (x.rank() != 4 || rois.rank() != 2 || rois.shape[1] != 4) return false;
  if (indices.dtype != DType::kInt64 || indices.rank() != 1 || indices.shape[0] != rois.shape[0])
    return false;
  const std::string mode = node.attributes.get_string("mode", "avg");
  const std::string transform =
      node.attributes.get_string("coordinate_transformation_mode", "half_pixel");
  return (mode == "avg" || mode == "max") &&
         (transform == "half_pixel" || transform == "output_half_pixel");
}

constexpr OpEntry kRoiAlignOps[] = {
    {"RoiAlign", run_roi_align, check_roi_align},
};

}  // namespace

std::span<const OpEntry> roi_align_ops() { return kRoiAlignOps; }

}  // namespace collage::native
