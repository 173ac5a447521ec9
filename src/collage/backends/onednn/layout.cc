#include "collage/backends/onednn/layout.h"

#include <optional>
#include <string>

namespace collage::onednn {

memory::dims to_dims(const Shape& shape) {
  if (shape.empty()) return {1};
  return memory::dims(shape.begin(), shape.end());
}

std::int64_t dims_numel(const memory::dims& dims) {
  std::int64_t numel = 1;
  for (memory::dim d : dims) numel *= d;
  return numel;
}

memory::dims align_rank(const memory::dims& dims, int rank) {
  if (static_cast<int>(dims.size()) >= rank) return dims;
  memory::dims aligned(static_cast<std::size_t>(rank) - dims.size(), 1);
  aligned.insert(aligned.end(), dims.begin(), dims.end());
  return aligned;
}

memory::dims row_major_strides(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::optional<memory::data_type> onednn_data_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return memory::data_type::f32;
    case DType::kInt8:
      return memory::data_type::s8;
    case DType::kUInt8:
      return memory::data_type::u8;
    case DType::kInt32:
      return memory::data_type::s32;
    default:
      return std::nullopt;
  }
}

memory::desc plain_desc(const memory::dims& dims, memory::data_type type) {
  return memory::desc(dims, type, row_major_strides(dims));
}

memory::desc any_desc(const memory::dims& dims, memory::data_type type) {
  return memory::desc(dims, type, memory::format_tag::any);
}

memory::desc strided_desc(const memory::dims& dims, const memory::dims& strides,
                          memory::data_type type) {
  return memory::desc(dims, type, strides);
}

memory::desc edge_desc(const Shape& shape, EdgeLayout layout, memory::data_type type) {
  const memory::dims dims = to_dims(shape);
  switch (layout) {
    case EdgeLayout::kPlain:
      return plain_desc(dims, type);
    case EdgeLayout::kChannelsLast:
      return memory::desc(dims, type, memory::format_tag::nhwc);
    case EdgeLayout::kBlocked8:
      return memory::desc(dims, type, memory::format_tag::nChw8c);
    case EdgeLayout::kBlocked16:
      return memory::desc(dims, type, memory::format_tag::nChw16c);
  }
  return plain_desc(dims, type);
}

namespace {

// A typical 3x3 convolution (64 channels, 28x28) with activations in `md`
// (any_desc: oneDNN's choice), as the machine would run it.
dnnl::convolution_forward::primitive_desc probe_convolution(const dnnl::engine& engine,
                                                            const memory::desc& md) {
  const memory::dims weights = {64, 64, 3, 3};
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                       dnnl::algorithm::convolution_direct, md, any_desc(weights),
                                       md, {1, 1}, {1, 1}, {1, 1});
  return dnnl::convolution_forward::primitive_desc(desc, engine);
}

}  // namespace

bool is_generated_kernel(const dnnl::primitive_desc& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.rfind("jit", 0) == 0 || impl.rfind("brg", 0) == 0;
}

EdgeLayout preferred_edge_layout(const dnnl::engine& engine) {
  const memory::desc chosen = probe_convolution(engine, any_desc({1, 64, 28, 28})).src_desc();
  return laid_out_edge_layout(chosen).value_or(EdgeLayout::kPlain);
}

std::optional<EdgeLayout> other_compute_layout(const dnnl::engine& engine, EdgeLayout preferred) {
  for (EdgeLayout layout :
       {EdgeLayout::kBlocked16, EdgeLayout::kBlocked8, EdgeLayout::kChannelsLast}) {
    if (layout == preferred) continue;
    try {
      if (is_generated_kernel(probe_convolution(engine, edge_desc({1, 64, 28, 28}, layout)))) {
        return layout;
      }
    } catch (const dnnl::error&) {
      // No kernel for this layout here.
    }
  }
  return std::nullopt;
}

std::optional<EdgeLayout> laid_out_edge_layout(const memory::desc& desc) {
  const memory::dims dims = desc.dims();
  if (dims.size() != 4) return std::nullopt;
  const Shape shape(dims.begin(), dims.end());
  for (EdgeLayout layout :
       {EdgeLayout::kChannelsLast, EdgeLayout::kBlocked16, EdgeLayout::kBlocked8}) {
    if (desc == edge_desc(shape, layout, desc.data_type())) return layout;
  }
  return std::nullopt;
}

memory::desc layout_like(const memory::desc& like, const memory::dims& dims,
                         memory::data_type type) {
  if (std::optional<EdgeLayout> layout = laid_out_edge_layout(like); layout && dims.size() == 4) {
    return edge_desc(Shape(dims.begin(), dims.end()), *layout, type);
  }
  return plain_desc(dims, type);
}

bool is_plain(const memory::desc& desc) {
  const dnnl_memory_desc_t& md = desc.data;
  if (md.format_kind != dnnl_blocked) return false;
  if (md.offset0 != 0 || md.format_desc.blocking.inner_nblks != 0) return false;
  // A stride of a size-1 dimension never matters; every other stride must be
  // that of the dense row-major layout.
  std::int64_t expected = 1;
  for (int i = md.ndims - 1; i >= 0; --i) {
    if (md.padded_dims[i] != md.dims[i]) return false;
    if (md.dims[i] != 1 && md.format_desc.blocking.strides[i] != expected) return false;
    expected *= md.dims[i];
  }
  return true;
}

}  // namespace collage::onednn
